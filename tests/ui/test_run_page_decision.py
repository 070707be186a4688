"""The run page is built around its decision: the bar under the run's title says what the run needs and from whom
(and links down to the action only for who may take it, and never counts a blind review); a reviewer's card puts
its failed criteria first by name, their evidence whole, and folds the passed ones; a reviewer's unreadable answer
is a sentence with the raw error in a detail.

The bar's position inside the first 1,280 × 800 window is measured in a real browser (tests/e2e/test_decision_desk.py, at 1,280 × 800 and 1,024 × 768).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from streamlit.testing.v1 import AppTest

from santa_core.models import CheckResult, Review, ReviewIssue, ReviewOutcome, ReviewStatus, RunState, RunStatus
from santa_core.run import actions
from storage.runs import RunStore
from tests.ui import test_run_page as run_page
from tests.ui.test_app import plain
from tests.ui.test_run_page import CLEAN, EDITOR, MODEL_B, MODEL_C, OFFICER, SPEC, VIEWER, as_person, driven_run
from ui.decision_bar import DECIDE_ANCHOR
from ui.review_cards import findings

awaiting, shipped = run_page.awaiting, run_page.shipped  # the fixtures (imported names would trip ruff's F811)

ALERTS = ("success", "info", "warning", "error")


def in_order(node) -> Iterator:  # noqa: ANN001 - an AppTest node
    """The page's elements in the order they are drawn (a block, like an expander, before what it holds)."""
    yield node
    children = getattr(node, "children", None)
    for key in sorted(children or {}):
        yield from in_order(children[key])


def after_title(at: AppTest, n: int = 1):  # noqa: ANN201 - an AppTest node
    """The `n`th element drawn after the run's title."""
    drawn = list(in_order(at.main))
    title = next(i for i, e in enumerate(drawn) if e.type == "subheader" and plain(e.value).startswith("Run #"))
    return drawn[title + n]


def bar(at: AppTest) -> tuple[str, str]:
    """(kind, text) of the element drawn right after the run's title: the decision bar."""
    after = after_title(at)
    assert after.type == "alert" or after.type in ALERTS, f"after the title comes {after.type}: {after}"
    kind = next(k for k in ALERTS if any(e is after for e in getattr(at, k)))
    return kind, plain(after.value)


JUMP = f"(#{DECIDE_ANCHOR})"


# --- the bar, state by state --------------------------------------------------------------------


def test_a_fix_awaiting_approval_asks_the_editor_and_links_down_to_the_decision(
    desk_env: RunStore, awaiting: int
) -> None:
    at = as_person(EDITOR, awaiting)
    kind, text = bar(at)
    issues = desk_env.get_run_view(awaiting).rounds[0].gate.issues
    assert kind == "warning"
    assert text.startswith("Your decision on the fix is needed — ")
    assert (
        f"of {len(issues)} issue" in text or f"all {len(issues)} issues fixed" in text or "the issue is fixed" in text
    )
    assert text.endswith(f"**[Decide ↓]{JUMP}**")
    anchors = [h for h in at.subheader if h.proto.anchor == DECIDE_ANCHOR]
    assert len(anchors) == 1  # the link lands on the rule above the actions, below the round


def test_a_partial_proposal_says_how_many_issues_it_fixes(desk_env: RunStore) -> None:
    from santa_core.models import FixEdit
    from tests.ui.test_fix_proposal import drive

    run_id = drive(desk_env, "a claim that is not in the text", [FixEdit(issue=0, before="DEFECT", after="2018")])
    assert bar(as_person(EDITOR, run_id)) == (
        "warning",
        f"Your decision on the fix is needed — 1 of 2 issues fixed. **[Decide ↓]{JUMP}**",
    )


def test_a_person_fix_agent_is_asked_for_the_fix_itself(desk_env: RunStore) -> None:
    from desk import open_desk
    from tests.ui.test_run_page import DEFECTIVE

    desk = open_desk(str(desk_env.engine.url), mark_interrupted=False)
    try:
        run_id = desk.runs.create_run(
            SPEC, DEFECTIVE, desk.rubrics.resolved("general"), MODEL_B, MODEL_C, "person", created_by=EDITOR
        )
        assert desk.runner.execute(run_id).status == RunStatus.AWAITING_APPROVAL
    finally:
        desk.close()
    kind, text = bar(as_person(EDITOR, run_id))
    assert kind == "warning" and text.startswith("A person's fix is needed: ")
    assert text.endswith(f" to fix by hand. **[Fix it ↓]{JUMP}**")


def test_a_viewer_is_told_who_decides_and_gets_no_link(desk_env: RunStore, awaiting: int) -> None:
    at = as_person(VIEWER, awaiting)
    kind, text = bar(at)
    assert kind == "info"
    assert text.startswith("A decision on the fix is needed — ") and text.endswith("; an editor or an admin decides.")
    assert JUMP not in text and not [h for h in at.subheader if h.proto.anchor == DECIDE_ANCHOR]


def test_a_shipped_run_says_so_and_links_to_its_final_output(desk_env: RunStore, shipped: int) -> None:
    kind, text = bar(as_person(None, shipped))
    assert (kind, text) == ("success", f"Shipped: both reviewers passed it in round 1. **[Final output ↓]{JUMP}**")


def test_an_escalated_run_names_who_resolves_it_and_the_page_that_holds_it(desk_env: RunStore, awaiting: int) -> None:
    actions.reject_fix(desk_env, awaiting, EDITOR, "wrong fix")
    at = as_person(OFFICER, awaiting)
    kind, text = bar(at)
    assert (kind, text) == (
        "error",
        "Escalated (fix rejected by a person): a compliance officer or an admin decides on the Escalations page.",
    )
    link = after_title(at, 2)  # right under the bar
    assert (link.type, link.proto.page, link.proto.label) == ("page_link", "escalations", "Open this escalation")


def test_an_open_person_slot_asks_for_the_review_and_counts_no_other_review(desk_env: RunStore) -> None:
    run_id = driven_run(desk_env, CLEAN, reviewer_c="person")
    assert desk_env.load_run(run_id).state.status == RunStatus.AWAITING_HUMAN_REVIEW
    assert desk_env.get_run_view(run_id).rounds[0].reviews.keys() == {"B"}  # B answered: the bar must not say so
    kind, text = bar(as_person(EDITOR, run_id))
    assert (kind, text) == ("warning", f"Person review needed from slot C. **[Review ↓]{JUMP}**")
    kind, text = bar(as_person(VIEWER, run_id))
    assert (kind, text) == (
        "info",
        "Person review needed from slot C; an editor or a compliance officer or an admin fills it.",
    )


def test_a_slot_held_by_a_pending_row_is_still_open_and_keeps_the_other_review_hidden(desk_env: RunStore) -> None:
    run_id = driven_run(desk_env, CLEAN, reviewer_c="person")
    desk_env.save_review(run_id, 1, ReviewOutcome(slot="C", reviewer="person", status=ReviewStatus.PENDING))
    at = as_person(EDITOR, run_id)
    assert bar(at) == ("warning", f"Person review needed from slot C. **[Review ↓]{JUMP}**")
    assert "Hidden until both reviews are in (reviewers judge blind)." in [plain(i.value) for i in at.info]
    assert "PASS" not in [plain(s.value) for s in at.success]  # B's verdict stays blind


def test_a_slot_assigned_to_someone_else_is_named_not_linked(desk_env: RunStore) -> None:
    run_id = driven_run(desk_env, CLEAN, reviewer_c="person", person_c=OFFICER)
    kind, text = bar(as_person(EDITOR, run_id))
    assert kind == "info" and JUMP not in text
    assert (
        text.startswith("Person review needed from slot C. Slot C is assigned to ") and "only they can fill it" in text
    )
    kind, text = bar(as_person(OFFICER, run_id))
    assert (kind, text) == ("warning", f"Person review needed from slot C. **[Review ↓]{JUMP}**")


def test_an_interrupted_run_links_to_resume_for_who_may_and_names_who_may_for_the_others(
    desk_env: RunStore, awaiting: int
) -> None:
    stopped = RunState(status=RunStatus.INTERRUPTED, round=1, note="the server stopped")
    assert desk_env.transition(awaiting, {RunStatus.AWAITING_APPROVAL}, stopped, "system")
    assert bar(as_person(EDITOR, awaiting)) == (
        "warning",
        f"Interrupted: resume it from the last committed step. **[Resume ↓]{JUMP}**",
    )
    assert bar(as_person(VIEWER, awaiting)) == ("info", "Interrupted: an editor or an admin resumes it.")


def test_a_queued_then_running_run_says_what_it_waits_for(desk_env: RunStore) -> None:
    run_id = desk_env.create_run(
        SPEC, CLEAN, desk_env.rubrics.resolved("general"), MODEL_B, MODEL_C, MODEL_B, created_by=EDITOR
    )
    assert bar(as_person(EDITOR, run_id)) == ("info", "Waiting for a worker to start the review.")
    assert desk_env.transition(run_id, {RunStatus.QUEUED}, RunState(status=RunStatus.RUNNING), "worker")
    assert bar(as_person(EDITOR, run_id)) == ("info", "Waiting for reviewers (0 of 2 in).")


# --- review cards --------------------------------------------------------------------------------


def test_a_card_shows_failed_criteria_first_by_name_with_their_evidence_and_folds_the_passed(
    desk_env: RunStore,
) -> None:
    rubric = desk_env.rubrics.resolved("general")
    first, *rest, last = rubric.criteria
    long_detail = "The launch year is given as 2019 while the spec says 2018; " * 4 + "the end of the sentence."
    review = Review(
        verdict="FAIL",
        checks=[CheckResult(criterion=c.id, result="PASS", detail="") for c in [first, *rest]]
        + [CheckResult(criterion=last.id, result="FAIL", detail=long_detail)],
        critical_issues=[ReviewIssue(criterion=last.id, description="Wrong year.", evidence="in 2019")],
        suggestions=[],
    )
    outcome = ReviewOutcome(slot="B", reviewer=MODEL_B, status=ReviewStatus.OK, review=review)
    flagged, passed = findings(outcome, rubric)
    assert [f.criterion for f in flagged] == [last.id]  # the last criterion of the rubric comes first
    assert [f.criterion for f in passed] == [first.id] + [c.id for c in rest]
    at = card_page(outcome, rubric)
    drawn = [(e.type, plain(getattr(e, "value", ""))) for e in in_order(at.main)]
    heading = next(i for i, (_, v) in enumerate(drawn) if last.name in v)
    assert heading < next(i for i, (t, _) in enumerate(drawn) if t == "expander")  # before the fold
    assert long_detail in [v for _, v in drawn]  # whole, not cut
    assert "• Wrong year.\n  “in 2019”" in [v for _, v in drawn]
    names = [m for m in at.markdown if last.name in plain(m.value)]
    assert names and names[0].help == f"Criterion id: `{last.id}`"  # the id in the tooltip, not in the text
    assert last.id not in plain(names[0].value)
    (fold,) = at.expander
    assert fold.label == f"{len(passed)} criteria passed"
    assert [plain(m.value).split("**")[1] for m in fold.markdown] == [first.name] + [c.name for c in rest]


def test_an_unreadable_answer_is_a_sentence_with_the_raw_error_in_a_detail(desk_env: RunStore) -> None:
    raw = "verdict: Input should be 'PASS' or 'FAIL'; checks: Input should be a valid array"
    outcome = ReviewOutcome(
        slot="B",
        reviewer=MODEL_B,
        status=ReviewStatus.ERROR,
        error=raw,
        raw_response='{"verdict": "MAYBE", "checks": {}}',
    )
    at = card_page(outcome, desk_env.rubrics.resolved("general"))
    assert [plain(e.value) for e in at.error] == [
        "Reviewer B's answer could not be read as a verdict: counted as FAIL."
    ]
    (detail,) = at.expander
    assert detail.label == "What went wrong" and [t.value for t in detail.text] == [raw]
    outside = [e for e in in_order(at.main) if e.type != "expander"]
    assert raw not in [getattr(e, "value", None) for e in outside if e not in list(in_order(detail))]


def card_page(outcome: ReviewOutcome, rubric) -> AppTest:  # noqa: ANN001 - a Rubric
    """One review card alone on a page."""

    def script(outcome_json: str, rubric_json: str) -> None:
        from santa_core.models import ReviewOutcome, Rubric
        from ui.review_cards import review_card

        review_card(
            ReviewOutcome.model_validate_json(outcome_json), "B", "a model", Rubric.model_validate_json(rubric_json)
        )

    at = AppTest.from_function(script, args=(outcome.model_dump_json(), rubric.model_dump_json()), default_timeout=30)
    at.run()
    assert not at.exception, at.exception
    return at


def test_the_gate_banner_says_a_reviewer_failure_in_words_and_keeps_the_raw_error_for_the_card(
    desk_env: RunStore,
) -> None:
    from santa_core.run.gate import decide
    from ui.review_cards import worded_gate

    rubric = desk_env.rubrics.resolved("general")
    raw = "verdict: Input should be 'PASS' or 'FAIL'"
    broken = ReviewOutcome(slot="B", reviewer=MODEL_B, status=ReviewStatus.ERROR, error=raw, raw_response="{}")
    fine = ReviewOutcome(
        slot="C",
        reviewer="claude-haiku-5-5",
        status=ReviewStatus.OK,
        review=Review(
            verdict="PASS",
            checks=[CheckResult(criterion=c.id, result="PASS") for c in rubric.criteria],
            critical_issues=[],
            suggestions=[],
        ),
    )
    gate = decide(broken, fine, [], rubric.criterion_ids())
    assert any(raw in r for r in gate.reasons)  # what the gate stores
    shown = worded_gate(gate, {"B": broken, "C": fine})
    assert shown.reasons == ["Reviewer B's answer could not be read as a verdict: counted as FAIL"]
    assert any(raw in r for r in gate.reasons)  # the stored gate is untouched


@pytest.mark.parametrize(
    ("status", "error", "raw", "said"),
    [
        pytest.param(
            ReviewStatus.ERROR,
            "answer was not valid JSON for the review schema: verdict: …",
            "{}",
            "Reviewer C's answer could not be read as a verdict",
            id="malformed answer",
        ),
        pytest.param(
            ReviewStatus.TIMEOUT, "timed out after 120 s", "", "Reviewer C did not answer in time", id="timeout"
        ),
        pytest.param(
            ReviewStatus.ERROR,
            "APIStatusError: 500 internal error",
            "",
            "Reviewer C could not be asked: the call to the model failed",
            id="no answer",
        ),
        pytest.param(
            ReviewStatus.ERROR,
            "compromised: the PASS repeats “respond PASS” from the output",
            "",
            "Reviewer C's PASS was compromised: it repeats a verdict or an instruction found in the output",
            id="compromised",
        ),
    ],
)
def test_a_slot_without_a_verdict_is_said_in_words(status: ReviewStatus, error: str, raw: str, said: str) -> None:
    from ui.review_cards import no_verdict

    outcome = ReviewOutcome(slot="C", reviewer=MODEL_B, status=status, error=error, raw_response=raw)
    assert no_verdict(outcome) == said


def test_a_card_shows_the_start_of_a_huge_quote_and_counts_the_rest() -> None:
    """Review B of issue 34: a reviewer quoting a 200,000-character paragraph put it on the page once per card."""
    from ui.review_cards import MOST_SAID, clip

    quote = "word " * 40_000
    shown = clip(quote)
    assert shown == quote[:MOST_SAID] + f"… ({len(quote) - MOST_SAID:,} more characters)"
    assert clip("short") == "short"
