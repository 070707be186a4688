"""The pages show the one figure of cost: the run page's header and the Batch page's "Spent so far" read what the
calls cost (failed and cut-off calls at their estimate), summed here from the rows; the Metrics page's total too.
"""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from santa_core.models import EscalationReason, RunStatus
from storage.runs import RunStore
from tests.storage.test_one_cost import PAID, batch_with_runs, costly_run, own_fix_calls, summed
from tests.support.batch_page import open_batch
from tests.support.runs import escalated
from tests.ui.test_run_page import as_person, texts
from ui import components


def settled(repo: RunStore, run_id: int) -> int:
    """The run escalated, so the page's desk has nothing to resume (no call to the stand-in model)."""
    assert repo.transition(run_id, {RunStatus.RUNNING}, escalated(EscalationReason.REVIEWER_ERROR), "gate")
    return run_id


def test_the_run_page_shows_failed_and_cut_off_calls_at_their_estimate(desk_env: RunStore) -> None:
    run_id = settled(desk_env, costly_run(desk_env))
    expected = summed(desk_env, "run_id = :r", r=run_id)
    assert expected == pytest.approx(PAID)
    shown = texts(as_person(None, run_id))
    assert f"{components.usd(expected)} spent" in shown
    assert "1 call(s) were cut off before their answer was stored" in shown


def test_the_metrics_page_total_is_the_same_figure(desk_env: RunStore) -> None:
    run_id = settled(desk_env, costly_run(desk_env))
    at = AppTest.from_file("../../app.py", default_timeout=30)
    at.run()
    at.switch_page("pages/metrics.py").run()
    assert not at.exception, at.exception
    values = [m.value for m in at.metric]
    assert components.usd(summed(desk_env, "run_id = :r", r=run_id)) in values, values


def test_the_batch_page_spent_is_its_runs_calls_and_its_own_fix_calls(desk_env: RunStore) -> None:
    store, batch_id, runs = batch_with_runs(desk_env)
    for run_id in runs:
        settled(desk_env, run_id)
    own_fix_calls(desk_env, batch_id)
    expected = summed(desk_env, f"run_id IN ({', '.join(map(str, runs))})") + summed(
        desk_env, "batch_id = :b", b=batch_id
    )
    at = open_batch(batch_id)
    figures = {m.label: m for m in at.metric}
    spent = figures["Spent so far (actual)"]
    assert spent.value == components.usd(expected)
    assert "fixes" in spent.help and "full verification is all 4 items" in spent.help.lower()
