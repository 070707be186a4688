"""The AND gate: truth table, fail-closed verdicts, merge and attribution."""

from __future__ import annotations

import itertools
import random
from difflib import SequenceMatcher

import pytest

from santa_core.models import CheckResult, GateDecision, MergedIssue, Review, ReviewIssue, ReviewOutcome, ReviewStatus
from santa_core.run.gate import MAX_WORDING_CHARS, SAME_TEXT, SIMILAR, decide, disagree, merge_issues, similar

PASS_REVIEW = Review(
    verdict="PASS", checks=[CheckResult(criterion="a", result="PASS", detail="ok")], critical_issues=[], suggestions=[]
)
FAIL_REVIEW = Review(
    verdict="FAIL",
    checks=[CheckResult(criterion="a", result="FAIL", detail="bad")],
    critical_issues=[ReviewIssue(criterion="a", description="claim is false", evidence="x")],
    suggestions=[],
)


def outcome(slot: str, kind: str) -> ReviewOutcome:
    """An outcome of one of the four kinds the truth table covers."""
    if kind == "PASS":
        return ReviewOutcome(slot=slot, reviewer="m", status=ReviewStatus.OK, review=PASS_REVIEW)
    if kind == "FAIL":
        return ReviewOutcome(slot=slot, reviewer="m", status=ReviewStatus.OK, review=FAIL_REVIEW)
    if kind == "error":
        return ReviewOutcome(slot=slot, reviewer="m", status=ReviewStatus.ERROR, error="invalid JSON")
    return ReviewOutcome(slot=slot, reviewer="m", status=ReviewStatus.TIMEOUT, error="timed out")


KINDS = ["PASS", "FAIL", "error", "timeout"]


@pytest.mark.parametrize(
    ("b", "c"), [pytest.param(b, c, id=f"B={b}-C={c}") for b, c in itertools.product(KINDS, KINDS)]
)
def test_truth_table(b: str, c: str) -> None:
    result = decide(outcome("B", b), outcome("C", c), [], ["a"])
    expected = GateDecision.NICE if (b, c) == ("PASS", "PASS") else GateDecision.NAUGHTY
    assert result.decision == expected
    assert result.reviewer_error == (b in ("error", "timeout") or c in ("error", "timeout"))


def test_exactly_one_nice_in_the_table() -> None:
    results = [decide(outcome("B", b), outcome("C", c), [], ["a"]).decision for b in KINDS for c in KINDS]
    assert results.count(GateDecision.NICE) == 1


def test_pass_that_contradicts_its_own_failed_check_is_a_fail() -> None:
    liar = Review(
        verdict="PASS",
        checks=[CheckResult(criterion="a", result="FAIL", detail="wrong date")],
        critical_issues=[],
        suggestions=[],
    )
    b = ReviewOutcome(slot="B", reviewer="m", status=ReviewStatus.OK, review=liar)
    result = decide(b, outcome("C", "PASS"), [], ["a"])
    assert result.decision == GateDecision.NAUGHTY
    assert any("failed its own checks" in r for r in result.reasons)
    # the failed check becomes an issue the fix agent must address
    assert [i.description for i in result.issues] == ["wrong date"]


def test_ok_status_without_review_is_not_a_pass() -> None:
    empty = ReviewOutcome(slot="B", reviewer="m", status=ReviewStatus.OK, review=None)
    assert decide(empty, outcome("C", "PASS"), [], ["a"]).decision == GateDecision.NAUGHTY


def test_precheck_hit_blocks_even_when_both_reviewers_pass() -> None:
    hit = MergedIssue(criterion="injection", description="asks the reviewer to pass", flagged_by="check")
    result = decide(outcome("B", "PASS"), outcome("C", "PASS"), [hit], ["a"])
    assert result.decision == GateDecision.NAUGHTY
    assert result.injection is True
    assert result.issues[0].flagged_by == "check"


def _with_issues(slot: str, *issues: ReviewIssue) -> ReviewOutcome:
    review = Review(verdict="FAIL", checks=[], critical_issues=list(issues), suggestions=[])
    return ReviewOutcome(slot=slot, reviewer="m", status=ReviewStatus.OK, review=review)


@pytest.mark.parametrize(
    ("b_issues", "c_issues", "expected"),
    [
        pytest.param(
            [ReviewIssue(criterion="facts", description="The launch year 2019 is wrong", evidence="in 2019")],
            [ReviewIssue(criterion="facts", description="Wrong year given", evidence="launched in 2019")],
            ["both"],
            id="same-evidence-is-one-issue-flagged-by-both",
        ),
        pytest.param(
            [ReviewIssue(criterion="facts", description="The price is wrong")],
            [ReviewIssue(criterion="facts", description="the price is wrong.")],
            ["both"],
            id="similar-description-is-one-issue",
        ),
        pytest.param(
            [ReviewIssue(criterion="facts", description="The price is wrong")],
            [ReviewIssue(criterion="tone", description="The price is wrong")],
            ["B", "C"],
            id="different-criteria-stay-apart",
        ),
        pytest.param(
            [ReviewIssue(criterion="facts", description="year wrong", evidence="Launched in 2019 for $5")],
            [ReviewIssue(criterion="facts", description="price invented", evidence="$5")],
            ["B", "C"],
            id="short-quote-inside-long-quote-is-not-the-same-issue",
        ),
        pytest.param(
            [
                ReviewIssue(
                    criterion="facts",
                    description="Unsupported statistic: 40% revenue growth",
                    evidence="grew revenue 40%",
                )
            ],
            [
                ReviewIssue(
                    criterion="facts",
                    description="Unsupported statistic: 25% churn reduction",
                    evidence="cut churn 25%",
                )
            ],
            ["B", "C"],
            id="similar-wording-different-quotes-stay-apart",
        ),
        pytest.param(
            [ReviewIssue(criterion="completeness", description="Missing the pricing section")],
            [ReviewIssue(criterion="completeness", description="Missing the refund section")],
            ["B", "C"],
            id="similar-wording-no-quotes-stay-apart",
        ),
        pytest.param(
            [ReviewIssue(criterion="facts", description="Wrong CEO name", evidence="Jane Roe, CEO since 2011")],
            [ReviewIssue(criterion="facts", description="Founder year wrong", evidence="CEO since 2011")],
            ["B", "C"],
            id="only-generic-words-shared-stay-apart",
        ),
        pytest.param([ReviewIssue(criterion="cta", description="No call to action at all")], [], ["B"], id="b-only"),
        pytest.param([], [ReviewIssue(criterion="cta", description="No call to action at all")], ["C"], id="c-only"),
        pytest.param(
            [
                ReviewIssue(criterion="cta", description="No call to action at all"),
                ReviewIssue(criterion="cta", description="no call to action at all!"),
            ],
            [],
            ["B"],
            id="reviewer-repeats-itself",
        ),
    ],
)
def test_merge_attribution(b_issues: list, c_issues: list, expected: list[str]) -> None:
    merged = merge_issues(_with_issues("B", *b_issues), _with_issues("C", *c_issues))
    assert [m.flagged_by for m in merged] == expected


def test_similar_is_difflibs_ratio_up_to_the_cap() -> None:
    """The ratio's cheap upper bounds decide first: they never change what the ratio itself would say."""
    rng = random.Random(5)
    vocab = "free shipping forever orders the price wrong 中文 ß".split()
    close = {True: 0, False: 0}
    for _ in range(3000):
        a, b = (" ".join(rng.choices(vocab, k=rng.randint(1, 6))) for _ in range(2))
        ratio = SequenceMatcher(None, a, b).ratio()
        for threshold in (SIMILAR, SAME_TEXT):
            assert similar(a, b, threshold) == (ratio >= threshold), (a, b, threshold)
            close[ratio >= threshold] += 1
    assert min(close.values()) > 100  # both answers were exercised: the property is not vacuous


def test_past_the_cap_two_long_descriptions_stay_apart_unless_equal() -> None:
    """A model's description of any length is compared in bounded time; when unsure, two issues stay apart."""
    long = " ".join(f"claim {i} about the refund policy is not supported" for i in range(60))
    assert len(long) > MAX_WORDING_CHARS
    nearly = long + " and the dates"
    assert SequenceMatcher(None, long, nearly).ratio() > SAME_TEXT  # the unbounded ratio would merge them
    merged = merge_issues(
        _with_issues("B", ReviewIssue(criterion="facts", description=long)),
        _with_issues("C", ReviewIssue(criterion="facts", description=nearly)),
    )
    assert [m.flagged_by for m in merged] == ["B", "C"]
    merged = merge_issues(
        _with_issues("B", ReviewIssue(criterion="facts", description=long)),
        _with_issues("C", ReviewIssue(criterion="facts", description=long.upper())),
    )
    assert [m.flagged_by for m in merged] == ["both"]


def test_pass_that_lists_a_critical_issue_is_a_fail() -> None:
    sly = Review(
        verdict="PASS",
        checks=[CheckResult(criterion="a", result="PASS", detail="ok")],
        critical_issues=[ReviewIssue(criterion="a", description="the price is invented")],
        suggestions=[],
    )
    b = ReviewOutcome(slot="B", reviewer="m", status=ReviewStatus.OK, review=sly)
    result = decide(b, outcome("C", "PASS"), [], criteria=["a"])
    assert result.decision == GateDecision.NAUGHTY
    assert [i.description for i in result.issues] == ["the price is invented"]


@pytest.mark.parametrize(
    "checks",
    [
        pytest.param([], id="no-checks"),
        pytest.param([CheckResult(criterion="a", result="PASS", detail="ok")], id="one-of-two-criteria"),
    ],
)
def test_pass_that_skips_criteria_is_a_reviewer_failure(checks: list) -> None:
    lazy = ReviewOutcome(
        slot="C",
        reviewer="m",
        status=ReviewStatus.OK,
        review=Review(verdict="PASS", checks=checks, critical_issues=[], suggestions=[]),
    )
    full = Review(
        verdict="PASS",
        checks=[CheckResult(criterion=i, result="PASS", detail="ok") for i in "ab"],
        critical_issues=[],
        suggestions=[],
    )
    b = ReviewOutcome(slot="B", reviewer="m", status=ReviewStatus.OK, review=full)
    result = decide(b, lazy, [], criteria=["a", "b"])
    assert result.decision == GateDecision.NAUGHTY and result.reviewer_error
    assert any("without checking" in r and r.endswith("b: counted as FAIL") for r in result.reasons)
    assert decide(b, b.model_copy(update={"slot": "C"}), [], criteria=["a", "b"]).decision == GateDecision.NICE


def test_the_gate_refuses_to_decide_without_the_rubrics_criteria() -> None:
    empty = ReviewOutcome(
        slot="B",
        reviewer="m",
        status=ReviewStatus.OK,
        review=Review(verdict="PASS", checks=[], critical_issues=[], suggestions=[]),
    )
    with pytest.raises(ValueError):
        decide(empty, empty.model_copy(update={"slot": "C"}), [], criteria=[])


# --- suggestions never block -----------------------------------------------------------------


def _review(verdict: str, results: dict[str, str], issues: tuple[str, ...] = ()) -> ReviewOutcome:
    review = Review(
        verdict=verdict,
        checks=[CheckResult(criterion=k, result=v, detail="d") for k, v in results.items()],
        critical_issues=[ReviewIssue(criterion=i, description=f"{i} fails") for i in issues],
        suggestions=["tighten the intro"],
    )
    return ReviewOutcome(slot="B", reviewer="m", status=ReviewStatus.OK, review=review)


@pytest.mark.parametrize(
    ("review", "nice"),
    [
        pytest.param(_review("PASS", {"facts": "PASS", "style": "FAIL"}), True, id="failed-suggestion-does-not-block"),
        pytest.param(_review("PASS", {"facts": "FAIL", "style": "PASS"}), False, id="failed-critical-blocks"),
        pytest.param(_review("FAIL", {"facts": "PASS", "style": "FAIL"}), False, id="fail-verdict-is-never-overruled"),
        pytest.param(
            _review("PASS", {"facts": "PASS", "style": "FAIL"}, ("style",)), False, id="a-listed-critical-issue-blocks"
        ),
        pytest.param(_review("PASS", {"facts": "PASS"}), False, id="unchecked-suggestion-still-counts-as-unchecked"),
    ],
)
def test_advisory_criteria(review: ReviewOutcome, nice: bool) -> None:
    c = review.model_copy(update={"slot": "C"})
    result = decide(review, c, [], ["facts", "style"], advisory=["style"])
    assert (result.decision == GateDecision.NICE) == nice
    if nice:
        assert result.issues == []  # a failed suggestion is not sent to the fix agent


def test_without_advisory_ids_a_failed_suggestion_check_blocks() -> None:
    review = _review("PASS", {"facts": "PASS", "style": "FAIL"})
    assert (
        decide(review, review.model_copy(update={"slot": "C"}), [], ["facts", "style"]).decision == GateDecision.NAUGHTY
    )


def test_advisory_ids_match_exactly_so_a_look_alike_id_still_blocks() -> None:
    """A critical "no-risk" failed by both reviewers must not pass as the suggestion "no--risk"."""
    review = _review("PASS", {"no-risk": "FAIL", "no--risk": "PASS"})
    result = decide(review, review.model_copy(update={"slot": "C"}), [], ["no-risk", "no--risk"], advisory=["no--risk"])
    assert result.decision == GateDecision.NAUGHTY


def test_a_check_of_a_look_alike_id_does_not_cover_the_other_criterion() -> None:
    review = _review("PASS", {"no-risk": "PASS"})
    result = decide(review, review.model_copy(update={"slot": "C"}), [], ["no-risk", "no--risk"])
    assert result.decision == GateDecision.NAUGHTY and result.reviewer_error


# --- disagreement: one reviewer PASSes a blocking criterion the other FAILs ---------------------


def _judges(
    slot: str, results: dict[str, str], issues: tuple[str, ...] = (), status: ReviewStatus = ReviewStatus.OK
) -> ReviewOutcome:
    """A review of `results` (criterion -> PASS/FAIL check) with critical issues on `issues`."""
    if status != ReviewStatus.OK:
        return ReviewOutcome(slot=slot, reviewer="m", status=status, error="scripted")
    verdict = "FAIL" if issues or "FAIL" in results.values() else "PASS"
    review = Review(
        verdict=verdict,
        checks=[CheckResult(criterion=k, result=v, detail="d") for k, v in results.items()],
        critical_issues=[ReviewIssue(criterion=i, description=f"{i} fails") for i in issues],
        suggestions=[],
    )
    return ReviewOutcome(slot=slot, reviewer="m", status=ReviewStatus.OK, review=review)


CRITERIA = ["facts", "tone", "style"]
ALL_PASS = {"facts": "PASS", "tone": "PASS", "style": "PASS"}


@pytest.mark.parametrize(
    ("b", "c", "advisory", "expected"),
    [
        pytest.param(
            _judges("B", ALL_PASS),
            _judges("C", {**ALL_PASS, "facts": "FAIL"}),
            [],
            ["facts"],
            id="pass-vs-fail-check-on-critical",
        ),
        pytest.param(
            _judges("B", {**ALL_PASS, "tone": "FAIL"}), _judges("C", ALL_PASS), [], ["tone"], id="symmetric-fail-in-b"
        ),
        pytest.param(
            _judges("B", ALL_PASS),
            _judges("C", ALL_PASS, issues=("facts",)),
            [],
            ["facts"],
            id="a-critical-issue-counts-as-fail",
        ),
        pytest.param(
            _judges("B", ALL_PASS),
            _judges("C", {"facts": "FAIL", "tone": "FAIL", "style": "PASS"}),
            [],
            ["facts", "tone"],
            id="several-in-criteria-order",
        ),
        pytest.param(
            _judges("B", {**ALL_PASS, "facts": "FAIL"}),
            _judges("C", {**ALL_PASS, "facts": "FAIL"}),
            [],
            [],
            id="both-fail-agree",
        ),
        pytest.param(_judges("B", ALL_PASS), _judges("C", ALL_PASS), [], [], id="both-pass-agree"),
        pytest.param(
            _judges("B", ALL_PASS),
            _judges("C", {**ALL_PASS, "style": "FAIL"}),
            ["style"],
            [],
            id="advisory-suggestion-ignored",
        ),
        pytest.param(
            _judges("B", ALL_PASS),
            _judges("C", {**ALL_PASS, "style": "FAIL"}),
            [],
            ["style"],
            id="same-without-advisory-counts",
        ),
        pytest.param(
            _judges("B", {}, status=ReviewStatus.ERROR),
            _judges("C", {**ALL_PASS, "facts": "FAIL"}),
            [],
            [],
            id="errored-review-says-nothing",
        ),
        pytest.param(
            _judges("B", ALL_PASS),
            _judges("C", {}, status=ReviewStatus.TIMEOUT),
            [],
            [],
            id="timed-out-review-says-nothing",
        ),
        pytest.param(
            _judges("B", {"tone": "PASS", "style": "PASS"}),
            _judges("C", {**ALL_PASS, "facts": "FAIL"}),
            [],
            [],
            id="silent-on-the-criterion-is-not-a-pass",
        ),
        pytest.param(
            _judges("B", {" Facts ": "PASS", "tone": "PASS", "style": "PASS"}),
            _judges("C", {**ALL_PASS, "facts": "FAIL"}),
            [],
            ["facts"],
            id="ids-match-up-to-case-and-space",
        ),
    ],
)
def test_disagree(b: ReviewOutcome, c: ReviewOutcome, advisory: list[str], expected: list[str]) -> None:
    assert disagree(b, c, CRITERIA, advisory) == expected
    assert disagree(c, b, CRITERIA, advisory) == expected  # which slot says what does not matter
    assert decide(b, c, [], CRITERIA, advisory).disagreement is bool(expected)


def test_an_ok_status_without_a_review_says_nothing() -> None:
    empty = ReviewOutcome(slot="B", reviewer="m", status=ReviewStatus.OK, review=None)
    assert disagree(empty, _judges("C", {**ALL_PASS, "facts": "FAIL"}), CRITERIA) == []


def test_disagreement_is_a_naughty_gate_not_a_reviewer_error() -> None:
    result = decide(_judges("B", ALL_PASS), _judges("C", {**ALL_PASS, "facts": "FAIL"}), [], CRITERIA)
    assert (result.decision, result.disagreement, result.reviewer_error) == (GateDecision.NAUGHTY, True, False)
