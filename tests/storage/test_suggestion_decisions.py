"""One decision a rubric-learning suggestion: accepting it again (two tabs, two authors), or after it was dismissed,
is refused with nothing written, at the action, inside the version save's transaction and at the decision; and a
spot-check escape's run is not a clean run, so escapes quoting one phrase suggest forbidding it (reviewers'
findings)."""

from __future__ import annotations

import pytest

from santa_core.reviewers.doubles import FunctionFixer, FunctionReviewer, passing
from santa_core.rubrics import actions
from santa_core.rubrics.learning import Suggestion, SuggestionDecided, accepted, pending, suggestion_key, try_suggestion
from santa_core.run.runner import Runner
from santa_core.spotchecks import actions as spot
from santa_core.spotchecks.model import Judgement, RuleDraft
from storage.runs import RunStore
from storage.tables import RubricVersionRow, SuggestionDecisionRow
from tests.storage import test_suggestions as suggestion_history
from tests.storage.test_suggestions import claims, plain
from tests.support.people import AUTHOR, OFFICER
from tests.support.runs import count

repo = suggestion_history.repo  # the fixture: "ads" v1 on a fresh SQLite desk
ME = "author@example.com"


def made(kind: str) -> Suggestion:
    """A suggestion for "ads" as rubric learning draws one up (its key from the same parts)."""
    phrase = "results guaranteed"
    return Suggestion(
        key=suggestion_key("ads", "no_guarantees", kind, phrase),
        rubric="ads",
        criterion="no_guarantees",
        criterion_name="No outcome guarantees",
        kind=kind,
        phrase=phrase,
        runs=[1, 2, 3, 4, 5],
    )


def written(repo: RunStore) -> tuple[int, int, int]:
    """(versions of "ads", decisions, audit events): what a refusal must leave as it was."""
    return (
        count(repo.engine, RubricVersionRow, name="ads"),
        count(repo.engine, SuggestionDecisionRow),
        len(repo.audit.events()),
    )


@pytest.mark.parametrize("kind", ["pass_condition", "forbidden_terms"])
def test_a_suggestion_accepted_once_is_refused_the_second_time(repo: RunStore, kind: str) -> None:
    s = made(kind)
    actions.accept_suggestion(repo.rubrics, repo.suggestions, s, ME)
    before = written(repo)
    with pytest.raises(SuggestionDecided, match="accepted already"):
        actions.accept_suggestion(repo.rubrics, repo.suggestions, s, ME)
    with pytest.raises(SuggestionDecided):
        actions.dismiss_suggestion(repo.suggestions, s, ME, "changed my mind")
    assert written(repo) == before and before[:2] == (2, 1)
    condition = repo.rubrics.resolved("ads").criteria[1].pass_condition
    assert condition.count("results guaranteed") == (kind == "pass_condition")


def test_a_dismissed_suggestion_cannot_be_accepted(repo: RunStore) -> None:
    s = made("pass_condition")
    actions.dismiss_suggestion(repo.suggestions, s, ME, "the legal team allows it")
    before = written(repo)
    with pytest.raises(SuggestionDecided, match="dismissed already"):
        actions.accept_suggestion(repo.rubrics, repo.suggestions, s, ME)
    assert written(repo) == before and before[:2] == (1, 1)


def test_the_save_itself_refuses_a_decided_suggestion_inside_its_transaction(repo: RunStore) -> None:
    """The door under the action: a second accept that read the decisions before the first one's were written."""
    s = made("pass_condition")
    repo.suggestions.decide(s, "dismissed", ME, "no")
    doc = repo.rubrics.document("ads")
    before = written(repo)
    with pytest.raises(SuggestionDecided):
        repo.rubrics.save(
            accepted(doc, s), ME, "from the suggestion", doc.version, source="suggestion", suggestion_key=s.key
        )
    with pytest.raises(SuggestionDecided):
        repo.suggestions.decide(s, "accepted", ME, version=2)
    assert written(repo) == before


def test_a_pass_condition_already_naming_the_sentence_is_not_sharpened_again(repo: RunStore) -> None:
    """Accepted under another key, or written by hand: the same sentence a second time is refused."""
    s = made("pass_condition")
    actions.accept_suggestion(repo.rubrics, repo.suggestions, s, ME)
    again = s.model_copy(update={"key": "s-another"})
    with pytest.raises(ValueError, match="names “results guaranteed” already"):
        actions.accept_suggestion(repo.rubrics, repo.suggestions, again, ME)
    assert written(repo)[:2] == (2, 1)


def test_spot_check_escapes_on_one_phrase_suggest_forbidding_it(repo: RunStore) -> None:
    """rev1: five runs both reviewers passed carry one promise; five blind spot-checks fail it, quoting it. Their
    runs are the failing side, not the clean one: the phrase is a term to forbid, and no false alarm of its check."""
    spot.save_rule(repo.spot_checks, RuleDraft(rubric_name="ads", share_percent=100), AUTHOR, ["ads"])
    runner = Runner(
        repo,
        lambda n: FunctionReviewer(n, passing),
        lambda n: FunctionFixer(n, lambda r: None),
        workers=2,
        screen_for=lambda: None,
    )
    rubric = repo.rubrics.resolved("ads")
    for output in claims(5) + plain(3):
        run_id = repo.create_run(
            spec="Write an ad.",
            output=output,
            rubric=rubric,
            reviewer_b="claude-sonnet-5-5",
            reviewer_c="claude-haiku-5-5",
            fixer="claude-opus-5-5",
        )
        runner.execute(run_id)
    for check in repo.spot_checks.spot_checks("open"):
        case = repo.spot_checks.blind_case(check.id)
        bad = "guaranteed" in case.text
        spot.submit(
            repo.spot_checks,
            check.id,
            [
                Judgement(
                    criterion=c.id,
                    verdict="FAIL" if bad and c.id == "no_guarantees" else "PASS",
                    evidence="guaranteed" if bad and c.id == "no_guarantees" else "",
                )
                for c in case.criteria
            ],
            OFFICER,
        )
    assert len([e for e in repo.escapes() if e.source == "spot_check"]) == 5
    found, items, nice = pending(rubric, repo.suggestions)
    assert [(s.kind, s.criterion, s.phrase) for s in found] == [("forbidden_terms", "no_guarantees", "guaranteed")]
    assert len(nice) == 3  # the plain runs only
    tried = try_suggestion(found[0], rubric, items, nice)
    assert (len(tried.hits), tried.false_alarms, tried.clean) == (5, [], 3)
