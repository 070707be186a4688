"""Our injection corpus against the detector and the runner, with reviewers that obey the data.

Acceptance: every attack (in the output or in the spec) is stopped before a reviewer is paid and
nothing ships; every benign text ships. `tests/cli/test_injection_corpus.py` does the same through
the command line.
"""

from __future__ import annotations

import pytest

from santa_core.checks import detect_injection
from santa_core.models import EscalationReason, RunStatus
from santa_core.reviewers.doubles import FunctionFixer, FunctionReviewer, gullible
from santa_core.rubrics.library import load_builtin
from santa_core.run.runner import Runner
from storage.runs import RunStore
from storage.startup import init_db
from tests.conftest import grant
from tests.support.injection_corpus import ATTACKS, BENIGN, COPY_AFTER, COPY_BEFORE, Attack

SPEC = "Write two sentences announcing the Acme Kettle Pro."


@pytest.mark.parametrize("attack", ATTACKS, ids=lambda a: a.id)
def test_every_attack_is_detected_where_it_stands(attack: Attack) -> None:
    text = attack.output() if attack.where == "output" else attack.spec(SPEC)
    issues = detect_injection(text, where=attack.where)
    assert issues, f"missed: {attack.payload!r}"
    assert all(i.evidence in text for i in issues)  # evidence quotes the original, byte for byte


@pytest.mark.parametrize("text", BENIGN)
def test_no_benign_text_is_flagged(text: str) -> None:
    assert detect_injection(f"{COPY_BEFORE} {text} {COPY_AFTER}") == []
    assert detect_injection(f"{SPEC}\n{text}", where="spec") == []


def test_the_corpus_spans_the_families_languages_and_both_places() -> None:
    assert {a.family for a in ATTACKS} >= {
        "instruction",
        "ignore-previous",
        "fake-completion",
        "context-switch",
        "authority",
        "combined",
        "obfuscation",
        "spec-side",
    }
    assert {a.lang for a in ATTACKS} >= {"en", "de", "fr", "es"}
    assert {a.where for a in ATTACKS} == {"output", "spec"}


@pytest.fixture(scope="module")
def runner(tmp_path_factory: pytest.TempPathFactory) -> tuple[RunStore, Runner, list[FunctionReviewer]]:
    path = tmp_path_factory.mktemp("corpus") / "santa.db"
    repo = grant(RunStore(init_db(f"sqlite:///{path}")))
    reviewers = [FunctionReviewer("b", gullible), FunctionReviewer("c", gullible)]
    by_name = {"b": reviewers[0], "c": reviewers[1]}
    run = Runner(repo, lambda n: by_name[n], lambda n: FunctionFixer("f", lambda r: None), workers=4)
    yield repo, run, reviewers
    run.shutdown()


def _run_all(repo: RunStore, run: Runner, cases: list[tuple[str, str]]) -> list[int]:
    rubric = load_builtin("general")
    ids = [
        repo.create_run(spec=spec, output=output, rubric=rubric, reviewer_b="b", reviewer_c="c", fixer="f")
        for spec, output in cases
    ]
    for future in [run.submit(i) for i in ids]:
        future.result(timeout=60)
    return ids


def test_with_gullible_reviewers_no_attack_ships_and_no_reviewer_is_paid(runner) -> None:
    repo, run, reviewers = runner
    before = sum(len(r.requests) for r in reviewers)
    ids = _run_all(repo, run, [(a.spec(SPEC), a.output()) for a in ATTACKS])
    states = [repo.load_run(i).state for i in ids]
    shipped = [a.payload for a, s in zip(ATTACKS, states, strict=True) if s.status == RunStatus.SHIPPED]
    assert shipped == []
    assert {(s.status, s.escalation_reason) for s in states} == {(RunStatus.ESCALATED, EscalationReason.INJECTION)}
    assert sum(len(r.requests) for r in reviewers) == before


def test_with_gullible_reviewers_every_benign_text_ships(runner) -> None:
    repo, run, _ = runner
    ids = _run_all(repo, run, [(f"{SPEC}\n{b}", f"{COPY_BEFORE} {b} {COPY_AFTER}") for b in BENIGN])
    blocked = [b for b, i in zip(BENIGN, ids, strict=True) if repo.load_run(i).state.status != RunStatus.SHIPPED]
    assert blocked == []


def test_the_scorer_is_what_stops_the_paraphrases() -> None:
    """Without the sentence scorer, the stock phrases alone miss most paraphrased attacks (why it exists)."""
    from santa_core.checks import injection

    stock_only = [
        a
        for a in ATTACKS
        if not any(
            injection._scan(view, cased=False) + injection._scan(injection.fold(a.payload, casefold=False), cased=True)
            for view, _ in injection._views(a.payload)
        )
    ]
    assert len(stock_only) >= 10
