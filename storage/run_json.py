"""A run as one JSON-ready object: the command line's `--json` answer."""

from __future__ import annotations

from typing import Any

from santa_core import pricing
from santa_core.models import ReviewOutcome, Rubric, Usage
from santa_core.providers import diversity_warning, panel_families, spans_two_families
from santa_core.reviewers.base import PERSON
from santa_core.run.gate import counted_verdict
from santa_core.run.unreviewed import could_not_review
from storage.rows import enum_value
from storage.views import RoundView, RunView


def review_json(outcome: ReviewOutcome, rubric: Rubric) -> dict[str, Any]:
    """A review slot for the CLI's JSON answer; `verdict` is what the gate counts it as."""
    return {
        "reviewer": outcome.reviewer,
        "status": outcome.status.value,
        "verdict": counted_verdict(outcome, rubric),
        "error": outcome.error,
        "cost_usd": outcome.cost_usd,
        **price_note(outcome.reviewer, outcome.usage),
        "review": None if outcome.review is None else outcome.review.model_dump(mode="json"),
    }


def price_note(model: str, usage: Usage) -> dict[str, Any]:
    """For a model with no listed price: `price: "unknown"` and its tokens (its cost_usd is the budget's upper
    bound, not a price); nothing for a priced model or a person."""
    if model == PERSON or pricing.is_known(model):
        return {}
    return {
        "price": pricing.PRICE_UNKNOWN,
        "tokens": {
            "input": usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens,
            "output": usage.output_tokens,
        },
    }


def unpriced_models(view: RunView) -> list[str]:
    """The run's models with no listed price (their calls count against the budget at the highest rate)."""
    return pricing.unpriced(
        view.reviewer_b, view.reviewer_c, *([view.reviewer_d] if view.reviewer_d else []), view.fixer
    )


def round_json(rnd: RoundView, rubric: Rubric) -> dict[str, Any]:
    """A round for the CLI's JSON answer."""
    return {
        "round": rnd.round_no,
        "output_hash": rnd.output_hash,
        "reviews": {slot: review_json(o, rubric) for slot, o in sorted(rnd.reviews.items())},
        "gate": None if rnd.gate is None else rnd.gate.decision.value,
        # The stored gate stays the code; this says nobody judged it: the failed calls' words, "" when judged.
        "unreviewed": could_not_review(rnd),
        "issues": [] if rnd.gate is None else [i.model_dump() for i in rnd.gate.issues],
        "checks": None if rnd.gate is None or rnd.gate.checks is None else [c.model_dump() for c in rnd.gate.checks],
        "proposal": None if rnd.proposal is None else rnd.proposal.proposed_text,
        "decisions": [d.model_dump(mode="json") for d in rnd.decisions],
        "screens": {role: sc.model_dump(mode="json", exclude={"calls"}) for role, sc in sorted(rnd.screens.items())},
        "cost_usd": rnd.cost_usd,
    }


def run_json(view: RunView) -> dict[str, Any]:
    """A run for the CLI's JSON answer."""
    escalation = view.escalation
    return {
        "run_id": view.id,
        "status": view.status.value,
        "escalation_reason": enum_value(view.state.escalation_reason),
        "note": view.state.note,
        "round": view.state.round,
        "rubric": {"name": view.rubric.name, "version": view.rubric.version},
        "reviewer_b": view.reviewer_b,
        "reviewer_c": view.reviewer_c,
        "reviewer_d": view.reviewer_d,  # the third reviewer of the rubric's high-risk criteria (null: none)
        "panel": {
            "families": panel_families(view.reviewer_b, view.reviewer_c),
            "spans_two_families": spans_two_families(view.reviewer_b, view.reviewer_c),
            "warning": diversity_warning(view.reviewer_b, view.reviewer_c),
        },
        "fixer": view.fixer,
        "created_by": view.created_by,
        "source": view.source,
        "created_at": view.created_at.isoformat(),
        "cost_usd": view.total_cost_usd,
        "price_unknown": unpriced_models(view),
        "cut_off_calls": [c.model_dump(mode="json") for c in view.cut_off],
        "in_flight_calls": [c.model_dump(mode="json") for c in view.in_flight],
        "rounds": [round_json(r, view.rubric) for r in view.rounds],
        "escalation": None if escalation is None else escalation.model_dump(mode="json"),
        "escapes": [e.model_dump(mode="json") for e in view.escapes],
        "current_output": view.current_output,
        "final_output": view.final_output,
    }
