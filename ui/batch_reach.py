"""Where a pattern's fix reaches, on the Batch page: its signature, every item's own fix, and the
items a person fixes by hand.

- the signature (what recognises the defect in unsampled items) with how it fared on the sample,
  and a form to replace it (checked against the sample before it is kept);
- while the fixes are prepared, a progress bar (the representative first, then each item);
- every reached item in one table (sampled or not, how its fix was made, what it does), any item's
  diff one pick away, and the items a person excludes from the approval;
- after approval, each item no fix could reach with an editor: the person's text is recorded as
  their edit (`fixed by hand` in the export).
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from santa_core.batch.fixing import FixPreview
from santa_core.batch.patterns import Pattern
from santa_core.batch.report import BatchView
from santa_core.batch.store import PatternRecord
from santa_core.roles import Permission
from ui import components, identity
from ui.batch_actions import attempt, driver
from ui.new_run import counter
from ui.safe import escape_markdown


def signature_panel(batch_id: int, record: PatternRecord, pattern: Pattern) -> None:
    """What recognises the pattern in items nobody reviewed, and a form to say it better."""
    check = pattern.signature_check
    if pattern.signature:
        shown = ", ".join(f"“{p}”" for p in pattern.signature)
        st.markdown(escape_markdown(f"Recognised in unsampled items by {shown}"))
        if check is not None:
            st.caption(escape_markdown(f"On the sample, this {check.summary()}."))
    else:
        why = f" (the phrases the quotes share {check.summary()})" if check is not None and check.found_in else ""
        st.caption(
            escape_markdown(
                f"No signature{why}: the fix reaches the sampled items and items that show one of "
                "the exact quotes. Give phrases that recognise the defect below."
            )
        )
    if not identity.can(Permission.DECIDE_FIX) or not record.waiting:
        return
    with st.expander("Change what recognises this pattern"), st.form(f"batch_signature_form_{record.id}"):
        text = st.text_area(
            "Phrases, one a line (each must appear in the pattern's sampled items and in no other sampled item)",
            "\n".join(pattern.signature),
            key=f"batch_signature_{record.id}",
        )
        if st.form_submit_button("Check against the sample and keep"):
            attempt(
                batch_id,
                lambda: driver().set_signature(record.id, text, identity.actor()),
                lambda kept: escape_markdown(
                    f"Kept: it {Pattern.model_validate(kept.pattern).signature_check.summary()}. "
                    "Ask the fix agent to prepare each item's fix with it."
                ),
            )
            st.rerun()


def propose(batch_id: int, pattern_id: int, representative: str, again: bool = True) -> None:
    """Ask the fix agent for the representative's fix (unless `again` is False: keep the proposal), then prepare
    every reached item's, with a progress bar."""
    for key in [
        k
        for k in st.session_state
        if str(k).startswith(
            (f"batch_after_{pattern_id}_", f"batch_exclude_{pattern_id}", f"batch_include_{pattern_id}")
        )
    ]:
        del st.session_state[key]  # a new proposal starts from its own replacement text and exclusions
    bar = st.progress(0.0, text=f"The fix agent is fixing item {representative}…")

    def progress(done: int, total: int) -> None:
        bar.progress(
            done / total if total else 1.0, text=f"Preparing each item's own fix: {done} of {total} item(s) done"
        )

    if again:
        attempt(batch_id, lambda: driver().propose(pattern_id, identity.actor(), progress=progress))
    else:
        attempt(batch_id, lambda: driver().prepare(pattern_id, identity.actor(), progress=progress))
    st.rerun()


def items_table(record: PatternRecord, preview: FixPreview, can_decide: bool) -> tuple[list[str], list[str]]:
    """Every item the fix reaches, with how and what; a diff on request; (the items excluded, the items excluded from
    another pattern's fix that this one may rewrite all the same)."""
    showing, needing = len(preview.changes), preview.skipped
    st.markdown(
        f"**{showing} item(s) in the batch show this pattern**: approving changes {preview.changed}"
        + (f"; {len(needing)} need a person (fix them by hand after approving, or exclude them)." if needing else ".")
    )
    rows = []
    for key, fix in preview.changes.items():
        plan = preview.plans.get(key)
        outcome = (
            plan.outcome()
            if plan is not None
            else ("fixed" if fix.changed else "; ".join(r.reason for r in fix.skipped) or "no change")
        )
        if key in preview.held:  # said on its row: approving leaves it out unless included below
            outcome = f"left out, {preview.held[key].note()} (include it below to fix it)"
        rows.append(
            {
                "item": key,
                "sampled": "yes" if plan is None or plan.sampled else "no",
                "fixed by": plan.via if plan is not None else "text rule",
                "outcome": outcome,
            }
        )
    components.full_table(pd.DataFrame(rows, columns=["item", "sampled", "fixed by", "outcome"]), wide=("outcome",))
    keys = list(preview.changes)
    picked = st.selectbox(
        "Open an item's fix",
        keys,
        index=None,
        placeholder="pick an item to see its diff",
        key=f"batch_open_{record.id}",
    )
    if picked is not None:
        fix = preview.changes[picked]
        st.code(
            components.readable_diff(fix.before_text, fix.after_text, "current text", "after the fix"),
            language="diff",
            wrap_lines=True,
        )
    if not can_decide:
        return [], []
    return excluded_before(record, preview), st.multiselect(
        "Exclude items from this fix (they keep their text; say why in the reason below)",
        [k for k in keys if k not in preview.held],
        key=f"batch_exclude_{record.id}",
    )


def excluded_before(record: PatternRecord, preview: FixPreview) -> list[str]:
    """Reached items a person excluded from another pattern's fix: said, left out by default, includable by name."""
    if not preview.held:
        return []
    st.warning(
        escape_markdown(
            f"{len(preview.held)} item(s) this fix reaches were excluded from another pattern's fix, so approving leaves "
            "them out: " + "; ".join(f"{k}: {h.note()}" for k, h in preview.held.items())
        )
    )
    return st.multiselect(
        "Include anyway (this fix rewrites them; say why in the reason below)",
        list(preview.held),
        key=f"batch_include_{record.id}",
    )


def needs_person(view: BatchView) -> None:
    """Items a pattern's fix could not reach, each with an editor whose text is recorded as the person's edit."""
    keys = view.needs_fix
    if not keys:
        return
    st.subheader("Items that need a person")
    st.caption(
        f"{len(keys)} item(s) show a fixed pattern but no fix could reach them. Edit each one here: the "
        "text you save is recorded as your edit and the export marks the item “fixed by hand”."
    )
    if not identity.can(Permission.DECIDE_FIX):
        st.info(escape_markdown(identity.refusal(Permission.DECIDE_FIX)))
        return
    items = {it.key: it for it in view.items}
    pattern_of = {c.item_id: c.pattern_id for c in view.changes if c.before_hash == c.after_hash and not c.by_hand}
    key = st.selectbox("Item", keys, key=f"batch_hand_item_{view.batch.id}")
    item = items[key]
    why = next((c.skipped for c in reversed(view.changes) if c.item_id == item.id and c.skipped), [])
    if why:
        st.caption(escape_markdown("Why no fix reached it: " + "; ".join(str(r.get("reason", "")) for r in why)))
    opened = st.session_state.setdefault(f"batch_hand_before_{view.batch.id}_{key}", item.output)
    with st.form(f"batch_hand_form_{view.batch.id}_{key}"):
        text = st.text_area("Text", opened, height=200, key=f"batch_hand_text_{view.batch.id}_{key}")
        st.caption(counter(text))
        reason = st.text_input(
            "What you changed (kept in the audit trail)", key=f"batch_hand_reason_{view.batch.id}_{key}"
        )
        if st.form_submit_button("Save my edit", type="primary"):
            st.session_state.pop(f"batch_hand_before_{view.batch.id}_{key}", None)
            attempt(
                view.batch.id,
                lambda: driver().edit_by_hand(pattern_of[item.id], key, opened, text, identity.actor(), reason),
                lambda _: escape_markdown(f"Saved: item {key} is fixed by hand."),
            )
            st.rerun()
