"""The runner's extraction check (the screen's second model check, issue 36) with a screen double on a real SQLite
file: quoted text stops the round before any reviewer, a failed extraction fails closed, a stored extraction is not
asked again (resume), and the cache keeps the two checks apart."""

from __future__ import annotations

from santa_core.models import EscalationReason, RunStatus
from santa_core.text import sha256_text
from storage.runs import RunStore
from tests.core.run.test_runner import GOOD, SPEC, new_run
from tests.core.run.test_screen_runner import QUOTED, ScreenDouble, asked_reviewers, repo, runner

__all__ = ["repo"]  # the fixture


def test_a_text_the_extraction_quotes_escalates_before_any_reviewer(repo: RunStore) -> None:
    screen = ScreenDouble()  # its key check stays clean: an adaptive attack that beat the key
    run, reviewers = runner(repo, screen)
    state = run.execute(new_run(repo, f"{GOOD} {QUOTED}"))
    assert state.status == RunStatus.ESCALATED and state.escalation_reason == EscalationReason.INJECTION
    assert asked_reviewers(reviewers) == 0
    rnd = repo.load_round(1, 1)
    assert rnd.screens["spec and output"].verdict == "clean"
    assert rnd.screens["spec and output (extraction)"].verdict == "quoted"
    assert rnd.screens["spec and output (extraction)"].quotes == [QUOTED]
    (issue,) = rnd.gate.issues
    assert issue.criterion == "injection" and issue.flagged_by == "check" and issue.evidence == QUOTED
    assert "Extraction check" in issue.description and rnd.gate.injection


def test_a_quote_in_the_spec_is_caught_too(repo: RunStore) -> None:
    run, reviewers = runner(repo, ScreenDouble())
    state = run.execute(new_run(repo, GOOD, spec=f"{SPEC} {QUOTED}"))
    assert state.escalation_reason == EscalationReason.INJECTION and asked_reviewers(reviewers) == 0


def test_a_clean_extraction_lets_the_reviewers_judge(repo: RunStore) -> None:
    screen = ScreenDouble()
    run, reviewers = runner(repo, screen)
    assert run.execute(new_run(repo, GOOD)).status == RunStatus.SHIPPED
    assert screen.extracted == [("spec and output", f"{SPEC}\n\n{GOOD}")] and asked_reviewers(reviewers) == 2


def test_a_failed_extraction_fails_closed_and_says_why(repo: RunStore) -> None:
    run, reviewers = runner(repo, ScreenDouble())
    state = run.execute(new_run(repo, f"{GOOD} EXTRACTFAIL"))
    assert state.escalation_reason == EscalationReason.PROVIDER_FAILED and asked_reviewers(reviewers) == 0
    assert state.note.startswith("injection screen of the spec and output failed (extraction check: server error")


def test_a_resumed_round_does_not_ask_the_extraction_again(repo: RunStore) -> None:
    """A process that stored the extraction and died before the gate: the resumed round reads it from the round."""
    screen = ScreenDouble()
    run, _ = runner(repo, screen)
    run_id = new_run(repo, GOOD)
    stored = screen.extract(SPEC, GOOD)
    repo.save_screen(run_id, 1, stored.model_copy(update={"model": "another-model"}))  # not in the cache's way
    screen.extracted.clear()
    assert run.execute(run_id).status == RunStatus.SHIPPED
    assert screen.extracted == [] and len(screen.asked) == 1  # only the key check had no answer yet


def test_each_check_is_cached_on_its_own(repo: RunStore) -> None:
    """A clean key verdict of a text does not stand in for its extraction, nor the other way round."""
    screen = ScreenDouble()
    text = f"{SPEC}\n\n{GOOD}"
    repo.save_screen(new_run(repo, "x"), 1, screen.screen(text, "spec and output"))  # a key verdict only
    screen.asked.clear()
    run, _ = runner(repo, screen)
    second = new_run(repo, GOOD)
    assert run.execute(second).status == RunStatus.SHIPPED
    assert screen.asked == [] and len(screen.extracted) == 1
    rnd = repo.load_round(second, 1)
    assert rnd.screens["spec and output"].cached and not rnd.screens["spec and output (extraction)"].cached
    assert repo.screened(sha256_text(text), screen.name, "extraction") is not None


def test_a_text_the_extraction_ever_quoted_is_never_served_clean_from_the_cache(repo: RunStore) -> None:
    screen = ScreenDouble()
    text = f"{SPEC}\n\n{GOOD}"
    first = new_run(repo, "x")
    clean = screen.extract(SPEC, GOOD)
    repo.save_screen(first, 1, clean)
    repo.save_screen(first, 1, clean.model_copy(update={"verdict": "quoted", "quotes": [GOOD]}))
    assert repo.screened(sha256_text(text), screen.name, "extraction") is None
    assert repo.screened(sha256_text(text), screen.name) is None  # no key verdict stored: none to serve
