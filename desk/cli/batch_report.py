"""What `batch` reports when it stops: one JSON-ready object (--json) or the same as plain text.

Samples with the items they drew and failed, patterns with their fixes, the stopping rule, cost
against the estimate and against reviewing every item, and what a person does next.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from santa_core import words
from santa_core.batch.report import batch_view

if TYPE_CHECKING:  # annotations only: storage is imported inside the command
    from desk import Desk
    from santa_core.batch.store import PatternRecord, SampledReview, SampleProgress


@dataclass
class Decisions:
    """What this command decided about each pattern: why it waits for a person, which items a fix skipped."""

    waiting: dict[int, str] = field(default_factory=dict)
    skipped: dict[int, list[str]] = field(default_factory=dict)


def batch_result(desk: Desk, batch_id: int, outcome: str, decisions: Decisions, out: str | None) -> dict:
    """Everything the command did, as one JSON-ready object."""
    store = desk.batches.store
    batch = store.get(batch_id)
    number = {s.id: s.number for s in batch.samples}
    changes = store.changes(batch_id)
    changed = Counter(c.pattern_id for c in changes)
    est, rule = desk.batches.estimate(batch_id), desk.batches.stopping_rule(batch_id)
    actual = store.cost(batch_id)
    return {
        "batch_id": batch_id,
        "name": batch.name,
        "items": batch.items,
        "status": outcome,
        "rubric": {"name": batch.config.rubric.name, "version": batch.config.rubric.version},
        "reviewers": {"B": batch.config.reviewer_b, "C": batch.config.reviewer_c},
        "fixer": batch.config.fixer,
        "sample_rate": batch.config.sample_rate,
        "seed": batch.config.seed,
        "strata": batch.config.strata,
        "message_batches": batch.config.message_batches,
        "auto_approve": batch.config.auto_approve,
        "samples": [_sample_json(store.reviews(s.id), s) for s in batch.samples],
        "patterns": [_pattern_json(p, number[p.sample_id], changed[p.id], decisions) for p in store.patterns(batch_id)],
        "items_changed": len({c.item_id for c in changes}),
        "needs_person": _needs_person(desk, batch_id),
        "stopping_rule": None
        if rule is None
        else {
            "statement": rule.statement(),
            "clean": rule.clean,
            "population": rule.population,
            "sample": rule.sample,
            "failed": rule.failed,
            "confidence": rule.confidence,
            "upper_items": rule.upper_items,
            "upper_rate": rule.upper_rate,
            "stratified": rule.stratified,
            "fresh": rule.fresh,
            "fresh_sampled": rule.fresh_sampled,
            "fresh_upper": rule.fresh_upper,
            "known_failing": rule.known_failing,
            "unreviewed": rule.unreviewed,
            "unverified_fixes": rule.unverified_fixes,
        },
        "cost": {
            "estimated_sample_usd": est.sample_usd,
            "estimated_usd": est.sample_usd * len(batch.samples),
            "actual_usd": actual,
            "full_usd": est.full_usd,
            "full_fix_usd": est.fix_usd,
            "actual_share": est.spent_share(actual),
            "how": est.how(),
        },
        "out": out,
        "next": _next_step(batch_id, outcome, batch.samples[-1].number if batch.samples else 0),
    }


def _sample_json(reviews: list[SampledReview], progress: SampleProgress) -> dict:
    """One sample: its draw, its counts and which items it drew and failed."""
    return {
        "number": progress.number,
        "seed": progress.seed,
        "size": progress.size,
        "nice": progress.nice,
        "naughty": progress.naughty,
        "review_errors": progress.errors,
        "clean": progress.clean,
        "cost_usd": progress.cost_usd,
        "api_batch_id": progress.api_batch_id,
        "items": [r.key for r in reviews],
        "failed": [r.key for r in reviews if r.done and not r.nice],
    }


def _pattern_json(record: PatternRecord, sample: int, changed: int, decisions: Decisions) -> dict:
    """One pattern: what it is, where it showed, its fix and what the fix did."""
    pattern, proposal = record.pattern, record.proposal or {}
    edits = record.approved_edits if record.approved_edits is not None else proposal.get("edits", [])
    return {
        "id": record.id,
        "sample": sample,
        "key": record.key,
        "kind": pattern.get("kind", "issue"),
        "criterion": record.criterion,
        "title": record.title,
        "count": pattern.get("count", 0),
        "items": pattern.get("items", []),
        "strata": pattern.get("strata", {}),
        "representative": pattern.get("representative"),
        "status": record.status,
        "fix": [{"before": e["before"], "after": e["after"]} for e in edits],
        "fix_error": proposal.get("error"),
        "decided_by": record.decided_by,
        "items_changed": changed,
        "items_skipped": decisions.skipped.get(record.id, []),
        "waiting": decisions.waiting.get(record.id),
    }


def _needs_person(desk: Desk, batch_id: int) -> list[dict]:
    """Items that show a fixed pattern but no fix could reach: each with why, for a person to fix by hand."""
    view = batch_view(desk.batches.store, batch_id)
    keys = set(view.needs_fix)
    why: dict[int, str] = {}
    for change in view.changes:
        if change.before_hash == change.after_hash and not change.by_hand:
            why[change.item_id] = "; ".join(str(r.get("reason", "")) for r in change.skipped)
    return [{"item": it.key, "why": why.get(it.id, "")} for it in view.items if it.key in keys]


def _next_step(batch_id: int, outcome: str, samples: int) -> str | None:
    """What a person does next, in words (None when the batch is verified)."""
    if outcome == "needs_person":
        return (
            f"fix the items no fix could reach by hand on the Batch page (/batch?batch={batch_id}, Items that "
            "need a person): until then the export marks them “needs fix”"
        )
    if outcome == "waiting":
        return (
            f"open batch {batch_id} on the Batch page (/batch?batch={batch_id}): approve, edit or dismiss each "
            "waiting pattern, then sample again"
        )
    if outcome == "paused":
        return f"batch {batch_id} was paused on the Batch page: resume it there (/batch?batch={batch_id})"
    if outcome == "max_samples":
        return (
            f"no clean sample in {samples} samples (--max-samples): open batch {batch_id} on the Batch page "
            f"(/batch?batch={batch_id}) to look at the patterns and sample again"
        )
    return None


def batch_summary(result: dict) -> str:
    """The batch run as plain text: samples, patterns, the stopping rule, cost and what comes next."""
    lines = [
        f"batch {result['batch_id']} ({result['name']}): {result['items']:,} items, rubric "
        f"{result['rubric']['name']} v{result['rubric']['version']}, reviewers {result['reviewers']['B']} (B) "
        f"and {result['reviewers']['C']} (C)"
    ]
    for sample in result["samples"]:
        clean = ": clean" if sample["clean"] else ""
        lines.append(
            f"sample {sample['number']}: {sample['size']:,} items (seed {sample['seed']}): "
            f"{sample['nice']:,} NICE, {sample['naughty']:,} NAUGHTY{clean}"
        )
        lines += [_pattern_text(p) for p in result["patterns"] if p["sample"] == sample["number"]]
    rule = result["stopping_rule"]
    if rule is not None:
        lines.append(
            f"stopping rule: {rule['statement']}"
            if result["status"] in ("clean", "needs_person")
            else f"not verified yet: sample {result['samples'][-1]['number']}: {rule['statement']}"
        )
    for item in result["needs_person"]:
        lines.append(f"needs a person: {item['item']}: {item['why']}")
    lines.append(_cost_text(result["cost"], len(result["samples"])))
    if result["out"]:
        lines.append(f"wrote {result['out']}")
    if result["next"]:
        lines.append(("waiting for a person: " if result["status"] != "max_samples" else "stopped: ") + result["next"])
    return "\n".join(lines)


def _pattern_text(p: dict) -> str:
    """`  pattern 3 [compliance] promises free shipping: 4 sampled items (template promo 4); fix applied …`."""
    where = "; ".join(
        f"{col} " + ", ".join(f"{v} {n}" for v, n in counts.items()) for col, counts in p["strata"].items()
    )
    head = f"  pattern {p['id']} [{p['criterion'] or words.PATTERN_KIND.get(p['kind']) or words.readable(p['kind'])}] {p['title']}: {p['count']} sampled item(s)"
    head += f" ({where})" if where else ""
    fix = "; ".join(f"{e['before']!r} -> {e['after']!r}" for e in p["fix"])
    if p["status"] == "applied":
        skipped = f", {len(p['items_skipped'])} skipped (fix by hand)" if p["items_skipped"] else ""
        return f"{head}\n    fix {fix} applied to {p['items_changed']} item(s) by {p['decided_by']}{skipped}"
    proposed = f"\n    fix proposed: {fix}" if fix else ""
    example = ", ".join(p["items"][:3])
    return f"{head}, e.g. {example}{proposed}\n    waits: {p['waiting'] or words.pattern_status(p['status'])}"


def _cost_text(cost: dict, samples: int) -> str:
    """Actual cost against the estimate and against reviewing every item."""
    from santa_core.batch.sampling import percent

    share = f"; this run cost {percent(cost['actual_share'])} of that" if cost["actual_share"] is not None else ""
    fixes = f" plus its fixes, about {words.usd(cost['full_fix_usd'])}" if cost["full_fix_usd"] else ""
    return (
        f"cost: {words.usd(cost['actual_usd'])} spent (about {words.usd(cost['estimated_usd'])} estimated for {samples} "
        f"sample(s)); reviewing every item with both reviewers: about {words.usd(cost['full_usd'])}{fixes}{share}"
    )
