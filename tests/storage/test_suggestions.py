"""Rubric learning end to end: runs reviewed through the loopback Messages API fail one criterion on one phrase, the
rubric author accepts the suggestion, and the new version catches the phrase in a new run before any reviewer is paid.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from santa_core.models import Criterion, FixEdit, FixPlan, Review, RubricDocument, RunStatus
from santa_core.reviewers.anthropic import AnthropicFixer, AnthropicReviewer
from santa_core.reviewers.base import FixRequest, ReviewRequest
from santa_core.reviewers.doubles import FunctionFixer, FunctionReviewer, failing, passing
from santa_core.roles import PermissionDenied
from santa_core.rubrics import actions
from santa_core.rubrics.learning import pending, try_suggestion
from santa_core.run.runner import Runner
from storage.runs import RunStore
from storage.startup import init_db
from storage.tables import EscapeRow, RubricVersionRow, SuggestionDecisionRow
from tests.conftest import granted_store, migrated_sqlite
from tests.support.messages_api import (
    MessagesStub,
    asked_criteria,
    fenced_output,
    fix_json,
    message,
    review_json,
    schema_properties,
)
from tests.support.runs import count

CLAIMS = Criterion(
    id="no_guarantees",
    name="No outcome guarantees",
    category="compliance",
    pass_condition="The copy promises no outcome.",
    fail_signal="A result is promised.",
)
FACTS = Criterion(
    id="facts",
    name="Facts",
    category="factual accuracy",
    pass_condition="Every claim is in the spec.",
    fail_signal="A claim not in the spec.",
)
SENTENCES = [
    "Your savings are guaranteed to double in {n} weeks.",
    "Growth of {n} % is guaranteed for every plan.",
    "Returns are guaranteed within {n} days.",
    "Every client is guaranteed {n} leads.",
    "Profits are guaranteed from day {n}.",
    "Sign today: results guaranteed in {n} hours.",
]
_SENTENCE = re.compile(r"[^.]*guaranteed[^.]*\.", re.I)


def reviewer_and_fixer(body: dict) -> object:
    """Reviewers FAIL `no_guarantees` on the sentence that says "guaranteed" (quoting it); the fix agent drops it."""
    output, model = fenced_output(body), body.get("model", "stub-model")
    sentence = _SENTENCE.search(output)
    if "edits" in schema_properties(body):
        return message(fix_json([(0, sentence.group(0).strip(), "Results vary.")] if sentence else []), model)
    ids = asked_criteria(body)
    if sentence is None:
        return message(review_json("PASS", [(i, "PASS") for i in ids]), model)
    checks = [(i, "FAIL" if i == "no_guarantees" else "PASS") for i in ids]
    issues = [("no_guarantees", "promises an outcome: 'guaranteed'", sentence.group(0).strip())]
    return message(review_json("FAIL", checks, issues), model)


def save_ads(repo: RunStore) -> None:
    """Rubric "ads" v1: facts, and no outcome guarantees (no check yet)."""
    repo.rubrics.save(RubricDocument(name="ads", criteria=[FACTS, CLAIMS]), "ann", "first version", None)


@pytest.fixture
def repo(tmp_path: Path) -> RunStore:
    repo = RunStore(init_db(migrated_sqlite(tmp_path / "santa.db", granted=True)))  # the test people granted
    save_ads(repo)
    return repo


def judge(request: ReviewRequest) -> Review:
    """The history's reviewers (in process, free): as the stand-in model judges."""
    sentence = _SENTENCE.search(request.output)
    if sentence is None:
        return passing(request)
    return failing(request, "no_guarantees", "promises an outcome: 'guaranteed'", sentence.group(0).strip())


def drop_the_claim(request: FixRequest) -> FixPlan:
    sentence = _SENTENCE.search(request.output)
    return FixPlan(
        edits=[FixEdit(issue=0, before=sentence.group(0).strip(), after="Results vary.")] if sentence else []
    )


def reviewed(repo: RunStore, outputs: list[str], stub: MessagesStub | None = None) -> list[int]:
    """Runs of the stored rubric "ads": a history judged by in-process doubles (seeding it over HTTP cost seconds a
    test), or, with `stub`, reviewed by the real adapters against the loopback Messages API; their ids."""
    if stub is None:
        runner = Runner(
            repo,
            lambda n: FunctionReviewer(n, judge),
            lambda n: FunctionFixer(n, drop_the_claim),
            workers=2,
            screen_for=lambda: None,
        )
    else:
        runner = Runner(repo, AnthropicReviewer, AnthropicFixer, workers=2, screen_for=lambda: None)
    rubric = repo.rubrics.resolved("ads")
    ids = []
    for output in outputs:
        run_id = repo.create_run(
            spec="Write an ad.",
            output=output,
            rubric=rubric,
            reviewer_b="claude-sonnet-5-5",
            reviewer_c="claude-haiku-5-5",
            fixer="claude-opus-5-5",
        )
        runner.execute(run_id)
        ids.append(run_id)
    return ids


def claims(n: int) -> list[str]:
    return [f"Meet plan {i}. {SENTENCES[i % len(SENTENCES)].format(n=i + 2)} Call us." for i in range(n)]


def plain(n: int) -> list[str]:
    return [f"Plan {i}: we explain the costs and the risks plainly." for i in range(n)]


def reviews_asked(stub: MessagesStub) -> int:
    return sum(1 for c in stub.message_calls() if "verdict" in schema_properties(c["body"]))


def test_four_runs_suggest_nothing_and_the_fifth_makes_one(repo: RunStore) -> None:
    reviewed(repo, claims(4) + plain(2))
    rubric = repo.rubrics.resolved("ads")
    assert pending(rubric, repo.suggestions)[0] == []
    fifth = reviewed(repo, claims(5)[4:])
    (s,), items, texts = pending(rubric, repo.suggestions)
    assert (s.kind, s.criterion, s.phrase) == ("forbidden_terms", "no_guarantees", "guaranteed")
    assert len(s.runs) == 5 and fifth[0] in s.runs and len(texts) == 2
    tried = try_suggestion(s, rubric, items, texts)
    assert (tried.hits, tried.misses, tried.false_alarms, tried.clean) == (s.runs, [], [], 2)


def test_accepting_saves_an_audited_version_whose_check_stops_a_new_run_before_the_reviewers(
    repo: RunStore, messages_stub: MessagesStub
) -> None:
    reviewed(repo, claims(5) + plain(1))
    (s,), _, _ = pending(repo.rubrics.resolved("ads"), repo.suggestions)
    saved = actions.accept_suggestion(repo.rubrics, repo.suggestions, s, "author@example.com")
    assert (saved.version, saved.created) == (2, True)
    info = repo.rubrics.versions("ads")[0]
    assert (info.author, info.source) == ("author@example.com", "suggestion") and s.key in info.change_note
    events = repo.audit.events()
    saves = [e for e in events if e.action == "rubric.saved" and e.entity_id == "ads@2"]
    assert len(saves) == 1 and saves[0].detail["source"] == "suggestion" and s.key in saves[0].detail["note"]
    assert [e.action for e in events if e.action.startswith("rubric.suggestion")] == ["rubric.suggestion_accepted"]
    assert [(d.action, d.version) for d in repo.suggestions.decisions("ads")] == [("accepted", 2)]
    assert pending(repo.rubrics.resolved("ads"), repo.suggestions)[0] == []  # no longer offered

    messages_stub.handler = reviewer_and_fixer
    (run_id,) = reviewed(repo, ["Brand new copy. Your income is GUARANTEED next year. Call us."], messages_stub)
    assert repo.load_run(run_id).state.status == RunStatus.AWAITING_APPROVAL
    assert reviews_asked(messages_stub) == 0  # the phrase was caught before any reviewer was paid
    assert sum("edits" in schema_properties(c["body"]) for c in messages_stub.message_calls()) == 1  # the fix agent
    gate = repo.load_round(run_id, 1).gate
    assert [(i.criterion, i.flagged_by, i.evidence) for i in gate.issues] == [("no_guarantees", "check", "GUARANTEED")]


@pytest.mark.parametrize("person", ["editor@example.com", "viewer@example.com"])
def test_without_the_rubric_author_role_accepting_and_dismissing_write_nothing(repo: RunStore, person: str) -> None:
    reviewed(repo, claims(5))
    (s,), _, _ = pending(repo.rubrics.resolved("ads"), repo.suggestions)
    before = len(repo.audit.events())
    with pytest.raises(PermissionDenied):
        actions.accept_suggestion(repo.rubrics, repo.suggestions, s, person)
    with pytest.raises(PermissionDenied):
        actions.dismiss_suggestion(repo.suggestions, s, person, "not useful")
    assert count(repo.engine, RubricVersionRow, name="ads") == 1 and count(repo.engine, SuggestionDecisionRow) == 0
    assert len(repo.audit.events()) == before


def test_a_dismissed_suggestion_is_remembered_and_audited(repo: RunStore) -> None:
    reviewed(repo, claims(5))
    (s,), _, _ = pending(repo.rubrics.resolved("ads"), repo.suggestions)
    actions.dismiss_suggestion(repo.suggestions, s, "author@example.com", "the legal team allows it here")
    assert pending(repo.rubrics.resolved("ads"), repo.suggestions)[0] == []
    reviewed(repo, claims(7)[5:])  # more evidence later does not bring it back
    assert pending(repo.rubrics.resolved("ads"), repo.suggestions)[0] == []
    (event,) = [e for e in repo.audit.events() if e.action == "rubric.suggestion_dismissed"]
    assert event.actor == "author@example.com" and event.detail["note"] == "the legal team allows it here"
    assert count(repo.engine, RubricVersionRow, name="ads") == 1


def test_escapes_reported_on_shipped_runs_are_read_with_their_runs(db_url: str) -> None:
    """Read on SQLite and PostgreSQL: failed rounds with their texts, escapes with the shipped text, NICE runs."""
    repo = granted_store(db_url, mark_interrupted=False)
    save_ads(repo)
    reviewed(repo, claims(3))
    shipped = reviewed(repo, plain(2))
    for run_id in shipped:
        repo.report_escape(run_id, "no_guarantees", "promises an outcome: 'guaranteed'", "major", "viewer@example.com")
    clean = reviewed(repo, plain(3)[2:])
    items, texts = repo.suggestions.learning_items("ads")
    assert sorted(i.source for i in items) == ["escape", "escape", "review", "review", "review"]
    assert sorted(texts) == clean and texts[clean[0]] == plain(3)[2]  # an escaped run is not a clean one
    escapes = [i for i in items if i.source == "escape"]
    assert [(i.run_id, i.text, i.issues[0].criterion) for i in escapes] == [
        (r, text, "no_guarantees") for r, text in zip(shipped, plain(2), strict=True)
    ]
    assert all("guaranteed" in i.text and i.ref == 1 for i in items if i.source == "review")
    assert repo.suggestions.learning_items("ads", days=0)[0] == []  # only runs started in the window
    assert count(repo.engine, EscapeRow) == 2
    repo.engine.dispose()
