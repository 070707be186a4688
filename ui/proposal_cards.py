"""The fix proposal as cards: one per edit with Keep/Drop, one per refused edit that a person may take as theirs.

Each card names its issue and criterion and shows only the sentence it changes (before → after), so
keeping one edit and dropping another is a click on that edit, and a long output is never shown whole.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import streamlit as st

from santa_core.models import FixEdit, FixProposal, MergedIssue
from santa_core.run.fixer import keep_edits, occurrences, take_edit, touched_issues
from santa_core.sentence_diff import diff_lines, sentence_of
from ui.safe import escape_markdown

OWN_ISSUE = re.compile(r"^edit for issue \d+ ")
"""The start of a refusal's stored reason ("edit for issue 2 reaches beyond …"): the card already names the issue."""


def refusal_words(reason: str) -> str:
    """A stored refusal as a sentence on its card: "Refused: it reaches beyond the sentence …"."""
    return "Refused: it " + OWN_ISSUE.sub("", reason).rstrip(".") + "."


def edit_diff(text: str, edit: FixEdit) -> str:
    """The sentence(s) of `text` an edit changes, before and after, as diff lines (the edit alone where its
    'before' text does not stand once in `text`)."""
    found = occurrences(text, edit.before)[:2] if edit.before else []
    if len(found) != 1:
        return "\n".join(diff_lines(edit.before, edit.after, context=0)) or "(no change)"
    start, end = found[0], found[0] + len(edit.before)
    first, last = sentence_of(text, start, end)
    return "\n".join(diff_lines(text[first:last], text[first:start] + edit.after + text[end:last], context=0))


def _heading(issues: list[MergedIssue], number: int, names: dict[str, str]) -> str:
    """ "Issue 2 · Factual accuracy" (the criterion's name, its id when the rubric has none)."""
    issue = issues[number] if 0 <= number < len(issues) else None
    if issue is None:
        return f"Issue {number + 1} (not one of the flagged issues)"
    return f"Issue {number + 1} · {names.get(issue.criterion, issue.criterion)}"


def edit_cards(proposal: FixProposal, names: dict[str, str], keys: str | None = None) -> FixProposal:
    """One card per applied edit; with `keys` (a widget key prefix) each has a Keep toggle and the proposal with
    only the kept edits is returned, else the cards are read-only and the proposal is returned as it is."""
    kept = []
    for i, edit in enumerate(proposal.edits):
        with st.container(border=True):
            head, toggle = st.columns([4, 1])
            head.markdown(f"**{escape_markdown(_heading(proposal.issues, edit.issue, names))}**")
            if edit.issue < len(proposal.issues):
                head.caption(escape_markdown(proposal.issues[edit.issue].description))
            keep = True
            if keys is not None:
                keep = toggle.toggle(
                    "Keep",
                    value=True,
                    key=f"keep_{keys}_{i}",
                    help="Off: this edit is dropped and the box below shows the text without it.",
                )
            st.code(edit_diff(proposal.before_text, edit), language="diff", wrap_lines=True)
            if not keep:
                st.caption("Dropped: the box below leaves this sentence as it was.")
            else:
                kept.append(i)
    return proposal if keys is None else keep_edits(proposal, kept)


def refused_cards(
    proposal: FixProposal,
    names: dict[str, str],
    box: str | None = None,
    take: Callable[[FixEdit], None] | None = None,
    keys: str = "",
) -> None:
    """One card per refused edit, saying why in words; with `take`, a button applies it to the text in `box`
    (that text, its 'before' text standing once in it) as the person's own edit."""
    for j, rejected in enumerate(proposal.rejected):
        with st.container(border=True):
            others = [i + 1 for i in touched_issues(proposal, rejected.edit.before) if i != rejected.edit.issue]
            # The fix agent may label an edit with the wrong issue: say which flagged quote it really changes.
            also = f" It changes the quoted text of issue {', '.join(map(str, others))}." if others else ""
            st.markdown(
                f"**{escape_markdown(_heading(proposal.issues, rejected.edit.issue, names))}** — "
                f"{escape_markdown(refusal_words(rejected.reason) + also)}"
            )
            st.code(edit_diff(proposal.before_text, rejected.edit), language="diff", wrap_lines=True)
            if take is None or box is None:
                continue
            _, why = take_edit(box, rejected.edit)
            if why and rejected.edit.after and rejected.edit.after in box and rejected.edit.before not in box:
                st.caption("Taken: the box holds this edit as yours.")
                continue
            st.button(
                "Take this edit as my own",
                key=f"take_{keys}_{j}",
                disabled=bool(why),
                on_click=take,
                args=(rejected.edit,),
                help=(
                    f"Cannot be taken: {why}."
                    if why
                    else "Applies this edit to the box below; approving then records the text as your edit."
                ),
            )
