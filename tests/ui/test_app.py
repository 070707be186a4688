"""AppTest drives the pages like a user, against a loopback Messages API and a real SQLite file."""

from __future__ import annotations

import re
import time
from collections.abc import Callable

import pytest
from sqlmodel import Session
from streamlit.testing.v1 import AppTest

from santa_core.models import RunStatus
from santa_core.reports.metrics import MetricsFilter
from storage.runs import RunStore
from storage.tables import RunRow

SPEC = "Announce the Acme rocket in two sentences. Mention the 2018 launch."
CLEAN = "Acme's rocket launched in 2018. It is ready for you."
DEFECTIVE = "Acme's rocket launched in DEFECT. It is ready for you."
UNFIXABLE = "Acme's rocket is UNFIXABLE and launched in DEFECT."


def open_app(page: str | None = None, run_id: int | None = None) -> AppTest:
    at = AppTest.from_file("../../app.py", default_timeout=30)
    if run_id is not None:
        at.query_params["run"] = str(run_id)
    at.run()
    if page:
        at.switch_page(page).run()
    assert not at.exception, at.exception
    return at


def wait_for(
    repo: RunStore, run_id: int, done: Callable[[RunStatus], bool], at: AppTest | None = None, within_s: float = 30
) -> RunStatus:
    """Poll the database (and re-run the page, as the polling fragment would) until done."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        status = repo.load_run(run_id).state.status
        if done(status):
            if at is not None:
                at.run()
            return status
        time.sleep(0.1)
    raise AssertionError(f"run {run_id} stuck in {repo.load_run(run_id).state.status}")


def start_run(at: AppTest, output: str, **choices: str) -> None:
    at.text_area(key="new_spec").set_value(SPEC)
    at.text_area(key="new_output").set_value(output)
    for key, value in choices.items():
        at.selectbox(key=key).set_value(value)
    at.button(key="start_review").click().run()
    assert not at.exception, at.exception


def plain(value: object) -> str:
    """Markdown source as a reader sees it: backslash escapes removed."""
    return re.sub(r"\\(.)", r"\1", str(value))


def texts(at: AppTest) -> str:
    """Everything the page shows as text (escapes removed), for loose assertions."""
    parts = [
        e.value
        for kind in ("title", "subheader", "markdown", "text", "caption", "success", "error", "warning", "info", "code")
        for e in getattr(at, kind)
    ]
    return "\n".join(plain(p) for p in parts)


def latest_run(repo: RunStore) -> int:
    return repo.list_runs(limit=1)[0].id


def test_every_page_renders_with_an_empty_history(desk_env: RunStore) -> None:
    for page in ("pages/review.py", "pages/batch.py", "pages/runs.py", "pages/escalations.py", "pages/settings.py"):
        open_app(page)


def test_empty_and_oversized_input_get_specific_errors_and_keep_the_text(desk_env: RunStore) -> None:
    at = open_app()
    at.text_area(key="new_spec").set_value("   ")
    at.text_area(key="new_output").set_value("x" * 200_001)
    at.button(key="start_review").click().run()
    errors = [e.value for e in at.error]
    assert any("Spec is empty" in e for e in errors)
    assert any("200,001 characters" in e for e in errors)
    assert at.text_area(key="new_output").value == "x" * 200_001  # nothing lost
    assert desk_env.list_runs() == []


def test_control_characters_get_a_specific_error_and_keep_the_text(desk_env: RunStore) -> None:
    at = open_app()
    at.text_area(key="new_spec").set_value("Announce the launch.")
    at.text_area(key="new_output").set_value("Launched in 2018.\x1b[2J Order now.")
    at.button(key="start_review").click().run()
    assert any("contains a control character (\\x1b) at character 18" in e.value for e in at.error)
    assert at.text_area(key="new_output").value == "Launched in 2018.\x1b[2J Order now."  # nothing lost
    assert desk_env.list_runs() == []


def test_naughty_round_edited_approval_then_nice(desk_env: RunStore) -> None:
    at = open_app()
    start_run(at, DEFECTIVE)
    run_id = latest_run(desk_env)
    wait_for(desk_env, run_id, lambda s: s == RunStatus.AWAITING_APPROVAL, at)
    shown = texts(at)
    assert "NAUGHTY" in shown and "B and C" in str([d.value for d in at.dataframe])
    assert any("+" in c.value and "fact" in c.value for c in at.code)  # the diff of the proposal
    edited = "Acme's rocket launched in 2018. It is ready for you today."
    at.text_area(key=f"edit_{run_id}_1").set_value(edited)
    at.text_input(key=f"reason_{run_id}_1").set_value("use the real year")
    at.button(key="approve_fix").click().run()  # one click, straight after typing
    assert not any("decided by someone else" in w.value for w in at.warning)  # mine counted
    wait_for(desk_env, run_id, lambda s: s == RunStatus.SHIPPED, at)
    view = desk_env.get_run_view(run_id)
    assert view.final_output == edited
    assert [d.action for d in view.rounds[0].decisions] == ["edit"]
    assert "NICE" in texts(at) and any(c.value == edited for c in at.code)


def test_generation_cost_is_stored_and_compared_on_the_metrics_page(desk_env: RunStore) -> None:
    at = open_app()
    assert at.number_input(key="new_generation_cost").value is None  # optional: empty by default
    at.number_input(key="new_generation_cost").set_value(0.25)
    start_run(at, CLEAN)
    run_id = latest_run(desk_env)
    wait_for(desk_env, run_id, lambda s: s == RunStatus.SHIPPED, at)
    with Session(desk_env.engine) as s:
        assert s.get(RunRow, run_id).generation_cost_usd == 0.25
    h = desk_env.metrics.report(MetricsFilter()).headline
    assert h.generation_runs == 1 and h.review_to_generation == pytest.approx(h.review_cost_usd / 0.25)
    assert h.review_cost_usd > 0  # the loopback reviewers' answers are priced
    metrics = open_app("pages/metrics.py")
    ratio = next(m for m in metrics.metric if "Review ÷ generation cost" in (m.label, m.help.split(".**")[0][2:]))
    assert ratio.value == f"{h.review_cost_usd / 0.25:.3g}" and "over 1 run with a generation cost" in ratio.help


def test_reload_on_run_url_shows_the_same_run(desk_env: RunStore) -> None:
    at = open_app()
    start_run(at, CLEAN)
    run_id = latest_run(desk_env)
    wait_for(desk_env, run_id, lambda s: s == RunStatus.SHIPPED)
    fresh = open_app(run_id=run_id)  # a new tab on ?run=<id>
    assert f"Run #{run_id}" in texts(fresh) and "NICE" in texts(fresh)


def test_escalates_after_three_rounds_and_is_resolved(desk_env: RunStore) -> None:
    at = open_app()
    start_run(at, UNFIXABLE)
    run_id = latest_run(desk_env)
    for _rnd in (1, 2):
        wait_for(desk_env, run_id, lambda s: s == RunStatus.AWAITING_APPROVAL, at)
        at.button(key="approve_fix").click().run()
        assert not at.exception, at.exception
    wait_for(desk_env, run_id, lambda s: s == RunStatus.ESCALATED, at)
    assert desk_env.load_run(run_id).state.round == 3
    esc = open_app("pages/escalations.py")
    shown = str([d.value for d in esc.dataframe])
    assert (
        esc.dataframe[0].value["reason"].tolist() == ["still NAUGHTY after the last round"] and "round_cap" not in shown
    )
    assert "Still NAUGHTY after the last allowed round" in texts(esc)  # the open escalation says why, as a sentence
    shipping = desk_env.load_round(run_id, 3).output_text
    assert any(c.value == shipping for c in esc.code)  # the officer sees exactly what would ship
    esc.radio(key=f"res_{desk_env.list_escalations()[0].id}").set_value("ship_as_is")
    item_id = desk_env.list_escalations()[0].id
    esc.button(key=f"res_go_{item_id}").click().run()
    assert any("justification is required" in e.value for e in esc.error)
    esc.text_area(key=f"res_why_{item_id}").set_value("Legal confirmed the wording.")
    esc.button(key=f"res_go_{item_id}").click().run()
    assert not esc.exception, esc.exception
    view = desk_env.get_run_view(run_id)
    assert view.status == RunStatus.RESOLVED_SHIPPED
    assert view.escalation.justification == "Legal confirmed the wording."


def test_person_reviewer_run(desk_env: RunStore) -> None:
    at = open_app()
    start_run(at, CLEAN, new_reviewer_c="person")
    run_id = latest_run(desk_env)
    wait_for(desk_env, run_id, lambda s: s == RunStatus.AWAITING_HUMAN_REVIEW, at)
    shown = texts(at)
    assert "run history stays hidden" in shown and "PASS" not in [e.value for e in at.success]  # blind to B
    fill_person_review(at, "C")
    wait_for(desk_env, run_id, lambda s: s == RunStatus.SHIPPED, at)
    assert desk_env.get_run_view(run_id).rounds[0].reviews["C"].reviewer.startswith("person:")


def test_runs_page_lists_and_opens_a_run(desk_env: RunStore) -> None:
    at = open_app()
    start_run(at, CLEAN)
    run_id = latest_run(desk_env)
    wait_for(desk_env, run_id, lambda s: s == RunStatus.SHIPPED)
    runs = open_app("pages/runs.py")
    link = f"./review?run={run_id}"
    assert link in runs.dataframe[0].value["run"].tolist()  # the run's number is the link that opens it
    opened = open_app("pages/review.py", run_id=int(link.rsplit("=", 1)[1]))  # where the link goes
    assert f"Run #{run_id}" in texts(opened)


def test_same_model_warning_and_no_key_mode(desk_env: RunStore, monkeypatch: pytest.MonkeyPatch) -> None:
    at = open_app()
    at.selectbox(key="new_reviewer_b").set_value("claude-sonnet-5-5")
    at.selectbox(key="new_reviewer_c").set_value("claude-sonnet-5-5").run()
    assert any("both claude-sonnet-5-5" in plain(w.value) for w in at.warning)
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    at = open_app()
    assert any("No model provider key: person reviewers only" in e.label for e in at.expander)
    assert any("No Anthropic API key" in m.value for m in at.markdown)  # how to add one, folded under it
    assert at.selectbox(key="new_reviewer_b").options == ["person"]


def test_settings_page_saves_defaults_and_never_shows_the_key(
    desk_env: RunStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-secret-value")
    at = open_app("pages/settings.py")
    assert "present" in texts(at) and "sk-ant-secret-value" not in texts(at)
    at.text_input(key="set_name").set_value("Ann Editor")
    at.number_input(key="set_rounds").set_value(2)
    at.button(key="set_save").click().run()
    assert desk_env.get_settings()["display_name"] == "Ann Editor"
    assert desk_env.get_settings()["max_rounds"] == 2
    assert desk_env.get_settings()["screen"] is True  # the injection screen is on by default


def test_the_injection_screen_is_a_setting_the_runner_follows(
    desk_env: RunStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    from desk.wiring import model_screen

    screen_now = model_screen(desk_env)
    assert screen_now().name == "claude-haiku-5-5"  # a key is present (the loopback API's)
    at = open_app("pages/settings.py")
    at.selectbox(key="set_screen_model").set_value("claude-sonnet-5-5").run()
    at.button(key="set_save").click().run()
    assert screen_now().name == "claude-sonnet-5-5"
    at.toggle(key="set_screen").set_value(False).run()
    assert at.selectbox(key="set_screen_model").disabled
    at.button(key="set_save").click().run()
    assert desk_env.get_settings()["screen"] is False and screen_now() is None
    at.toggle(key="set_screen").set_value(True).run()
    at.button(key="set_save").click().run()
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    failed = screen_now().screen("any text", "spec and output")  # no key: the screen fails closed, never skipped
    assert failed.verdict == "error" and "ANTHROPIC_API_KEY" in failed.error


def test_unknown_run_number_gets_a_message_not_a_crash(desk_env: RunStore) -> None:
    at = open_app(run_id=999)
    assert any("Run #999 does not exist" in e.value for e in at.error)
    at = open_app(run_id=None)
    at.query_params["run"] = "abc"
    at.run()
    assert not at.exception and any("is not a run number" in e.value for e in at.error)


def test_markdown_in_untrusted_text_is_shown_literally(desk_env: RunStore) -> None:
    """Model and user text never becomes an image, a link or HTML on the page."""
    import re

    payload = "Buy ![x](http://127.0.0.1:9/track) [click](javascript:alert(1)) <img src=x onerror=alert(1)> DEFECT"
    at = open_app()
    at.selectbox(key="new_rubric").set_value("compliance").run()
    start_run(at, payload + " risk-free")
    run_id = latest_run(desk_env)
    status = wait_for(desk_env, run_id, lambda s: s in (RunStatus.AWAITING_APPROVAL, RunStatus.ESCALATED), at)
    if status == RunStatus.AWAITING_APPROVAL:
        at.text_input(key=f"reason_{run_id}_1").set_value("see ![y](http://127.0.0.1:9/reason)")
        at.button(key="reject_fix").click().run()
    at.run()
    rendered = [
        e.value for kind in ("markdown", "caption", "error", "warning", "info", "success") for e in getattr(at, kind)
    ]
    assert any("risk" in v for v in rendered)  # the payload did reach markdown-rendering elements…
    for value in rendered:  # …but escaped: no live image/link syntax, no raw tag
        assert not re.search(r"(?<!\\)\]\(", value), value
        assert "<img" not in value, value


def test_key_from_secrets_file_is_picked_up(desk_env: RunStore, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    at = AppTest.from_file("../../app.py", default_timeout=30)
    at.secrets["ANTHROPIC_API_KEY"] = "sk-ant-from-secrets"
    at.run()
    at.switch_page("pages/settings.py").run()
    assert not at.exception
    assert "present" in texts(at) and "sk-ant-from-secrets" not in texts(at)


def test_a_click_on_a_fix_someone_else_decided_is_reported_and_the_text_kept(desk_env: RunStore) -> None:
    from santa_core.run import actions

    at = open_app()
    start_run(at, DEFECTIVE)
    run_id = latest_run(desk_env)
    wait_for(desk_env, run_id, lambda s: s == RunStatus.AWAITING_APPROVAL, at)
    actions.approve_fix(desk_env, run_id, "editor@example.com")  # decided elsewhere first
    mine = "Acme's rocket launched in 2018 — my careful edit."
    at.text_area(key=f"edit_{run_id}_1").set_value(mine)
    at.button(key="approve_fix").click().run()
    assert not at.exception, at.exception
    assert any("decided by someone else" in w.value for w in at.warning)
    assert any(c.value == mine for c in at.code)
    assert [d.actor for d in desk_env.get_run_view(run_id).rounds[0].decisions] == ["editor@example.com"]


def fill_person_review(at: AppTest, slot: str, fail: str | None = None) -> None:
    """Fill one person slot on the run page: all PASS, or FAIL on one criterion with a note (nothing starts judged)."""
    submit = next(b for b in at.button if b.key and b.key.endswith(f"_{slot}_submit"))
    prefix = submit.key.removesuffix("_submit")
    for radio in [r for r in at.radio if r.key and r.key.startswith(f"{prefix}_")]:
        radio.set_value("PASS")
    if fail:
        at.radio(key=f"{prefix}_{fail}").set_value("FAIL")
        at.text_input(key=f"{prefix}_{fail}_detail").set_value("the year is wrong")
    submit.click().run()
    assert not at.exception, at.exception


def test_without_a_key_people_review_fix_and_ship(desk_env: RunStore, monkeypatch: pytest.MonkeyPatch) -> None:
    """No API key: both reviewers and the fix agent are people, and the loop still closes."""
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    at = open_app()
    assert at.selectbox(key="new_fixer").options == ["person"]
    start_run(at, "Acme launched in 2019.")
    run_id = latest_run(desk_env)
    wait_for(desk_env, run_id, lambda s: s == RunStatus.AWAITING_HUMAN_REVIEW, at)
    fill_person_review(at, "B", fail="factual_accuracy")
    fill_person_review(at, "C", fail="factual_accuracy")
    wait_for(desk_env, run_id, lambda s: s == RunStatus.AWAITING_APPROVAL, at)
    assert "Fix the flagged issues" in texts(at)
    at.text_area(key=f"edit_{run_id}_1").set_value("Acme launched in 2018.")
    at.button(key="approve_fix").click().run()
    wait_for(desk_env, run_id, lambda s: s == RunStatus.AWAITING_HUMAN_REVIEW, at)
    fill_person_review(at, "B")
    fill_person_review(at, "C")
    wait_for(desk_env, run_id, lambda s: s == RunStatus.SHIPPED, at)
    view = desk_env.get_run_view(run_id)
    assert view.final_output == "Acme launched in 2018." and len(view.rounds) == 2
    assert view.rounds[0].gate.issues[0].flagged_by == "both"
    assert view.total_cost_usd == 0
    # The single local user may fill both slots (a keyless single-user install), and the page says so.
    assert {o.reviewer for o in view.rounds[0].reviews.values()} == {"person:local"}
    at.run()
    assert "not independent" in texts(at)


def test_the_review_form_keeps_its_texts_across_a_page_visit_until_a_run_starts(desk_env: RunStore) -> None:
    at = open_app()
    at.text_area(key="new_spec").set_value(SPEC)
    at.text_area(key="new_output").set_value(CLEAN).run()
    at.switch_page("pages/runs.py").run()
    at.switch_page("pages/review.py").run()
    assert (at.text_area(key="new_spec").value, at.text_area(key="new_output").value) == (SPEC, CLEAN)
    at.button(key="start_review").click().run()
    assert not at.exception, at.exception
    at.button(key="new_review").click().run()  # the run page's "← New review"
    assert (at.text_area(key="new_spec").value, at.text_area(key="new_output").value) == ("", "")
