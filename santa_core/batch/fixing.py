"""A pattern's fix, from proposal to every item: the batch driver's side of `santa_core.batch.reach`.

1. `propose`: the fix agent fixes the pattern's representative item (only its issues), then every
   other item the pattern reaches gets its own fix prepared — the approved edits as a text rule
   where they apply exactly, else the fix agent on that item alone (several at a time), each
   under the scope rule. The plans are stored; nothing changes yet.
2. `preview`: what approving would change, item by item (a person can open any item's diff).
3. `approve`: one decision applies every prepared fix except the items a person excluded, in one
   transaction; an item that changed meanwhile refuses the whole approval.
4. `edit_by_hand`: an item no fix could reach is fixed by a person, recorded as theirs.

Every fix agent call is on record: committed as sent (batch_id set) before it leaves, its answer stored after
(`fix_batches.OnRecord`; the fixes' Message Batch in `fix_batch`). For a batch created with auto-approve the
driver (never a page) proposes and approves each pattern's fix as `auto-approve`, only when the plan is complete
(`auto_fix`); otherwise the pattern waits for a person.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Collection, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field

from santa_core.batch import item_fix, patterns, reach
from santa_core.batch import signature as sig
from santa_core.batch.exclusions import Held, held
from santa_core.batch.fix_batch import FixBatchSending, Progress
from santa_core.batch.store import Batch, BatchProblem, Item, ItemChange, PatternRecord
from santa_core.models import FixEdit, FixProposal
from santa_core.providers import message_batches_problem
from santa_core.reviewers import fix_batches
from santa_core.reviewers.base import Fixer, FixRequest
from santa_core.roles import Permission
from santa_core.run.fixer import is_complete, propose_fix
from santa_core.run.gate import normalise

log = logging.getLogger(__name__)
AUTO_APPROVER = "auto-approve"
"""Who approves a pattern's fix in a batch created with auto-approve: a system actor, as for a run."""
AUTO_REASON = (
    "auto-approved: the batch was created with auto-approve, and every item the pattern reaches has a complete fix"
)


@dataclass
class FixPreview:
    """What approving a pattern's fix would do: the items it reaches and each one's change."""

    pattern: PatternRecord
    edits: list[FixEdit]
    changes: dict[str, item_fix.ItemFix]
    """Item key → the fix applied to it (only items the pattern reaches)."""
    plans: dict[str, reach.ItemPlan]
    """Item key → how its fix was prepared (empty for a person's own edits with no proposal)."""
    held: dict[str, Held] = field(default_factory=dict)
    """Reached items a person excluded from another pattern's fix: approving leaves them out unless included."""

    @property
    def version(self) -> str:
        """A fingerprint of what the person is shown: an approval of another version is refused."""
        shown = {
            "edits": [e.model_dump(mode="json") for e in self.edits],
            "proposal": self.pattern.proposal,
            "plans": self.pattern.item_fixes,
            "signature": self.pattern.pattern.get("signature"),
        }
        return hashlib.sha256(json.dumps(shown, sort_keys=True, default=str).encode()).hexdigest()[:16]

    @property
    def changed(self) -> int:
        return sum(f.changed for f in self.changes.values())

    def incomplete(self) -> str | None:
        """Why auto-approve may not apply this plan (None: complete): every reached item has a prepared fix that
        replaces the quoted text of every issue it has, none needs a person, none was skipped or failed."""
        if not self.plans or not self.edits:
            return "the fix agent proposed no edit that applies"
        for key, plan in self.plans.items():
            proposal = FixProposal(
                issues=plan.issues,
                edits=plan.applied,
                rejected=plan.skipped,
                before_text=plan.before_text,
                proposed_text=plan.after_text,
            )
            if plan.error or plan.skipped or plan.needs_person or not is_complete(proposal):
                return f"item {key}: {plan.outcome() if not plan.changed else 'its fix leaves an issue unfixed'}"
        return None

    @property
    def skipped(self) -> list[str]:
        """Items that show the pattern and need a person (no fix could reach them)."""
        if self.plans:
            return [k for k, p in self.plans.items() if k in self.changes and p.needs_person]
        return [k for k, f in self.changes.items() if not f.changed]


class PatternFixing(FixBatchSending):
    """Mixed into `BatchDriver`: needs its `store`, `fixer_for` and `client_for`."""

    fixer_for: Callable[[str], Fixer]

    def _batch_of(self, record: PatternRecord) -> Batch:
        """The batch of a pattern's sample."""
        return self.store.get(self.store.progress(record.sample_id).batch_id)

    def _item(self, batch: Batch, key: str) -> Item:
        """The batch's item with this key (BatchProblem when it has none)."""
        for item in self.store.items(batch.id):
            if item.key == key:
                return item
        raise BatchProblem(f"item {key} is not in batch {batch.id}")

    def propose(self, pattern_id: int, actor: str, progress: Progress | None = None) -> FixProposal:
        """Ask the fix agent for the representative's fix, then prepare every other reached item's fix."""
        self.store.require(actor, Permission.DECIDE_FIX)  # before the paid call, not after
        record = self.store.pattern(pattern_id)
        pattern = patterns.Pattern.model_validate(record.pattern)
        if pattern.kind != "issue":
            raise BatchProblem("this group has no issue to fix: review or fix its items by hand")
        batch = self._batch_of(record)
        item = self._item(batch, pattern.representative)
        proposal = propose_fix(
            self._on_record(pattern_id, self.fixer_for(batch.config.fixer)),
            item.spec,
            item.output,
            patterns.pattern_fix_issues(pattern),
        )
        self.store.save_proposal(pattern_id, proposal.model_dump(mode="json"), actor)
        if proposal.error is None and proposal.edits:  # no example to follow: nothing else is asked (or paid)
            self.prepare(pattern_id, actor, progress)
        return proposal

    def prepare(self, pattern_id: int, actor: str, progress: Progress | None = None) -> dict[str, reach.ItemPlan]:
        """Each reached item's own fix, from the stored proposal (text rule first, else the fix agent); stored."""
        self.store.require(actor, Permission.DECIDE_FIX)  # before the paid calls, not after
        record = self.store.pattern(pattern_id)
        if record.proposal is None:
            raise BatchProblem("ask the fix agent for a proposal first")
        pattern = patterns.Pattern.model_validate(record.pattern)
        proposal = FixProposal.model_validate(record.proposal)
        batch = self._batch_of(record)
        items = {it.key: it for it in self.store.items(batch.id)}
        targets = reach.reached(pattern, [(k, it.output) for k, it in items.items()], self._unsampled(batch.id, items))
        plans = {
            pattern.representative: reach.ItemPlan(
                key=pattern.representative,
                sampled=True,
                via="representative",
                issues=proposal.issues,
                before_text=proposal.before_text,
                after_text=proposal.proposed_text,
                applied=proposal.edits,
                skipped=proposal.rejected,
                cost_usd=proposal.cost_usd,
                error=proposal.error,
            )
        }
        agent: list[str] = []
        for key, issues in targets.items():
            if key == pattern.representative:
                continue
            sampled = key in pattern.items
            if not issues:
                plans[key] = reach.ItemPlan(
                    key=key,
                    sampled=sampled,
                    via="fix agent",
                    before_text=items[key].output,
                    after_text=items[key].output,
                    error=reach.UNLOCATED,
                )
                continue
            plan = reach.rule_plan(key, sampled, issues, items[key].output, proposal.edits)  # judged by its issues
            if plan is not None:
                plans[key] = plan
            else:
                agent.append(key)
        fixer = self._on_record(pattern_id, self.fixer_for(batch.config.fixer))
        asks = {
            k: FixRequest(
                spec=items[k].spec, output=items[k].output, issues=reach.with_example(targets[k], proposal.edits)
            )
            for k in agent
        }
        if progress is not None:
            progress(0, len(asks))
        for key, answer in self._fix_all(pattern_id, batch, fixer, asks, progress):
            plans[key] = reach.agent_plan(key, key in pattern.items, targets[key], answer)
        ordered = {k: plans[k] for k in items if k in plans}
        self.store.save_item_fixes(pattern_id, {k: p.model_dump(mode="json") for k, p in ordered.items()}, actor)
        return ordered

    def _on_record(self, pattern_id: int, fixer: Fixer) -> Fixer:
        """The fix agent with every call on record for the pattern's batch: sent before it leaves, answered after."""
        return fix_batches.OnRecord(
            fixer, self._fix_note(pattern_id), lambda calls: self.store.save_fix_calls(pattern_id, calls)
        )

    def _fix_all(
        self, pattern_id: int, batch: Batch, fixer: Fixer, asks: dict[str, FixRequest], progress: Progress | None
    ) -> Iterator[tuple[str, FixProposal]]:
        """Each item's fix: as one Message Batch at the discount when the batch reviews through it (and the fix
        agent is a Claude model), else synchronous calls, several at a time. A Message Batch that stopped or may
        exist unseen raises (`FixesStopped`): never replaced by synchronous calls, which would pay twice."""
        answers = self._fix_batch(pattern_id, batch, asks, progress) if self._batched_fixes(batch, len(asks)) else None
        if answers is not None:
            for key, request in asks.items():
                if key in answers:
                    yield (
                        key,
                        propose_fix(
                            fix_batches.Answered(fixer.name, answers[key]), request.spec, request.output, request.issues
                        ),
                    )
            asks = {k: r for k, r in asks.items() if k not in answers}  # (a batch sent before the items changed)
        done = 0
        with ThreadPoolExecutor(
            max(1, min(batch.config.concurrency, len(asks) or 1)), thread_name_prefix="santa-batch-fix"
        ) as pool:
            futures = {pool.submit(propose_fix, fixer, r.spec, r.output, r.issues): k for k, r in asks.items()}
            for future in as_completed(futures):
                done += 1
                yield futures[future], future.result()
                if progress is not None:
                    progress(done, len(asks))

    def _batched_fixes(self, batch: Batch, count: int) -> bool:
        return (
            batch.config.message_batches
            and count > 1
            and self.client_for is not None
            and message_batches_problem(batch.config.fixer, batch.config.fixer) is None
        )

    def _unsampled(self, batch_id: int, items: dict[str, Item]) -> set[str]:
        """Keys of the items no sample of the batch drew."""
        drawn = {r.key for s in self.store.get(batch_id).samples for r in self.store.reviews(s.id)}
        return set(items) - drawn

    def preview(self, pattern_id: int, edits: Sequence[FixEdit] | None = None) -> FixPreview:
        """What approving the pattern's fix (its proposal's edits, or `edits` as a person left them) would change."""
        record = self.store.pattern(pattern_id)
        pattern = patterns.Pattern.model_validate(record.pattern)
        if record.proposal is None and edits is None:
            raise BatchProblem("ask the fix agent for a proposal first")
        proposal = FixProposal.model_validate(record.proposal) if record.proposal is not None else None
        edits = list(proposal.edits if edits is None and proposal is not None else edits or [])
        batch = self._batch_of(record)
        items = self.store.items(batch.id)
        if proposal is None:  # a person's own edits with no proposal: the edits as a text rule only
            ruled = item_fix.apply_to_batch(pattern, edits, [(it.key, it.output) for it in items])
            return FixPreview(record, edits, ruled, {}, self._held(batch, record, ruled))
        if record.item_fixes is None:
            raise BatchProblem(
                "each item's own fix is not prepared (the signature changed, or preparing stopped): "
                "prepare them before approving"
            )
        plans = {k: reach.ItemPlan.model_validate(v) for k, v in record.item_fixes.items()}
        outputs = {it.key: it.output for it in items}
        changes: dict[str, item_fix.ItemFix] = {}
        for key, plan in plans.items():
            if plan.via in ("representative", "text rule") and edits != proposal.edits:
                # The person edited the replacement text: the text rule applies their words.
                plans[key] = reach.retext(plan, outputs.get(key, plan.before_text), edits)
            changes[key] = plans[key].item_fix()
        return FixPreview(record, edits, changes, plans, self._held(batch, record, changes))

    def _held(self, batch: Batch, record: PatternRecord, reached: Collection[str]) -> dict[str, Held]:
        """The reached items a person excluded from another pattern's approved fix (`exclusions`)."""
        others = [r for r in self.store.patterns(batch.id) if r.id != record.id]
        found = held(others, {s.id: s.number for s in batch.samples})
        return {k: h for k, h in found.items() if k in reached}

    def approve(
        self,
        pattern_id: int,
        actor: str,
        *,
        seen: str,
        edits: Sequence[FixEdit] | None = None,
        reason: str = "",
        exclude: Collection[str] = (),
        include: Collection[str] = (),
    ) -> int:
        """Apply every prepared fix of the pattern except the excluded items; how many items changed.

        `seen`: the `FixPreview.version` the approver looked at (required on every door); refused when the fixes
        changed since (someone asked the fix agent again, or changed the signature), so nobody approves what they
        did not see. An item a person excluded from another pattern's fix is left out too (`exclusions`), unless
        `include` names it (with a reason): every door that approves (the page, auto-approve) goes through here.
        """
        preview = self.preview(pattern_id, edits)
        if seen != preview.version:
            raise BatchProblem(
                "the fixes changed since you opened them (someone asked the fix agent again or changed "
                "the signature): look at them again before approving"
            )
        unknown = set(exclude) - set(preview.changes)
        if unknown:
            raise BatchProblem(f"cannot exclude {', '.join(sorted(unknown))}: the pattern does not reach it")
        if exclude and set(exclude) >= set(preview.changes):
            raise BatchProblem(
                "every item is excluded, so nothing would be fixed: dismiss the pattern with a reason instead"
            )
        if exclude and not reason.strip():
            raise BatchProblem("say why the excluded items keep their text (the reason is kept with the decision)")
        if stray := sorted(set(include) - set(preview.held)):
            raise BatchProblem(f"cannot include {', '.join(stray)}: no other pattern's fix excluded it")
        if include and not reason.strip():
            raise BatchProblem(
                "say why this fix may rewrite items excluded from another pattern (the reason is kept "
                "with the decision)"
            )
        kept = {k: h.note() for k, h in preview.held.items() if k not in include}  # excluded before: left out again
        left_out = set(exclude) | set(kept)
        if left_out and left_out >= set(preview.changes):
            raise BatchProblem(
                "every item is excluded (here or from another pattern's fix), so nothing would be "
                "fixed: dismiss the pattern with a reason, or include an item"
            )
        ids = {it.key: it.id for it in self.store.items(self._batch_of(preview.pattern).id)}
        changes = []
        for key, fix in preview.changes.items():
            plan = preview.plans.get(key)
            if key in left_out:
                continue  # a person said the pattern does not belong here (or another pattern's fix must not reach it)
            skipped = [r.model_dump() for r in fix.skipped]
            if plan is not None and not fix.changed and not skipped:
                why = f"the fix agent failed: {plan.error}" if plan.error else "the fix agent made no edit here"
                skipped.append({"reason": why})
            changes.append(
                ItemChange(
                    item_id=ids[key],
                    before_text=fix.before_text,
                    after_text=fix.after_text,
                    applied=[e.model_dump() for e in fix.applied],
                    skipped=skipped,
                )
            )
        own = reason.strip()
        if exclude:
            reason = f"{reason} (excluded by {actor}: {', '.join(sorted(exclude))})".strip()
        if kept:
            reason = f"{reason} (left out, excluded from another pattern: {', '.join(sorted(kept))})".strip()
        if include:
            reason = (
                f"{reason} (included by {actor} though excluded from another pattern: "
                f"{', '.join(sorted(include))})".strip()
            )
        return self.store.apply_fix(
            pattern_id,
            [e.model_dump() for e in preview.edits],
            changes,
            actor,
            reason,
            excluded={k: own for k in exclude} | kept,
            included={k: own for k in include},
        )

    def auto_fix(self, sample_id: int) -> dict[int, str]:
        """For a batch created with auto-approve, the driver's step after grouping a sample: each waiting issue
        pattern is proposed, prepared and approved as `auto-approve` when its plan is complete (`incomplete`);
        pattern id → why it waits for a person otherwise. Each pattern is claimed once (stored first), so two
        processes closing one sample never pay for its fixes twice, and a pattern a person asked about is theirs."""
        batch = self.store.get(self.store.progress(sample_id).batch_id)
        waits: dict[int, str] = {}
        if not batch.config.auto_approve:
            return waits
        for record in self.store.patterns(batch.id, sample_id):
            if (
                not record.waiting
                or record.proposal is not None
                or record.pattern.get("kind", "issue") != "issue"
                or not self.store.note_auto_fix(record.id, "claimed", claim=True)
            ):
                continue
            try:
                why = self._auto_one(record.id)
            except Exception as exc:  # noqa: BLE001 - whatever stops it, the pattern waits for a person (fail closed)
                log.warning("auto-approve of pattern %s stopped: %s", record.id, exc)
                why = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            self.store.note_auto_fix(record.id, "approved" if why is None else f"waits for a person: {why}")
            if why is not None:
                waits[record.id] = why
        return waits

    def _auto_one(self, pattern_id: int) -> str | None:
        """Propose, prepare and (when complete) approve one pattern's fix as auto-approve; why it waits, or None."""
        proposal = self.propose(pattern_id, AUTO_APPROVER)
        if proposal.error or not proposal.edits:
            return proposal.error or "the fix agent proposed no edit that applies"
        preview = self.preview(pattern_id)
        if why := preview.incomplete():
            return why
        self.approve(pattern_id, AUTO_APPROVER, seen=preview.version, reason=AUTO_REASON)
        return None

    def set_signature(self, pattern_id: int, text: str, actor: str) -> PatternRecord:
        """A person's signature (one phrase a line), validated against the sample before it is kept."""
        record = self.store.pattern(pattern_id)
        pattern = patterns.Pattern.model_validate(record.pattern)
        try:
            phrases = sig.parse(text)
        except ValueError as exc:
            raise BatchProblem(str(exc)) from exc
        quotes = [q for k in pattern.items for q in pattern.quoted_in(k)]
        if stray := [p for p in phrases if not any(sig.shows(normalise(q), normalise(p)) for q in quotes)]:
            raise BatchProblem(
                f"“{stray[0]}” is not in what the reviewers quoted: a signature must point at the defect "
                "itself, in words taken from the quotes"
            )
        found, others = self.sample_sides(record.sample_id, pattern)
        check = sig.check(phrases, found, others)
        if not check.valid:
            raise BatchProblem(f"this signature {check.summary()}")
        kept = self.store.set_signature(pattern_id, phrases, check.model_dump(mode="json"), actor)
        if kept.proposal is not None:  # the items it reaches changed: their fixes are prepared again
            self.prepare(pattern_id, actor)
            kept = self.store.pattern(pattern_id)
        return kept

    def sample_sides(self, sample_id: int, pattern: patterns.Pattern) -> tuple[dict[str, str], dict[str, str]]:
        """(sampled items the pattern was found in, the other reviewed sampled items): key → reviewed text."""
        reviewed = {r.key: r.output for r in self.store.reviews(sample_id) if r.done}
        members = set(pattern.items)
        return (
            {k: t for k, t in reviewed.items() if k in members},
            {k: t for k, t in reviewed.items() if k not in members},
        )

    def edit_by_hand(
        self, pattern_id: int, key: str, before_text: str, after_text: str, actor: str, reason: str = ""
    ) -> None:
        """A person's own edit of one item of the pattern's batch (refused if it changed since they opened it)."""
        record = self.store.pattern(pattern_id)
        reached = set(record.pattern.get("items", [])) | set(record.item_fixes or {})
        if key not in reached:
            raise BatchProblem(f"item {key} is not one the pattern reaches: open its run, or the pattern that does")
        item = self._item(self._batch_of(record), key)
        self.store.edit_by_hand(pattern_id, item.id, before_text, after_text, actor, reason)
