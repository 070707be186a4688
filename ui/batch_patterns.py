"""The patterns of a finished sample: what failed, where, and the one fix a person approves for each.

A pattern's fix is proposed on its representative item, shown as a diff, previewed on the whole
batch ("N items show this pattern"), then approved (optionally with edited replacement text and a
reason) or dismissed with a reason. The review-failed and unexplained groups have no fix: a
person handles their items by hand and marks the group handled.
"""

from __future__ import annotations

from collections import Counter

import streamlit as st

from santa_core import words
from santa_core.batch.fix_batch import auto_fix_note, stopped_fixes
from santa_core.batch.fixing import FixPreview
from santa_core.batch.item_fix import apply_pattern_fix
from santa_core.batch.patterns import Pattern
from santa_core.batch.report import BatchView
from santa_core.batch.sampling import percent
from santa_core.batch.store import Batch, PatternRecord, SampleProgress
from santa_core.models import FixEdit, FixProposal
from santa_core.roles import Permission
from santa_core.text import canonical_json, sha256_text
from ui import batch_actions, batch_reach, components, identity
from ui.batch_actions import POLL_S, attempt, driver
from ui.safe import escape_markdown

KIND_LABEL = {"issue": "pattern", "review_failed": "review failed", "unexplained": "unexplained"}
BY_HAND = {
    "review_failed": "A reviewer failed on these items after retries, so what is wrong with them is not fully known. "
    "Open their runs, fix or check them by hand, then mark the group handled with a note.",
    "unexplained": "These items are NAUGHTY but no reviewer listed an issue, so there is nothing to match or fix "
    "automatically. Open their runs, fix or check them by hand, then mark the group handled.",
}


def patterns_for(view: BatchView) -> list[PatternRecord] | None:
    """The latest (finished) sample's stored patterns; None while its failures are not grouped yet (the driver
    groups them as it closes the sample, the desk's start or sweep one closed before: reading never writes)."""
    sample = view.latest
    stored = view.patterns_of(sample.id)
    return stored if stored or sample.naughty == 0 else None


def grouping(view: BatchView) -> None:
    """The failures are being grouped: say so, and re-read until their patterns are stored, then show the page."""
    batch_id, sample = view.batch.id, view.latest
    st.info(
        f"Sample {sample.number}'s failures are being grouped into patterns… The page shows them as soon as "
        "they are stored."
    )

    @st.fragment(run_every=POLL_S)
    def wait() -> None:
        if driver().view(batch_id).patterns_of(sample.id):
            st.rerun()  # once: stored patterns stay, so the whole page never loops

    wait()


def pending(records: list[PatternRecord]) -> list[PatternRecord]:
    """The patterns still waiting for a decision."""
    return [r for r in records if r.waiting]


def section(view: BatchView, records: list[PatternRecord], runs: dict[str, int | None]) -> None:
    """Every pattern of the sample, biggest first, each with what a person can do about it."""
    batch, sample = view.batch, view.latest
    st.subheader(f"Patterns in sample {sample.number}")
    if not records:
        st.success(f"No item of sample {sample.number} failed review: there is no pattern to fix.")
        return
    st.caption(
        "Failures grouped by criterion and by what the issues say. Approve or dismiss each pattern's fix; "
        "the next sample can be drawn once none is waiting."
    )
    changed = Counter(c.pattern_id for c in view.applied)
    for number, record in enumerate(records, 1):
        with st.container(border=True, key=f"batch_pattern_{record.id}"):
            card(batch, sample, record, number, runs, changed[record.id])


def card(
    batch: Batch, sample: SampleProgress, record: PatternRecord, number: int, runs: dict[str, int | None], changed: int
) -> None:
    """One pattern: what it is, where it shows, its evidence and examples, then the decision."""
    pattern = Pattern.model_validate(record.pattern)
    summary(record, pattern, sample, number)
    evidence(pattern)
    examples(pattern, runs)
    if not record.waiting:
        decided(record, changed)
    elif pattern.kind != "issue":
        st.info(BY_HAND[pattern.kind])
        dismiss_form(batch.id, record, "Mark handled", "What was done with these items")
    else:
        decide(batch, record, pattern)


def summary(record: PatternRecord, pattern: Pattern, sample: SampleProgress, number: int) -> None:
    """Title, kind, criterion, how many sampled items show it and in which strata."""
    st.markdown(f"**{number}. {escape_markdown(record.title)}**")
    share = percent(pattern.count / sample.size) if sample.size else "—"
    # The criterion is in the title, by its name (santa_core.batch.defect.title), not repeated here as its id.
    st.caption(
        escape_markdown(
            f"{KIND_LABEL[pattern.kind]} · {pattern.count} of {sample.size} sampled items "
            f"({share}) · {words.pattern_status(record.status)}"
        )
    )
    for column, counts in pattern.strata.items():
        st.caption(
            escape_markdown(f"{column}: " + ", ".join(f"{value or '(empty)'} {n}" for value, n in counts.items()))
        )


def evidence(pattern: Pattern) -> None:
    """The quotes the reviewers gave (the batch is matched on the ones found in their items)."""
    if not pattern.evidence:
        return
    st.markdown("Evidence quoted by the reviewers")
    for quote in pattern.evidence[:3]:
        st.code(quote, language=None, wrap_lines=True)
    if len(pattern.evidence) > 3:
        st.caption(f"… and {len(pattern.evidence) - 3} more quotes")


def examples(pattern: Pattern, runs: dict[str, int | None]) -> None:
    """Example items, each linked to the run that reviewed it."""
    for key in pattern.examples:
        run_id = runs.get(key)
        mark = " (representative: the fix is proposed on it)" if key == pattern.representative else ""
        if run_id is None:
            st.caption(escape_markdown(f"{key}{mark}"))
            continue
        st.page_link(
            "pages/review.py",
            label=escape_markdown(f"{key} — run #{run_id}{mark}"),
            icon=":material/list_alt:",
            query_params={"run": str(run_id)},
        )


def decided(record: PatternRecord, changed: int) -> None:
    """Who decided the pattern, how, and what it changed."""
    who = identity.display(record.decided_by or "")
    why = f" Reason: {record.reason}" if record.reason else ""
    if record.status == "applied":
        st.success(escape_markdown(f"Fix approved by {who}: {changed} item(s) of the batch changed.{why}"))
    else:
        st.info(escape_markdown(f"Dismissed by {who}.{why}"))


def decide(batch: Batch, record: PatternRecord, pattern: Pattern) -> None:
    """Ask the fix agent, then approve (edits adjustable) or dismiss; read-only for people who may not decide."""
    proposal = FixProposal.model_validate(record.proposal) if record.proposal else None
    if note := auto_fix_note(record):  # the driver's auto-approve took it up (a page never does)
        st.info(
            escape_markdown(
                f"Auto-approve: {note}."
                if note != "claimed"
                else "Auto-approve is fixing this pattern (the batch driver does it, not this page)."
            )
        )
    if why := stopped_fixes(record):
        fixes_stopped(batch.id, record.id, why)
    if not identity.can(Permission.DECIDE_FIX):
        st.info(escape_markdown(identity.refusal(Permission.DECIDE_FIX)))
        if proposal is not None:
            components.proposal_view(proposal)
        return
    batch_reach.signature_panel(batch.id, record, pattern)
    if not pattern.matchable:
        st.warning(
            "No signature or quote of this pattern is specific enough to find it in other items: only its "
            "sampled items will be fixed. Give phrases above, or fix the rest of the batch by hand."
        )
    if proposal is None:
        if st.button(
            "Ask the fix agent",
            key=f"batch_propose_{record.id}",
            type="primary",
            help=f"One fix, proposed on item {pattern.representative}, then each item that shows the "
            "pattern gets its own; nothing changes until you approve.",
        ):
            batch_reach.propose(batch.id, record.id, pattern.representative)
        dismiss_form(batch.id, record, "Dismiss", "Why this is not a defect to fix")
        return
    components.proposal_view(proposal)
    if record.item_fixes is None and proposal.edits and proposal.error is None:
        st.warning(
            "Each item's own fix is not prepared (the signature changed, or preparing was interrupted): "
            "prepare them to see what approving would change."
        )
        if st.button("Prepare each item's fix", key=f"batch_prepare_{record.id}", type="primary"):
            batch_reach.propose(batch.id, record.id, pattern.representative, again=False)
        dismiss_form(batch.id, record, "Dismiss", "Why this is not a defect to fix")
        return
    edits = edited(record, proposal)
    preview = _preview(batch.id, record.id, edits)
    include, exclude = batch_reach.items_table(record, preview, True) if preview is not None else ([], [])
    approve_or_dismiss(batch.id, record, edits, preview, exclude, include)


def fixes_stopped(batch_id: int, pattern_id: int, why: str) -> None:
    """The fixes' Message Batch stopped: why, and a person's Try again (nothing sends it again on its own)."""
    st.warning(
        escape_markdown(
            f"Each item's fix was asked for as one Message Batch, which stopped: {why}. Nothing "
            "sends it again on its own."
        )
    )
    if identity.can(Permission.DECIDE_FIX) and st.button(
        "Try again",
        key=f"batch_fix_retry_{pattern_id}",
        help="Send the fixes' Message Batch again (or poll the one already made) and prepare each item's fix from it.",
    ):
        attempt(
            batch_id,
            lambda: driver().retry_fixes(pattern_id, identity.actor()),
            lambda plans: f"Each item's fix is prepared ({len(plans)} item(s)).",
        )
        st.rerun()


def edited(record: PatternRecord, proposal: FixProposal) -> list[FixEdit]:
    """The proposal's edits, with the replacement text as the person left it in the boxes."""
    if not proposal.edits:
        return []
    edits = []
    with st.expander(
        "Edit the replacement text (applied where an item shows the same words; the fix agent's "
        "own fixes of the other items are not changed)"
    ):
        for i, edit in enumerate(proposal.edits):
            st.caption(escape_markdown(f"Edit {i + 1} replaces exactly: {edit.before}"))
            # Keyed by the edit as proposed: a new proposal (someone asked again) starts from its own text, never
            # from the boxes of the one before.
            key = f"batch_after_{record.id}_{i}_{sha256_text(canonical_json(edit.model_dump(mode='json')))[:12]}"
            after = st.text_area(f"Edit {i + 1}: replace with", edit.after, key=key)
            edits.append(edit.model_copy(update={"after": after}))
    if edits != proposal.edits:
        fixed = apply_pattern_fix(proposal.before_text, edits).after_text
        st.markdown("As you edited it, on the representative item")
        st.code(
            components.readable_diff(proposal.before_text, fixed, "current output", "as edited"),
            language="diff",
            wrap_lines=True,
        )
    return edits


def _preview(batch_id: int, pattern_id: int, edits: list[FixEdit]) -> FixPreview | None:
    try:
        return driver().preview(pattern_id, edits)
    except batch_actions.REFUSED as exc:
        st.error(escape_markdown(str(exc)))
        return None


def approve_or_dismiss(
    batch_id: int,
    record: PatternRecord,
    edits: list[FixEdit],
    preview: FixPreview | None,
    exclude: list[str],
    include: list[str],
) -> None:
    """Approve the fix for the whole batch, dismiss the pattern, or ask the fix agent again."""
    reason = st.text_input("Reason (optional to approve, required to dismiss)", key=f"batch_reason_{record.id}")
    approve, dismiss, again = st.columns(3)
    # The version approved is the one this render shows, bound to the button now: the click's own rerun computes the
    # preview again from whatever is stored by then, which nobody saw.
    if approve.button(
        "Approve and apply to the batch",
        type="primary",
        key=f"batch_approve_{record.id}",
        disabled=not edits or preview is None,
        on_click=_remember_seen,
        args=(record.id, preview.version if preview is not None else None),
    ):
        _approve(batch_id, record.id, edits, reason, preview, exclude, include)
    if dismiss.button("Dismiss", key=f"batch_dismiss_{record.id}"):
        _dismiss(batch_id, record.id, reason)
    if again.button("Ask the fix agent again", key=f"batch_repropose_{record.id}"):
        batch_reach.propose(batch_id, record.id, Pattern.model_validate(record.pattern).representative)


def _approve(
    batch_id: int,
    pattern_id: int,
    edits: list[FixEdit],
    reason: str,
    preview: FixPreview | None,
    exclude: list[str],
    include: list[str],
) -> None:
    held = [k for k in (preview.held if preview is not None else {}) if k not in include]
    skipped = [k for k in (preview.skipped if preview is not None else []) if k not in exclude and k not in held]
    note = (
        f" {len(skipped)} item(s) show the pattern but no fix reached them — fix them by hand below: "
        f"{', '.join(skipped[:20])}."
        if skipped
        else ""
    )
    note += f" Excluded, unchanged: {', '.join(exclude[:20])}." if exclude else ""
    note += f" Left out (excluded from another pattern's fix): {', '.join(held[:20])}." if held else ""
    seen = st.session_state.pop(_seen_key(pattern_id), None)
    if preview is None or seen is None:
        return  # (the button is disabled without one: nobody approves what they did not see)
    attempt(
        batch_id,
        lambda: driver().approve(
            pattern_id, identity.actor(), seen=seen, edits=edits, reason=reason, exclude=exclude, include=include
        ),
        lambda changed: escape_markdown(f"Fix applied: {changed} item(s) of the batch changed.{note}"),
    )
    st.rerun()


def _seen_key(pattern_id: int) -> str:
    return f"batch_seen_{pattern_id}"


def _remember_seen(pattern_id: int, version: str | None) -> None:
    """The Approve button's callback: the plan version on the screen the person clicked on."""
    st.session_state[_seen_key(pattern_id)] = version


def _dismiss(batch_id: int, pattern_id: int, reason: str) -> None:
    attempt(
        batch_id,
        lambda: driver().dismiss(pattern_id, identity.actor(), reason),
        lambda _: "Dismissed: the items keep their text.",
    )
    st.rerun()


def dismiss_form(batch_id: int, record: PatternRecord, label: str, placeholder: str) -> None:
    """Dismiss (or mark handled) with a reason, for people who may decide fixes."""
    if not identity.can(Permission.DECIDE_FIX):
        st.info(escape_markdown(identity.refusal(Permission.DECIDE_FIX)))
        return
    left, right = st.columns([3, 1], vertical_alignment="bottom")
    reason = left.text_input("Reason (required)", key=f"batch_reason_{record.id}", placeholder=placeholder)
    if right.button(label, key=f"batch_dismiss_{record.id}"):
        _dismiss(batch_id, record.id, reason)
