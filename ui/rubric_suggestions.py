"""The Rubrics page's "Suggestions" tab: what the rubric's recent failures argue for, with the runs as evidence.

Each suggestion comes from `santa_core.rubrics.learning`: one criterion failing on the same words in several runs.
*Try it* runs a suggested check on those runs' texts and on the rubric's recent NICE runs (free: deterministic, nothing
kept). *Accept* saves the rubric's next version with the change, *Dismiss* remembers that the author does not want it;
both go through `santa_core.rubrics.actions`, which storage refuses for anyone who may not change rubrics.
"""

from __future__ import annotations

import json

import pandas as pd
import streamlit as st

from desk import Desk
from santa_core.models import Rubric
from santa_core.roles import PermissionDenied
from santa_core.rubrics import actions, learning
from santa_core.rubrics.store import RubricConflict, RubricSaveError
from ui import identity, rubric_save
from ui import rubric_draft as rd
from ui.safe import escape_markdown

TRIED = "sg_tried"
"""Session key: suggestion key → its Try it result, shown until the page is left."""
FLASH = "sg_flash"
LOOK_AGAIN_S = 60
"""How long the suggestions found are reused before the runs are read again (new runs show within this)."""


def suggestions_tab(desk: Desk, name: str, actor: str, refusal: str | None = None) -> None:
    """The rubric's undecided suggestions, each with its evidence runs, Try it, Accept and Dismiss (`refusal`: why
    this person may not accept or dismiss; they still see and try every suggestion)."""
    st.caption(
        escape_markdown(
            f"A criterion that failed on the same words in at least {learning.MIN_RUNS} runs of the last "
            f"{learning.WINDOW_DAYS} days (or escaped that often after shipping) is suggested a deterministic check, or "
            "a sharper pass condition when no check could catch it. Nothing here asks a model."
        )
    )
    if flash := st.session_state.pop(FLASH, None):
        st.success(escape_markdown(flash))
    rubric = desk.rubrics.resolved(name)
    found, items, nice = _pending(
        desk, rubric, desk.url, name, rubric.version, len(desk.runs.suggestions.decisions(name))
    )
    if refusal:
        st.caption(escape_markdown(f"{refusal} You can still look at each suggestion and try it."))
    if not found:
        st.info("No suggestions: no criterion of this rubric keeps failing on the same words.")
    for suggestion in found:
        with st.container(border=True):
            _card(desk, rubric, suggestion, items, nice, actor, refusal)
    _decided(desk, name)


@st.cache_data(ttl=LOOK_AGAIN_S, show_spinner=False, max_entries=32)
def _pending(
    _desk: Desk, _rubric: Rubric, url: str, name: str, version: int, decided: int
) -> tuple[list[learning.Suggestion], list[learning.LearningItem], dict[int, str]]:
    """`learning.pending`, kept a while: every tab of the page is drawn on each change in the editor, and grouping a
    month of runs should not run on each keystroke. Keyed by the database, the rubric's version and its number of
    decisions: an accepted or dismissed suggestion is gone at once."""
    return learning.pending(_rubric, _desk.runs.suggestions)


def _card(
    desk: Desk,
    rubric: Rubric,
    s: learning.Suggestion,
    items: list[learning.LearningItem],
    nice: dict[int, str],
    actor: str,
    refusal: str | None,
) -> None:
    """One suggestion: what it changes, the runs that argue for it, and its three buttons."""
    st.markdown(f"**{escape_markdown(s.title)}**")
    if s.kind == "forbidden_terms":
        st.caption(
            "The criterion's check after accepting (it runs before the reviewers: a text it fails is sent "
            "to the fix agent without paying them):"
        )
        st.code(json.dumps(s.check, ensure_ascii=False), language="json")
    else:
        st.caption("The criterion's pass condition after accepting (the reviewers judge by it):")
        st.text(s.pass_condition or "")
    runs = pd.DataFrame([{"run": f"./review?run={r}"} for r in s.runs])
    with st.expander(f"Evidence: {len(s.runs)} runs"):
        st.dataframe(
            runs,
            hide_index=True,
            width="stretch",
            column_config={"run": st.column_config.LinkColumn("run", display_text=r"run=(\d+)")},
        )
    tried, accept, dismiss = st.columns(3)
    if tried.button(
        "Try it",
        key=f"sg_try_{s.key}",
        disabled=s.check is None,
        help="Run the check on the evidence runs' texts and the rubric's recent NICE runs (free)."
        if s.check is not None
        else "A pass condition is judged by the reviewers: nothing to run for free.",
    ):
        st.session_state.setdefault(TRIED, {})[s.key] = learning.try_suggestion(s, rubric, items, nice)
    if (result := st.session_state.get(TRIED, {}).get(s.key)) is not None:
        _tried(result)
    if accept.button(
        "Accept",
        key=f"sg_accept_{s.key}",
        type="primary",
        disabled=bool(refusal),
        help=refusal or "Save the rubric's next version with this change (audited).",
    ):
        _accept(desk, s, actor)
    note = dismiss.text_input(
        "Why dismiss (optional)",
        key=f"sg_note_{s.key}",
        disabled=bool(refusal),
        label_visibility="collapsed",
        placeholder="Why dismiss (optional)",
    )
    if dismiss.button("Dismiss", key=f"sg_dismiss_{s.key}", disabled=bool(refusal), help=refusal):
        _dismiss(desk, s, actor, note)


def _tried(result: learning.TryResult) -> None:
    """What the check would have done: the evidence runs it catches, the NICE runs it would fail."""
    caught = len(result.hits)
    total = caught + len(result.misses)
    line = (
        f"Catches {caught} of the {total} evidence runs; would have failed {len(result.false_alarms)} of "
        f"{len(result.false_alarms) + result.clean} recent NICE runs."
    )
    (st.warning if result.false_alarms or result.misses else st.success)(escape_markdown(line))
    if result.false_alarms:
        st.markdown("False alarms: " + ", ".join(f"[run {r}](./review?run={r})" for r in result.false_alarms))


def _accept(desk: Desk, s: learning.Suggestion, actor: str) -> None:
    """Accept through the rubric actions; reopen the new version in the editor unless the author is editing."""
    try:
        saved = actions.accept_suggestion(desk.rubrics, desk.runs.suggestions, s, actor)
    except (PermissionDenied, RubricSaveError, RubricConflict, ValueError) as exc:
        st.error(escape_markdown(str(exc)))
        return
    draft = rd.current()
    if draft is not None and draft.get("source") == s.rubric and not rubric_save.is_dirty(draft):
        rubric_save.open_version(desk.rubrics, s.rubric)
    st.session_state[FLASH] = f"Saved {saved.name} v{saved.version} with the suggestion."
    st.rerun()


def _dismiss(desk: Desk, s: learning.Suggestion, actor: str, note: str) -> None:
    try:
        actions.dismiss_suggestion(desk.runs.suggestions, s, actor, note)
    except (PermissionDenied, ValueError) as exc:
        st.error(escape_markdown(str(exc)))
        return
    st.session_state[FLASH] = "Dismissed: it will not be suggested again."
    st.rerun()


def _decided(desk: Desk, name: str) -> None:
    """The suggestions already accepted or dismissed, newest first."""
    decided = desk.runs.suggestions.decisions(name)
    if not decided:
        return
    with st.expander(f"Decided suggestions ({len(decided)})"):
        st.dataframe(
            pd.DataFrame(
                [
                    {
                        "when": d.at,
                        "who": identity.display(d.actor),
                        "decision": d.action,
                        "criterion": d.criterion,
                        "phrase": d.phrase,
                        "version": f"v{d.version}" if d.version else "",
                        "note": d.note,
                    }
                    for d in reversed(decided)
                ]
            ),
            hide_index=True,
            width="stretch",
        )
