"""The Spot-checks page's queue and blind form.

Blind by construction: before a spot-check is submitted the page reads only its `BlindCase` (the shipped text,
the spec, the run's rubric snapshot), which has no field for a reviewer's verdict, so no verdict reaches the
page's elements or the session. The comparison with the reviewers is read only for a submitted spot-check."""

from __future__ import annotations

from datetime import datetime

import pandas as pd
import streamlit as st

from santa_core.roles import Permission, PermissionDenied
from santa_core.spotchecks import actions
from santa_core.spotchecks.model import BlindCase, Judgement, SpotCheck
from santa_core.spotchecks.store import SpotCheckError
from ui import app_desk, clock, identity
from ui.safe import escape_markdown

FLASH = "spot_flash"
PICK = "spot_pick"
MAX_LISTED = 200
ERRORS = (PermissionDenied, SpotCheckError)
"""What a spot-check action may refuse with; shown to the person, never a traceback."""


def judging_blind() -> dict[int, int]:
    """Run id → the open spot-check of it that the person here may judge (it is theirs, or nobody's and they may
    spot-check): the run's reviews stay hidden from them everywhere (run page, record, Audit) until it is judged."""
    if not identity.can(Permission.SPOT_CHECK):
        return {}
    me = identity.actor()
    store = app_desk.desk().runs.spot_checks
    mine = {c.run_id: c.id for c in store.spot_checks("open") if c.owner in (None, me)}
    if not mine:  # the common case on a run page: nothing open, the finished spot-checks are not read at all
        return {}
    judged = {c.run_id for c in store.spot_checks("done") if c.submitted_by == me}  # refused a second one of it
    return {run_id: check_id for run_id, check_id in mine.items() if run_id not in judged}


def flash() -> None:
    """The last action's confirmation, once."""
    if message := st.session_state.pop(FLASH, None):
        st.success(escape_markdown(message))


def report(call, message: str) -> None:
    """Run an action; show its refusal as an error, else confirm and rerun."""
    try:
        call()
    except ERRORS as exc:
        st.error(escape_markdown(str(exc)))
        return
    st.session_state[FLASH] = message
    st.rerun()


def run_shown(check: SpotCheck, blind: dict[int, int]) -> int | None:
    """The run number the queue may show: none for an open spot-check, nor for a submitted one whose run the person
    may still judge in another (with the number they could look the run's reviews up before judging)."""
    return None if check.status == "open" or check.run_id in blind else check.run_id


def takeable(check: SpotCheck, person: str) -> bool:
    """Open and assigned to this person or to nobody."""
    return check.status == "open" and check.owner in (None, person)


def ordered(checks: list[SpotCheck], now: datetime) -> list[SpotCheck]:
    """Open first (overdue first among them, then by due time), then submitted, newest first."""
    open_ = sorted((c for c in checks if c.status == "open"), key=lambda c: (not c.overdue(now), c.due_at or now, c.id))
    done = sorted((c for c in checks if c.status != "open"), key=lambda c: -c.id)
    return open_ + done


def queue(checks: list[SpotCheck], now: datetime) -> list[SpotCheck]:
    """The queue table (open first, overdue marked) with the 'mine' filter; the spot-checks shown."""
    person, blind = identity.actor(), judging_blind()
    mine = st.toggle("Only mine (assigned to me or to nobody)", key="spot_mine")
    shown = [c for c in ordered(checks, now) if not mine or takeable(c, person) or c.submitted_by == person]
    late = sum(c.overdue(now) for c in shown)
    st.caption(
        f"{sum(c.status == 'open' for c in shown)} open · {late} overdue · "
        f"{sum(c.status == 'done' for c in shown)} submitted"
    )
    if not shown:
        st.info("No spot-check here. Rules below draw shipped runs into this queue as they ship.")
        return []
    st.dataframe(
        pd.DataFrame(
            [
                {
                    "#": c.id,
                    "run": run_shown(c, blind),
                    "rubric": f"{c.rubric_name} v{c.rubric_version}",
                    "status": ("OVERDUE" if c.overdue(now) else "open") if c.status == "open" else "submitted",
                    "owner": identity.display(c.owner) if c.owner else "anyone",
                    "due (UTC)": c.due_at,
                    "drawn by": c.drawn_by,
                }
                for c in shown[:MAX_LISTED]
            ]
        ),
        hide_index=True,
        width="stretch",
    )
    return shown


def pick(shown: list[SpotCheck]) -> SpotCheck | None:
    """The spot-check to open (the first open one unless another was picked)."""
    if not shown:
        return None
    by_id = {c.id: c for c in shown}
    asked = st.query_params.get("spot", "")
    if asked.isdigit() and int(asked) in by_id and PICK not in st.session_state:
        st.session_state[PICK] = int(asked)  # opened from the Inbox
    blind = judging_blind()
    labels = {
        c.id: f"#{c.id} · open"
        if c.status == "open"
        else f"#{c.id} · submitted" + (f" · run {run}" if (run := run_shown(c, blind)) else "")
        for c in shown
    }
    chosen = st.selectbox("Spot-check", list(by_id), key=PICK, format_func=labels.get)
    return by_id[chosen]


def blind_form(case: BlindCase) -> None:
    """Judge every criterion PASS or FAIL (evidence for a FAIL) without seeing any reviewer's verdict."""
    check = case.check
    # No run number: with it a judge could look the run's reviews up (the CLI, a colleague) before judging.
    st.markdown(
        escape_markdown(
            f"Spot-check #{check.id} · rubric {check.rubric_name} "
            f"v{check.rubric_version} (the rubric the reviewers had)"
        )
    )
    st.caption(
        "Judge the shipped text against each criterion on your own: the reviewers' verdicts are shown "
        "only after you submit."
    )
    with st.expander("Spec", expanded=False):
        st.text(case.spec)
    st.markdown("**Shipped text**")
    st.text(case.text)
    given: list[Judgement] = []
    for criterion in case.criteria:
        with st.container(border=True):
            advisory = " · a suggestion: a FAIL here is not an escape" if criterion.severity == "suggestion" else ""
            st.markdown(f"**{escape_markdown(criterion.name)}**{advisory}")
            st.caption(
                escape_markdown(f"Passes when: {criterion.pass_condition} · Fails when: {criterion.fail_signal}")
            )
            verdict = st.radio(
                "Verdict", ["PASS", "FAIL"], index=None, horizontal=True, key=f"spot_{check.id}_{criterion.id}"
            )
            evidence = st.text_input(
                "Evidence (required for a FAIL): quote or describe what fails",
                key=f"spot_{check.id}_{criterion.id}_why",
                disabled=verdict != "FAIL",
            )
            if verdict:
                given.append(
                    Judgement(criterion=criterion.id, verdict=verdict, evidence=evidence if verdict == "FAIL" else "")
                )
    if st.button("Submit spot-check", type="primary", key=f"spot_submit_{check.id}"):
        store = app_desk.desk().runs.spot_checks
        report(
            lambda: actions.submit(store, check.id, given, identity.actor()),
            f"Spot-check #{check.id} submitted: the reviewers' verdicts are shown below.",
        )


def comparison_hidden(check: SpotCheck) -> bool:
    """Whether a submitted spot-check's comparison stays hidden here: two rules can draw one run, and the person
    may judge another open spot-check of it (its submitter always sees their own)."""
    return check.submitted_by != identity.actor() and check.run_id in judging_blind()


def comparison(check: SpotCheck) -> None:
    """A submitted spot-check: the person's verdicts beside the reviewers' of the shipped round."""
    if comparison_hidden(check):
        st.info(
            escape_markdown(
                f"Spot-check #{check.id} is submitted, but another spot-check of the same run is open "
                "for you to judge: its comparison (the reviewers' verdicts) shows once that one is "
                "judged."
            )
        )
        return
    store = app_desk.desk().runs.spot_checks
    compared = store.comparison(check.id)
    criteria = store.blind_case(check.id).criteria
    names = {c.id: c.name for c in criteria}
    blocking = {c.id for c in criteria if c.severity != "suggestion"}
    st.markdown(
        escape_markdown(
            f"Spot-check #{check.id} of run {check.run_id}, submitted by {identity.display(check.submitted_by or '')}"
        )
    )
    rows = [
        {
            "criterion": names.get(c.criterion, c.criterion),
            "spot-check": c.person,
            **{k: v or "—" for k, v in c.reviewers.items()},
            "evidence": c.evidence,
        }
        for c in compared
    ]
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")
    failed = [c for c in compared if c.person == "FAIL" and c.criterion in blocking]
    missed = [names.get(c.criterion, c.criterion) for c in failed if "PASS" in c.reviewers.values()]
    overridden = [names.get(c.criterion, c.criterion) for c in failed if "PASS" not in c.reviewers.values()]
    if overridden:
        st.info(
            escape_markdown(
                f"Shipped over the reviewers' FAIL: {', '.join(overridden)}. No reviewer passed "
                "it, so a person shipped it over them: not an escape past the reviewers."
            )
        )
    if missed:
        st.warning(
            escape_markdown(
                f"Escaped past the reviewers: {', '.join(missed)} (recorded as escapes of the run, "
                "traced to the reviewers that passed them)."
            )
        )
    elif not overridden:
        st.success("The spot-check agrees with what shipped: no escape.")


def spot_check_panel(check: SpotCheck) -> None:
    """One spot-check: the blind form while open (for who may judge it), the comparison once submitted."""
    if check.status != "open":
        comparison(check)
        return
    if not identity.can(Permission.SPOT_CHECK):
        st.info(escape_markdown(identity.refusal(Permission.SPOT_CHECK)))
        return
    if not takeable(check, identity.actor()):
        st.info(escape_markdown(f"Assigned to {identity.display(check.owner or '')}: only they judge it."))
        return
    blind_form(app_desk.desk().runs.spot_checks.blind_case(check.id))


def inbox_section(person: str) -> None:
    """The Inbox's share: open spot-checks assigned to this person or to nobody, each opening the blind form."""
    waiting = [c for c in app_desk.desk().runs.spot_checks.spot_checks("open") if takeable(c, person)]
    st.subheader(f"Spot-checks for you ({len(waiting)})")
    if not waiting:
        st.caption("No open spot-check is assigned to you or to nobody.")
        return
    for check in sorted(waiting, key=lambda c: (c.due_at is None, c.due_at, c.id))[:MAX_LISTED]:
        with st.container(border=True):
            left, right = st.columns([5, 1], vertical_alignment="center")
            due = f"due {check.due_at:%Y-%m-%d %H:%M} UTC" if check.due_at else "no due time"
            late = " · OVERDUE" if check.overdue(clock.now()) else ""
            whose = "assigned to me" if check.owner else "open to anyone"
            left.markdown(
                escape_markdown(
                    f"Spot-check #{check.id} · {check.rubric_name} v{check.rubric_version} · {whose} · {due}{late}"
                )
            )
            if right.button(
                "Open",
                key=f"inbox_spot_{check.id}",
                type="primary",
                help="Opens the blind spot-check form: the reviewers' verdicts show after you submit.",
            ):
                st.switch_page("pages/spot_checks.py", query_params={"spot": str(check.id)})
