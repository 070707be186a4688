"""The person judgements the desk already holds, as calibration labels, and the models' verdicts they judge.

What counts as a label, and why (docs/metrics.md says the same to readers):

- **A person's review in a reviewer slot**: every criterion they judged on that round's text. It labels the
  model in the round's other slot (and any model that judged the same round). Only rounds whose gate is in:
  before that the round is blind (storage/slots.py), and a figure that moved when the person submitted would
  tell the other person what the model said.
- **An escalation resolved with evidence**: the escalated round's merged issues are the criteria the person
  looked at. *Reject* states the output is not acceptable: FAIL on each flagged criterion (the issues are the case
  the person was shown; a rejection gives no reason per criterion, so no other criterion is labelled). *Ship as
  is* is no label: it is often a waiver (the budget or the round cap reached, a defect judged good enough), not a
  finding that the flag was wrong, and counting it as PASS would turn waived defects into the reviewers' false
  alarms. *Edit and re-review* and *Try again* send the text back to reviewers and state no verdict: no label.
  Criteria nobody flagged are never labelled here.
- Spot-checks come from the spot-check store (`SpotCheckStore.labels()`), not from here.

The models' verdicts are read only for the rounds that have labels, so the cost follows the number of labels,
not the size of the history.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlmodel import Session, col

from santa_core.models import ReviewStatus, Verdict
from santa_core.reports.labels import ModelVerdict, PersonLabel
from santa_core.reports.metrics import MetricsFilter
from storage.metrics import _names
from storage.queries import select_columns
from storage.slots import person_of
from storage.tables import DecisionRow, MergedIssueRow, ReviewRow, RoundRow
from storage.times import utc
from storage.transactions import StoreBase

PERSON_FIRST, PERSON_PAST = "person:", "person;"
"""Every `person:<id>` reviewer name sorts between these: a range the reviewer index answers (LIKE may not)."""

ESCALATION_VERDICT: dict[str, Verdict] = {"resolve_reject": "FAIL"}
"""The verdict a resolution states on the escalated round's flagged criteria (other resolutions, ship as is among
them, state none: see the module's docstring)."""

CHUNK = 500
"""Run ids per IN list: well under every driver's parameter limit."""


def checks_of(review_json: Any) -> list[dict]:
    """The per-criterion checks of a stored review, [] when it holds none."""
    checks = review_json.get("checks") if isinstance(review_json, dict) else None
    return [
        c
        for c in checks or []
        if isinstance(c, dict) and c.get("result") in ("PASS", "FAIL") and isinstance(c.get("criterion"), str)
    ]


def evidence_of(review_json: dict, criterion: str) -> str:
    """The quotes a review's critical issues give for one criterion, joined."""
    issues = review_json.get("critical_issues") or []
    return " / ".join(
        i.get("evidence") or ""
        for i in issues
        if isinstance(i, dict) and i.get("criterion") == criterion and i.get("evidence")
    )


def person_review_labels(s: Session) -> list[PersonLabel]:
    """Every criterion a person judged in a reviewer slot, on rounds whose gate is in."""
    r = ReviewRow
    stmt = (
        select_columns(r.run_id, r.round_no, r.reviewer, r.review_json, r.created_at)
        .join(RoundRow, (col(RoundRow.run_id) == col(r.run_id)) & (col(RoundRow.round_no) == col(r.round_no)))
        .where(
            r.reviewer >= PERSON_FIRST,
            r.reviewer < PERSON_PAST,
            r.status == ReviewStatus.OK.value,
            col(RoundRow.gate_decision).is_not(None),
        )
    )
    return [
        PersonLabel(
            run_id=run_id,
            round_no=round_no,
            criterion=c["criterion"],
            verdict=c["result"],
            source="person_review",
            person=person_of(reviewer) or reviewer,
            at=utc(at),
            evidence=evidence_of(review, c["criterion"]),
        )
        for run_id, round_no, reviewer, review, at in s.exec(stmt).all()
        for c in checks_of(review)
    ]


def escalation_labels(s: Session) -> list[PersonLabel]:
    """A FAIL on each criterion flagged in an escalated round that a person rejected."""
    d, mi = DecisionRow, MergedIssueRow
    stmt = (
        select_columns(d.run_id, d.round_no, d.action, d.actor, d.created_at, mi.criterion, mi.evidence)
        .join(mi, (col(mi.run_id) == col(d.run_id)) & (col(mi.round_no) == col(d.round_no)))
        .where(col(d.action).in_(list(ESCALATION_VERDICT)))
        .order_by(col(d.id), col(mi.idx))
    )
    found: dict[tuple[int, int, str, str], PersonLabel] = {}
    for run_id, round_no, action, actor, at, criterion, evidence in s.exec(stmt).all():
        key = (run_id, round_no, criterion, action)
        if key in found:  # several issues on one criterion: one label, their quotes together
            if evidence:
                found[key] = found[key].model_copy(
                    update={"evidence": f"{found[key].evidence} / {evidence}".strip(" /")}
                )
            continue
        found[key] = PersonLabel(
            run_id=run_id,
            round_no=round_no,
            criterion=criterion,
            verdict=ESCALATION_VERDICT[action],
            source="escalation",
            person=actor,
            at=utc(at),
            evidence=evidence or "",
        )
    return list(found.values())


def model_verdicts(s: Session, rounds: Iterable[tuple[int, int]]) -> list[ModelVerdict]:
    """What each model answered per criterion on the given (run, round)s; errors and people are no verdicts."""
    wanted = set(rounds)
    runs = sorted({run for run, _ in wanted})
    r, out = ReviewRow, []
    for at in range(0, len(runs), CHUNK):
        stmt = (
            select_columns(r.run_id, r.round_no, r.slot, r.reviewer, r.review_json)
            .where(col(r.run_id).in_(runs[at : at + CHUNK]), r.status == ReviewStatus.OK.value)
            .where((r.reviewer < PERSON_FIRST) | (r.reviewer >= PERSON_PAST))
        )
        out += [
            ModelVerdict(
                run_id=run_id, round_no=round_no, slot=slot, model=model, criterion=c["criterion"], verdict=c["result"]
            )
            for run_id, round_no, slot, model, review in s.exec(stmt).all()
            if (run_id, round_no) in wanted
            for c in checks_of(review)
        ]
    return out


class LabelStore(StoreBase):
    """Labels from person reviews and resolved escalations; the models' verdicts on labelled rounds."""

    def labels(self) -> list[PersonLabel]:
        """Every label this store knows (person reviews, then escalations)."""
        with self._read() as s:
            return person_review_labels(s) + escalation_labels(s)

    def model_verdicts(self, rounds: Iterable[tuple[int, int]]) -> list[ModelVerdict]:
        """The models' per-criterion verdicts on those (run, round)s."""
        with self._read() as s:
            return model_verdicts(s, rounds)

    def criterion_names(self) -> dict[str, str]:
        """Criterion id → name, as the newest rubric version in the history writes it."""
        with self._read() as s:
            return _names(s, MetricsFilter())
