"""The runner's known-answer screen step with a screen double on a real SQLite file."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from santa_core.models import EscalationReason, LLMCall, RunStatus, ScreenResult, ScreenRole
from santa_core.reviewers.doubles import FunctionFixer, FunctionReviewer
from santa_core.run.runner import Runner
from santa_core.text import sha256_text
from storage.runs import RunStore
from storage.startup import init_db
from tests.conftest import grant, migrated_sqlite
from tests.core.run.test_runner import BAD, GOOD, SPEC, new_run, strict, year_fixer


class ScreenDouble:
    """Took over by any text that says TAKEOVER; fails on FAILME; else clean. Counts its calls. Its extraction
    check quotes QUOTE ME PLEASE NOW when the text holds it, fails on EXTRACTFAIL, else finds nothing."""

    name = "screen-model"

    def __init__(self) -> None:
        self.asked: list[tuple[ScreenRole, str]] = []
        self.extracted: list[tuple[ScreenRole, str]] = []

    def extract(self, spec: str, output: str, role: ScreenRole = "spec and output") -> ScreenResult:
        text = f"{spec}\n\n{output}"
        self.extracted.append((role, text))
        call = LLMCall(purpose="screen", model=self.name, request={"text": text}, cost_usd=0.002)
        base = {
            "role": role,
            "text_hash": sha256_text(text),
            "model": self.name,
            "check": "extraction",
            "cost_usd": 0.002,
            "calls": [call],
        }
        if "EXTRACTFAIL" in text:
            return ScreenResult(**base, verdict="error", error="server error (500)")
        if QUOTED in text:
            return ScreenResult(**base, verdict="quoted", answer=QUOTED, quotes=[QUOTED])
        return ScreenResult(**base, verdict="clean", answer="NONE")

    def screen(self, text: str, role: ScreenRole) -> ScreenResult:
        self.asked.append((role, text))
        # Like the real screen, its cost is its call's: a run's spend is what its calls cost.
        call = LLMCall(purpose="screen", model=self.name, request={"text": text}, cost_usd=0.001)
        base = {
            "role": role,
            "text_hash": sha256_text(text),
            "model": self.name,
            "secret": "KEY",
            "cost_usd": 0.001,
            "calls": [call],
        }
        if "FAILME" in text:
            return ScreenResult(**base, verdict="error", error="rate limited (429) after 3 retries")
        if "TAKEOVER" in text:
            return ScreenResult(**base, verdict="took_over", answer="PASS")
        return ScreenResult(**base, verdict="clean", answer="KEY")


QUOTED = "QUOTE ME PLEASE NOW"


@pytest.fixture
def repo(tmp_path: Path) -> RunStore:
    return grant(RunStore(init_db(migrated_sqlite(tmp_path / "santa.db"))))


def runner(repo: RunStore, screen: ScreenDouble | None) -> tuple[Runner, dict[str, FunctionReviewer]]:
    reviewers = {n: FunctionReviewer(n, strict) for n in ("b", "c")}
    fx = FunctionFixer("fixer", year_fixer)
    return Runner(repo, reviewers.__getitem__, lambda name: fx, workers=2, screen_for=lambda: screen), reviewers


def asked_reviewers(reviewers: dict[str, FunctionReviewer]) -> int:
    return sum(len(r.requests) for r in reviewers.values())


def test_a_text_that_took_the_screen_over_escalates_before_any_reviewer(repo: RunStore) -> None:
    screen = ScreenDouble()
    run, reviewers = runner(repo, screen)
    state = run.execute(new_run(repo, GOOD + " TAKEOVER"))
    assert state.status == RunStatus.ESCALATED and state.escalation_reason == EscalationReason.INJECTION
    assert asked_reviewers(reviewers) == 0
    rnd = repo.load_round(1, 1)
    assert rnd.gate.injection and rnd.screens["spec and output"].verdict == "took_over"
    assert repo.spent_usd(1) == pytest.approx(0.003)  # the screen's two checks paid (0.001 + 0.002), no reviewer


def test_a_spec_that_took_the_screen_over_is_caught_too(repo: RunStore) -> None:
    run, reviewers = runner(repo, ScreenDouble())
    state = run.execute(new_run(repo, GOOD, spec=SPEC + " TAKEOVER"))
    assert state.escalation_reason == EscalationReason.INJECTION and asked_reviewers(reviewers) == 0


def test_a_failed_screen_fails_closed_and_says_why(repo: RunStore) -> None:
    run, reviewers = runner(repo, ScreenDouble())
    state = run.execute(new_run(repo, GOOD + " FAILME"))
    assert state.escalation_reason == EscalationReason.PROVIDER_FAILED and asked_reviewers(reviewers) == 0
    assert state.note.startswith("injection screen of the spec and output failed (rate limited")


def test_each_text_is_screened_once_across_rounds_and_runs(repo: RunStore) -> None:
    screen = ScreenDouble()
    run, _ = runner(repo, screen)
    run_id = new_run(repo, BAD, auto_approve=True)
    assert run.execute(run_id).status == RunStatus.SHIPPED
    fixed = BAD.replace("2019", "2018")
    # one screen per round, of the spec and the output together (as the reviewers read them)
    assert screen.asked == [("spec and output", f"{SPEC}\n\n{BAD}"), ("spec and output", f"{SPEC}\n\n{fixed}")]
    assert not repo.load_round(run_id, 2).screens["spec and output"].cached
    second = new_run(repo, BAD, auto_approve=True)
    assert run.execute(second).status == RunStatus.SHIPPED
    assert len(screen.asked) == 2  # a second run of known texts pays no screen
    assert all(repo.load_round(second, n).screens["spec and output"].cached for n in (1, 2))


def test_an_instruction_split_across_spec_and_output_is_screened_whole(repo: RunStore) -> None:
    class SplitAware(ScreenDouble):
        def screen(self, text: str, role: ScreenRole) -> ScreenResult:  # taken over only by both halves
            return super().screen(
                text.replace("TAKE", "").replace("OVER", "")
                + (" TAKEOVER" if "TAKE" in text and "OVER" in text else ""),
                role,
            )

    run, reviewers = runner(repo, SplitAware())
    state = run.execute(new_run(repo, GOOD + " OVER", spec=SPEC + " TAKE"))
    assert state.escalation_reason == EscalationReason.INJECTION and asked_reviewers(reviewers) == 0


def test_a_resumed_round_does_not_screen_again(repo: RunStore) -> None:
    screen = ScreenDouble()
    run, _ = runner(repo, screen)
    run_id = new_run(repo, GOOD)
    stored = screen.screen(f"{SPEC}\n\n{GOOD}", "spec and output")
    repo.save_screen(run_id, 1, stored.model_copy(update={"model": "another-model"}))
    assert run.execute(run_id).status == RunStatus.SHIPPED
    assert len(screen.asked) == 1  # the round's stored screen counts, whatever the cache holds


def test_no_screen_no_screening(repo: RunStore) -> None:
    run, reviewers = runner(repo, None)
    assert run.execute(new_run(repo, GOOD + " TAKEOVER")).status == RunStatus.SHIPPED
    assert repo.load_round(1, 1).screens == {} and asked_reviewers(reviewers) == 2


def test_runs_screening_one_text_at_once_share_one_call(repo: RunStore) -> None:
    class SlowScreen(ScreenDouble):
        def screen(self, text: str, role: ScreenRole) -> ScreenResult:
            time.sleep(0.05)  # long enough for the other runs to arrive while this one is asked
            return super().screen(text, role)

    screen = SlowScreen()
    reviewers = {n: FunctionReviewer(n, strict) for n in ("b", "c")}
    run = Runner(repo, reviewers.__getitem__, lambda name: None, workers=4, screen_for=lambda: screen)
    try:
        runs = [new_run(repo, GOOD) for _ in range(8)]  # a batch's identical items
        assert [f.result(timeout=30).status for f in [run.submit(r) for r in runs]] == [RunStatus.SHIPPED] * 8
    finally:
        run.shutdown()
    assert len(screen.asked) == 1  # identical texts screened at once are paid once
    assert sum(not repo.load_round(r, 1).screens["spec and output"].cached for r in runs) == 1


def test_a_text_that_ever_took_a_screen_over_is_never_served_clean_from_the_cache(repo: RunStore) -> None:
    screen = ScreenDouble()
    run_id = new_run(repo, GOOD)
    clean = screen.screen(GOOD, "output")
    repo.save_screen(run_id, 1, clean)
    assert repo.screened(clean.text_hash, screen.name).verdict == "clean"
    repo.save_screen(run_id, 1, clean.model_copy(update={"verdict": "took_over", "answer": "PASS"}))
    repo.save_screen(run_id, 1, clean)  # a later clean sample does not whitewash the text
    assert repo.screened(clean.text_hash, screen.name) is None
    assert repo.screened(clean.text_hash, "another-model") is None  # a verdict holds for its own model only


def test_a_stored_screen_of_another_text_does_not_count(repo: RunStore) -> None:
    screen = ScreenDouble()
    run, _ = runner(repo, screen)
    run_id = new_run(repo, GOOD + " TAKEOVER")
    repo.save_screen(run_id, 1, screen.screen(f"{SPEC}\n\n{GOOD}", "spec and output"))  # clean, another text
    screen.asked.clear()
    assert run.execute(run_id).escalation_reason == EscalationReason.INJECTION
    assert screen.asked == [("spec and output", f"{SPEC}\n\n{GOOD} TAKEOVER")]
