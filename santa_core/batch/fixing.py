"""A pattern's fix, from proposal to every item: the batch driver's side of `santa_core.batch.reach`.

1. `propose`: the fix agent fixes the pattern's representative item (only its issues), then every
   other item the pattern reaches gets its own fix prepared — the approved edits as a text rule
   where they apply exactly, else the fix agent on that item alone (several at a time), each
   under the scope rule. The plans are stored; nothing changes yet.
2. `preview`: what approving would change, item by item (a person can open any item's diff).
3. `approve`: one decision applies every prepared fix except the items a person excluded, in one
   transaction; an item that changed meanwhile refuses the whole approval.
4. `edit_by_hand`: an item no fix could reach is fixed by a person, recorded as theirs.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
from collections.abc import Callable, Collection, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass

import anthropic

from santa_core.batch import patterns, reach
from santa_core.batch import signature as sig
from santa_core.batch import store as batch_store
from santa_core.batch.store import Batch, BatchProblem, Item, ItemChange, PatternRecord
from santa_core.models import FixEdit, FixProposal
from santa_core.providers import message_batches_problem
from santa_core.reviewers import fix_batches
from santa_core.reviewers import message_batches as mb
from santa_core.reviewers.base import FixAnswer, Fixer, FixRequest
from santa_core.roles import Permission
from santa_core.run.fixer import propose_fix
from santa_core.run.gate import normalise

log = logging.getLogger(__name__)
Progress = Callable[[int, int], None]
"""Called with (done, total) as the items' fixes are prepared, from the calling thread."""


@dataclass
class FixPreview:
    """What approving a pattern's fix would do: the items it reaches and each one's change."""

    pattern: PatternRecord
    edits: list[FixEdit]
    changes: dict[str, patterns.ItemFix]
    """Item key → the fix applied to it (only items the pattern reaches)."""
    plans: dict[str, reach.ItemPlan]
    """Item key → how its fix was prepared (empty for a person's own edits with no proposal)."""

    @property
    def version(self) -> str:
        """A fingerprint of what the person is shown: an approval of another version is refused."""
        shown = {"edits": [e.model_dump(mode="json") for e in self.edits], "proposal": self.pattern.proposal,
                 "plans": self.pattern.item_fixes, "signature": self.pattern.pattern.get("signature")}
        return hashlib.sha256(json.dumps(shown, sort_keys=True, default=str).encode()).hexdigest()[:16]

    @property
    def changed(self) -> int:
        return sum(f.changed for f in self.changes.values())

    @property
    def skipped(self) -> list[str]:
        """Items that show the pattern and need a person (no fix could reach them)."""
        if self.plans:
            return [k for k, p in self.plans.items() if k in self.changes and p.needs_person]
        return [k for k, f in self.changes.items() if not f.changed]


class PatternFixing:
    """Mixed into `BatchDriver`: needs its `store`, `fixer_for` and `_batch_of`/`_item`."""

    store: batch_store.Store
    fixer_for: Callable[[str], Fixer]
    client_for: Callable[[], anthropic.Anthropic] | None
    poll_s: float
    _stopping: threading.Event

    def _batch_of(self, record: PatternRecord) -> Batch:
        raise NotImplementedError

    def _item(self, batch: Batch, key: str) -> Item:
        raise NotImplementedError

    def propose(self, pattern_id: int, actor: str, progress: Progress | None = None) -> FixProposal:
        """Ask the fix agent for the representative's fix, then prepare every other reached item's fix."""
        self.store.require(actor, Permission.DECIDE_FIX)  # before the paid call, not after
        record = self.store.pattern(pattern_id)
        pattern = patterns.Pattern.model_validate(record.pattern)
        if pattern.kind != "issue":
            raise BatchProblem("this group has no issue to fix: review or fix its items by hand")
        batch = self._batch_of(record)
        item = self._item(batch, pattern.representative)
        proposal = propose_fix(self.fixer_for(batch.config.fixer), item.spec, item.output,
                               patterns.pattern_fix_issues(pattern))
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
        plans = {pattern.representative: reach.ItemPlan(
            key=pattern.representative, sampled=True, via="representative", issues=proposal.issues,
            before_text=proposal.before_text, after_text=proposal.proposed_text, applied=proposal.edits,
            skipped=proposal.rejected, cost_usd=proposal.cost_usd, error=proposal.error)}
        agent: list[str] = []
        for key, issues in targets.items():
            if key == pattern.representative:
                continue
            sampled = key in pattern.items
            if not issues:
                plans[key] = reach.ItemPlan(key=key, sampled=sampled, via="fix agent", before_text=items[key].output,
                                            after_text=items[key].output, error=reach.UNLOCATED)
                continue
            plan = reach.rule_plan(key, sampled, issues, items[key].output, proposal.edits)  # judged by its issues
            if plan is not None:
                plans[key] = plan
            else:
                agent.append(key)
        fixer = self.fixer_for(batch.config.fixer)
        asks = {k: FixRequest(spec=items[k].spec, output=items[k].output,
                              issues=reach.with_example(targets[k], proposal.edits)) for k in agent}
        if progress is not None:
            progress(0, len(asks))
        for key, answer in self._fix_all(batch, fixer, asks, progress):
            plans[key] = reach.agent_plan(key, key in pattern.items, targets[key], answer)
        ordered = {k: plans[k] for k in items if k in plans}
        self.store.save_item_fixes(pattern_id, {k: p.model_dump(mode="json") for k, p in ordered.items()}, actor)
        return ordered

    def _fix_all(self, batch: Batch, fixer: Fixer, asks: dict[str, FixRequest],
                 progress: Progress | None) -> Iterator[tuple[str, FixProposal]]:
        """Each item's fix: as one Message Batch at the discount when the batch reviews through it (and the fix
        agent is a Claude model), else synchronous calls, several at a time."""
        answers = self._fix_batch(batch, asks, progress) if self._batched_fixes(batch, len(asks)) else None
        if answers is not None:
            for key, request in asks.items():
                yield key, propose_fix(fix_batches.Answered(fixer.name, answers[key]), request.spec,
                                       request.output, request.issues)
            return
        done = 0
        with ThreadPoolExecutor(max(1, min(batch.config.concurrency, len(asks) or 1)),
                                thread_name_prefix="santa-batch-fix") as pool:
            futures = {pool.submit(propose_fix, fixer, r.spec, r.output, r.issues): k for k, r in asks.items()}
            for future in as_completed(futures):
                done += 1
                yield futures[future], future.result()
                if progress is not None:
                    progress(done, len(asks))

    def _batched_fixes(self, batch: Batch, count: int) -> bool:
        return (batch.config.message_batches and count > 1 and self.client_for is not None
                and message_batches_problem(batch.config.fixer, batch.config.fixer) is None)

    def _fix_batch(self, batch: Batch, asks: dict[str, FixRequest],
                   progress: Progress | None) -> dict[str, FixAnswer] | None:
        """The fixes as one Message Batch, polled until it ends; None when it could not be sent or read (the
        caller falls back to synchronous calls, so a person is never left without the fixes)."""
        assert self.client_for is not None
        client = self.client_for()
        jobs = {key: fix_batches.FixJob(custom_id=f"fix-{n}", model=batch.config.fixer, request=request)
                for n, (key, request) in enumerate(asks.items())}
        try:
            api_id = fix_batches.submit(client, list(jobs.values()))
            while True:
                status = mb.poll(client, api_id)
                if progress is not None:
                    counts = status.request_counts
                    progress(len(asks) - counts.processing, len(asks))
                if status.ended:
                    found = fix_batches.answers(client, api_id, list(jobs.values()))
                    return {key: found[job.custom_id] for key, job in jobs.items()}
                if self._stopping.wait(self.poll_s):
                    return None
        except mb.BatchError as exc:
            log.warning("the fixes' Message Batch failed (%s): asking one at a time instead", exc)
            return None

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
        items = self.store.items(self._batch_of(record).id)
        if proposal is not None and record.item_fixes is None:
            raise BatchProblem("each item's own fix is not prepared (the signature changed, or preparing stopped): "
                               "prepare them before approving")
        if proposal is None:  # a person's own edits with no proposal: the edits as a text rule only
            changes = patterns.apply_to_batch(pattern, edits, [(it.key, it.output) for it in items])
            return FixPreview(record, edits, changes, {})
        plans = {k: reach.ItemPlan.model_validate(v) for k, v in record.item_fixes.items()}
        outputs = {it.key: it.output for it in items}
        changes: dict[str, patterns.ItemFix] = {}
        for key, plan in plans.items():
            if plan.via in ("representative", "text rule") and edits != proposal.edits:
                # The person edited the replacement text: the text rule applies their words.
                plans[key] = reach.retext(plan, outputs.get(key, plan.before_text), edits)
            changes[key] = plans[key].item_fix()
        return FixPreview(record, edits, changes, plans)

    def approve(self, pattern_id: int, actor: str, edits: Sequence[FixEdit] | None = None, reason: str = "",
                exclude: Collection[str] = (), seen: str | None = None) -> int:
        """Apply every prepared fix of the pattern except the excluded items; how many items changed.

        `seen`: the `FixPreview.version` the person looked at; refused when the fixes changed since (someone
        asked the fix agent again, or changed the signature), so nobody approves what they did not see.
        """
        preview = self.preview(pattern_id, edits)
        if seen is not None and seen != preview.version:
            raise BatchProblem("the fixes changed since you opened them (someone asked the fix agent again or changed "
                               "the signature): look at them again before approving")
        unknown = set(exclude) - set(preview.changes)
        if unknown:
            raise BatchProblem(f"cannot exclude {', '.join(sorted(unknown))}: the pattern does not reach it")
        if exclude and set(exclude) >= set(preview.changes):
            raise BatchProblem("every item is excluded, so nothing would be fixed: dismiss the pattern with a reason "
                               "instead")
        if exclude and not reason.strip():
            raise BatchProblem("say why the excluded items keep their text (the reason is kept with the decision)")
        ids = {it.key: it.id for it in self.store.items(self._batch_of(preview.pattern).id)}
        changes = []
        for key, fix in preview.changes.items():
            plan = preview.plans.get(key)
            if key in exclude:
                continue  # a person said the pattern does not belong here
            skipped = [r.model_dump() for r in fix.skipped]
            if plan is not None and not fix.changed and not skipped:
                why = f"the fix agent failed: {plan.error}" if plan.error else "the fix agent made no edit here"
                skipped.append({"reason": why})
            changes.append(ItemChange(item_id=ids[key], before_text=fix.before_text, after_text=fix.after_text,
                                      applied=[e.model_dump() for e in fix.applied], skipped=skipped))
        if exclude:
            reason = f"{reason} (excluded by {actor}: {', '.join(sorted(exclude))})".strip()
        return self.store.apply_fix(pattern_id, [e.model_dump() for e in preview.edits], changes, actor, reason)

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
            raise BatchProblem(f"“{stray[0]}” is not in what the reviewers quoted: a signature must point at the defect "
                               "itself, in words taken from the quotes")
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
        return ({k: t for k, t in reviewed.items() if k in members},
                {k: t for k, t in reviewed.items() if k not in members})

    def edit_by_hand(self, pattern_id: int, key: str, before_text: str, after_text: str, actor: str,
                     reason: str = "") -> None:
        """A person's own edit of one item of the pattern's batch (refused if it changed since they opened it)."""
        record = self.store.pattern(pattern_id)
        reached = set(record.pattern.get("items", [])) | set(record.item_fixes or {})
        if key not in reached:
            raise BatchProblem(f"item {key} is not one the pattern reaches: open its run, or the pattern that does")
        item = self._item(self._batch_of(record), key)
        self.store.edit_by_hand(pattern_id, item.id, before_text, after_text, actor, reason)

