"""The Escalations page never mixes two runs and decides nothing by default: the "Escalated run" picker shows
the run whose detail is open below it after a resolve, a filter change and a reload; no resolution is chosen
until the person picks one; the evidence's instructions name what this page offers."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from santa_core import words
from santa_core.models import FixEdit, RunStatus
from santa_core.run import actions
from storage.runs import RunStore
from tests.ui.test_app import plain, texts
from tests.ui.test_escalation_queue import escalate, item_id, open_as, opened
from tests.ui.test_fix_proposal import OUTPUT, drive
from tests.ui.test_run_page import EDITOR, as_person


def label(repo: RunStore, run_id: int) -> str:
    """The picker's option for a run, built from the stored escalation (not by the page's code)."""
    reason = next(e.reason for e in repo.list_escalations(status="open") if e.run_id == run_id)
    return f"Run #{run_id} · {words.reason(reason)}"


def browser_shows(at: AppTest, before: str | None) -> str:
    """What a browser shows in the picker after this run of the page. A keyed select box keeps its element from
    run to run, and the browser keeps the value it showed unless the page sends one (`set_value`); the first
    time it shows the default option."""
    proto = at.selectbox(key="esc_pick").proto
    if proto.set_value:
        return proto.raw_value
    return before if before is not None else proto.options[proto.default]


def test_after_a_resolve_the_picker_shows_the_run_whose_detail_is_open(desk_env: RunStore) -> None:
    first, second = escalate(desk_env), escalate(desk_env, rubric="content")
    at = open_as("admin@example.com")
    shown = browser_shows(at, None)
    assert shown == label(desk_env, first) and opened(at) == first
    at.selectbox(key="esc_pick").set_value(second).run()
    shown = browser_shows(at, shown)
    assert shown == label(desk_env, second) and opened(at) == second
    esc = item_id(desk_env, second)
    at.radio(key=f"res_{esc}").set_value("reject")
    at.text_area(key=f"res_why_{esc}").set_value("Not fit to ship.")
    at.button(key=f"res_go_{esc}").click().run()
    assert not at.exception, at.exception
    assert desk_env.load_run(second).state.status == RunStatus.RESOLVED_REJECTED
    shown = browser_shows(at, shown)
    assert opened(at) == first and shown == label(desk_env, first)  # not "Run #<second>" above run #<first>
    at.run()  # a reload of the same session
    assert opened(at) == first and browser_shows(at, shown) == label(desk_env, first)


def test_after_a_filter_change_the_picker_shows_the_run_whose_detail_is_open(desk_env: RunStore) -> None:
    first, second = escalate(desk_env), escalate(desk_env, rubric="content")
    at = open_as("admin@example.com")
    at.selectbox(key="esc_pick").set_value(second).run()
    shown = browser_shows(at, None)
    at.selectbox(key="esc_f_rubric").set_value("general").run()  # filters the open run out
    assert opened(at) == first and browser_shows(at, shown) == label(desk_env, first)


def test_no_resolution_is_chosen_until_the_person_picks_one(desk_env: RunStore) -> None:
    run_id = escalate(desk_env)
    esc = item_id(desk_env, run_id)
    at = open_as("officer@example.com")
    assert at.radio(key=f"res_{esc}").value is None  # "Ship as is" is not preselected
    at.text_area(key=f"res_why_{esc}").set_value("Looks fine to me.")
    at.button(key=f"res_go_{esc}").click().run()
    assert any(
        "Pick a resolution first" in plain(e.value) and "nothing was recorded" in plain(e.value) for e in at.error
    )
    assert desk_env.load_run(run_id).state.status == RunStatus.ESCALATED  # nothing shipped, nothing recorded
    assert desk_env.get_run_view(run_id).rounds[-1].decisions == []
    assert at.text_area(key=f"res_why_{esc}").value == "Looks fine to me."  # what was typed stays
    at.radio(key=f"res_{esc}").set_value("ship_as_is")
    at.button(key=f"res_go_{esc}").click().run()
    assert desk_env.load_run(run_id).state.status == RunStatus.RESOLVED_SHIPPED


def test_the_evidence_says_what_this_page_offers(desk_env: RunStore) -> None:
    """A partial proposal's warning says what the page it is on offers: the approval's box on the run page while
    the fix awaits approval; on the Escalations page the resolution that opens a box with the text; nothing
    where neither is shown (the run history)."""
    run_id = drive(desk_env, "a claim that is not in the text", [FixEdit(issue=0, before="DEFECT", after="2018")])
    box = "fix it in the box below, or reject"
    run_page = as_person(EDITOR, run_id)
    assert box in texts(run_page) and run_page.text_area  # the approval's box is there
    actions.reject_fix(desk_env, run_id, EDITOR, "Issue 2 needs a person.")
    assert desk_env.load_run(run_id).state.status == RunStatus.ESCALATED
    at = open_as(None)
    evidence, history = [plain(w.value) for w in at.warning if "Partial proposal" in w.value]
    assert box not in evidence and box not in history
    assert f'pick "{words.RESOLUTION["rereview"]}" under Resolve below' in evidence
    assert history.endswith("Approving it sends the output with that defect to fresh reviewers.")
    esc = item_id(desk_env, run_id)
    at.radio(key=f"res_{esc}").set_value("rereview").run()  # and that choice does open a box with the text
    assert at.text_area(key=f"res_text_{esc}").value == OUTPUT
    assert box not in texts(as_person(EDITOR, run_id))  # the run page of the escalated run shows no such box


def test_the_run_pages_link_opens_that_runs_escalation_not_the_first_listed(desk_env: RunStore) -> None:
    """Review A of issue 34: the escalated run's page linked to the queue, which opened the oldest escalation. Its
    link carries the run (`?run=`): the page opens that run's escalation, picker and detail alike."""
    first, second = escalate(desk_env), escalate(desk_env, rubric="content")
    run_page = as_person(None, second)
    links = [e.proto for e in run_page.get("page_link") if e.proto.label == "Open this escalation"]
    assert links and all(f"run={second}" in str(link) for link in links), links  # the bar's and the panel's
    at = AppTest.from_file("../../app.py", default_timeout=30)
    at.query_params["run"] = str(second)
    at.run()
    at.switch_page("pages/escalations.py").run()
    assert not at.exception, at.exception
    assert opened(at) == second and browser_shows(at, None) == label(desk_env, second)
    at.selectbox(key="esc_pick").set_value(first).run()  # the person then picks another: the link does not win
    assert opened(at) == first
