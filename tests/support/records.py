"""What the rounds of a run hold, built for the storage tests: LLM calls, review outcomes (answered
and timed out), a NAUGHTY gate and a fix proposal, with content (nested JSON, unicode, awkward
floats) a round-trip must keep.
"""

from __future__ import annotations

from santa_core.models import (
    CheckResult,
    FixEdit,
    FixProposal,
    GateDecision,
    GateResult,
    LLMCall,
    MergedIssue,
    RejectedEdit,
    Review,
    ReviewIssue,
    ReviewOutcome,
    ReviewStatus,
    Usage,
)


def make_call(n: int = 0, purpose: str = "review", error: str | None = None) -> LLMCall:
    """An LLM call with nested JSON, unicode and awkward floats."""
    return LLMCall(
        purpose=purpose,
        model="claude-sonnet-5-5",
        request={
            "messages": [{"role": "user", "content": f"review #{n} — naïve 🎄"}],
            "max_tokens": 4096,
            "meta": {"floats": [0.1, 2.5e-7, -3.0], "flags": [True, None]},
        },
        response='{"verdict": "FAIL"}' if error is None else "",
        usage=Usage(
            input_tokens=1000 + n, output_tokens=200, cache_creation_input_tokens=30, cache_read_input_tokens=700
        ),
        cost_usd=0.0123 + n / 1000,
        latency_s=1.25,
        error=error,
    )


def make_outcome(slot: str = "B", verdict: str = "FAIL", calls: int = 2) -> ReviewOutcome:
    """A valid review outcome with checks, issues and calls."""
    review = Review(
        verdict=verdict,
        checks=[
            CheckResult(criterion="facts", result=verdict, detail="claim ‘X’ is not in the spec"),
            CheckResult(criterion="terms", result="PASS", detail="none found"),
        ],
        critical_issues=[]
        if verdict == "PASS"
        else [ReviewIssue(criterion="facts", description="invented figure", evidence="42 %")],
        suggestions=["tighten the intro"],
    )
    return ReviewOutcome(
        slot=slot,
        reviewer="claude-sonnet-5-5",
        status=ReviewStatus.OK,
        review=review,
        usage=Usage(input_tokens=2000, output_tokens=400, cache_read_input_tokens=1400),
        cost_usd=0.0317,
        latency_s=3.5,
        raw_response=review.model_dump_json(),
        calls=[make_call(i) for i in range(calls)],
    )


def make_error_outcome(slot: str = "C") -> ReviewOutcome:
    """A reviewer that timed out: no review, an error, one failed call."""
    return ReviewOutcome(
        slot=slot,
        reviewer="gpt-x",
        status=ReviewStatus.TIMEOUT,
        error="timed out after 60 s",
        cost_usd=0.0,
        latency_s=60.0,
        calls=[make_call(9, error="ReadTimeout")],
    )


def make_gate() -> GateResult:
    """A NAUGHTY gate with two attributed issues and reasons."""
    return GateResult(
        decision=GateDecision.NAUGHTY,
        issues=[
            MergedIssue(criterion="facts", description="invented figure", evidence="42 %", flagged_by="both"),
            MergedIssue(criterion="terms", description="says guarantee", flagged_by="check"),
        ],
        reasons=["B: FAIL", "C: timeout"],
        reviewer_error=True,
        injection=False,
    )


def make_proposal(before: str = "The output.") -> FixProposal:
    """A proposal with an applied and a rejected edit, and one fix call."""
    return FixProposal(
        issues=make_gate().issues,
        edits=[FixEdit(issue=0, before="output", after="revised output")],
        rejected=[RejectedEdit(edit=FixEdit(issue=1, before="nope", after="x"), reason="before text not found")],
        before_text=before,
        proposed_text=before.replace("output", "revised output"),
        usage=Usage(input_tokens=900, output_tokens=120),
        cost_usd=0.05,
        calls=[make_call(5, purpose="fix")],
    )
