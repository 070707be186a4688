"""`SpotCheckStore`: spot-check rules, the draw's sweep, the queue, blind submits with their escapes, and the
records the metrics read (`santa_core.spotchecks.store.SpotCheckStore`). Every write checks the actor's roles
inside its own transaction, so a refused call writes nothing."""

from __future__ import annotations

from datetime import datetime
from typing import cast

from sqlmodel import Session, col, select

from santa_core.models import Criterion, Rubric, Verdict
from santa_core.reports.labels import PersonLabel, SpotCheckOutcome
from santa_core.roles import SYSTEM_ACTORS, Permission, PermissionDenied, must_differ
from santa_core.spotchecks.form import escaped_criteria, escapes_past, judged_criteria, judgement_problems
from santa_core.spotchecks.model import (
    BlindCase,
    Compared,
    DrawnBy,
    Judgement,
    RuleDraft,
    SpotCheck,
    SpotRule,
    SpotStatus,
)
from santa_core.spotchecks.store import SpotCheckError
from santa_core.text import sha256_text
from storage import audit
from storage.metric_facts import touch
from storage.people import require
from storage.queries import stored_id
from storage.run_rows import get_run, require_round
from storage.spot_draw import draw_all, rule_of
from storage.tables import DecisionRow, EscapeRow, ReviewRow, RunRow, SpotCheckRow, SpotRuleRow
from storage.times import utc, utc_or_none, utcnow
from storage.transactions import StoreBase


def check_of(row: SpotCheckRow) -> SpotCheck:
    """The core's spot-check of a stored one."""
    return SpotCheck.model_validate(
        {
            **row.model_dump(),
            "created_at": utc(row.created_at),
            "due_at": utc_or_none(row.due_at),
            "submitted_at": utc_or_none(row.submitted_at),
        }
    )


def _open_row(s: Session, spot_check_id: int) -> SpotCheckRow:
    """The spot-check, locked; SpotCheckError when it does not exist or was submitted already."""
    row = s.exec(select(SpotCheckRow).where(SpotCheckRow.id == spot_check_id).with_for_update()).first()
    if row is None:
        raise SpotCheckError(f"there is no spot-check #{spot_check_id}")
    if row.status != "open":
        raise SpotCheckError(f"spot-check #{spot_check_id} was submitted by {row.submitted_by}; it is closed")
    return row


def _criteria(run: RunRow) -> list[Criterion]:
    """The criteria of the run's rubric snapshot (what its reviewers judged)."""
    return Rubric.model_validate(run.rubric_json).criteria


def submitted_at(row: SpotCheckRow) -> datetime:
    """When a done spot-check was submitted (set with its `done` status)."""
    if row.submitted_at is None:
        raise ValueError(f"spot-check #{row.id} is done but has no submission time")
    return utc(row.submitted_at)


def _slot_checks(s: Session, run_id: int, round_no: int) -> list[tuple[str, str, dict[str, str]]]:
    """(slot, reviewer, {criterion: PASS/FAIL}) of each review of the round, in slot order."""
    stmt = select(ReviewRow).where(ReviewRow.run_id == run_id, ReviewRow.round_no == round_no).order_by(ReviewRow.slot)
    out = []
    for review in s.exec(stmt).all():
        checks = (review.review_json or {}).get("checks", [])
        out.append((review.slot, review.reviewer, {c["criterion"]: c["result"] for c in checks}))
    return out


_CHOSE_TEXT = {
    "ship_as_is": "you shipped it as is",
    "approve": "you approved a fix of it",
    "edit": "you edited a fix of it",
}
"""Decisions whose actor chose (or wrote) the text that shipped, with how the refusal says so."""


def _judged_before(s: Session, row: SpotCheckRow, actor: str) -> str | None:
    """How the actor already judged the shipped text, if so: a person reviewer of its round, whoever shipped it as
    is, approved or edited a fix of the run (they chose or wrote what shipped), or reported an escape on it."""
    mine = select(ReviewRow.id).where(
        ReviewRow.run_id == row.run_id, ReviewRow.round_no == row.round_no, ReviewRow.reviewer == f"person:{actor}"
    )
    if s.exec(mine).first() is not None:
        return "you reviewed the round that shipped"
    decided = select(DecisionRow.action).where(
        col(DecisionRow.run_id) == row.run_id, col(DecisionRow.actor) == actor, col(DecisionRow.action).in_(_CHOSE_TEXT)
    )
    if (action := s.exec(decided).first()) is not None:
        return _CHOSE_TEXT[action]
    reported = select(EscapeRow.id).where(EscapeRow.run_id == row.run_id, EscapeRow.reported_by == actor)
    if s.exec(reported).first() is not None:
        return "you reported an escape on it"
    # Two rules may draw one run: a second look by the same person is not a second independent sample.
    again = select(SpotCheckRow.id).where(SpotCheckRow.run_id == row.run_id, SpotCheckRow.submitted_by == actor)
    return "you spot-checked it already" if s.exec(again).first() is not None else None


class SpotCheckStore(StoreBase):
    """Rules, the draw, the queue, blind submits and their escapes, outcomes and labels."""

    def rules(self, active_only: bool = True) -> list[SpotRule]:
        """Rules, oldest first."""
        stmt = select(SpotRuleRow).order_by(col(SpotRuleRow.id))
        if active_only:
            stmt = stmt.where(SpotRuleRow.active)
        with self._read() as s:
            return [rule_of(r) for r in s.exec(stmt).all()]

    def save_rule(self, draft: RuleDraft, seed: str, actor: str, replaces: int | None = None) -> SpotRule:
        """A new rule (retiring `replaces` in the same transaction)."""
        with self._tx() as s:
            require(s, actor, Permission.MANAGE_SPOT_CHECKS)
            if replaces is not None:
                self._retire(s, replaces, actor)
            row = SpotRuleRow(
                rubric_name=draft.rubric_name,
                share=draft.share_percent / 100,
                floor=draft.floor,
                panel=draft.panel.strip() or None,
                domain=draft.domain.strip() or None,
                seed=seed,
                created_by=actor,
                replaces=replaces,
            )
            s.add(row)
            s.flush()
            # The seed itself is on the sealed row; the event names its hash so the chain pins it too.
            audit.append(
                s,
                actor,
                "spot_rule.saved",
                "spot_rule",
                row.id,
                after=sha256_text(seed),
                detail={
                    "rubric": row.rubric_name,
                    "share": row.share,
                    "floor": row.floor,
                    "panel": row.panel,
                    "domain": row.domain,
                    "replaces": replaces,
                },
            )
            return rule_of(row)

    def retire_rule(self, rule_id: int, actor: str) -> None:
        """Stop a rule drawing; its spot-checks stay."""
        with self._tx() as s:
            require(s, actor, Permission.MANAGE_SPOT_CHECKS)
            self._retire(s, rule_id, actor)

    @staticmethod
    def _retire(s: Session, rule_id: int, actor: str) -> None:
        """Retire an active rule (SpotCheckError when there is none)."""
        row = s.exec(select(SpotRuleRow).where(SpotRuleRow.id == rule_id).with_for_update()).first()
        if row is None or not row.active:
            raise SpotCheckError(f"there is no active spot-check rule #{rule_id}; reload")
        row.active, row.retired_by, row.retired_at = False, actor, utcnow()
        s.add(row)
        audit.append(s, actor, "spot_rule.retired", "spot_rule", row.id, detail={"rubric": row.rubric_name})

    def draw_spot_checks(self, now: datetime) -> list[int]:
        """The idempotent sweep (system code): new spot-check ids."""
        with self._tx() as s:
            return draw_all(s, utc(now))

    def spot_checks(self, status: SpotStatus | None = None) -> list[SpotCheck]:
        """Spot-checks, oldest first."""
        stmt = select(SpotCheckRow).order_by(col(SpotCheckRow.id))
        if status is not None:
            stmt = stmt.where(SpotCheckRow.status == status)
        with self._read() as s:
            return [check_of(r) for r in s.exec(stmt).all()]

    def blind_case(self, spot_check_id: int) -> BlindCase:
        """The shipped text, the spec and the rubric snapshot: never a reviewer's verdict."""
        with self._read() as s:
            row = s.get(SpotCheckRow, spot_check_id)
            if row is None:
                raise SpotCheckError(f"there is no spot-check #{spot_check_id}")
            run = get_run(s, row.run_id)
            text = require_round(s, row.run_id, row.round_no).output_text
            return BlindCase(
                check=check_of(row), spec=run.spec, text=text, criteria=tuple(judged_criteria(_criteria(run)))
            )

    def assign(self, spot_check_id: int, owner: str | None, actor: str) -> None:
        """Give an open spot-check an owner who may judge it (None: unassign)."""
        with self._tx() as s:
            require(s, actor, Permission.ASSIGN)
            if owner:
                try:
                    require(s, owner, Permission.SPOT_CHECK)
                except PermissionDenied as exc:
                    raise SpotCheckError(f"{owner} cannot own a spot-check: {exc}") from exc
            row = _open_row(s, spot_check_id)
            before, row.owner = row.owner, owner or None
            s.add(row)
            audit.append(
                s,
                actor,
                "spot_check.assigned",
                "spot_check",
                row.id,
                run_id=row.run_id,
                detail={"before": before, "owner": row.owner},
            )

    def set_due(self, spot_check_id: int, due_at: datetime, actor: str) -> None:
        """Change an open spot-check's due time."""
        due_at = utc(due_at)
        with self._tx() as s:
            require(s, actor, Permission.ASSIGN)
            row = _open_row(s, spot_check_id)
            before, row.due_at = utc_or_none(row.due_at), due_at
            s.add(row)
            audit.append(
                s,
                actor,
                "spot_check.due_set",
                "spot_check",
                row.id,
                run_id=row.run_id,
                detail={"before": None if before is None else before.isoformat(), "due_at": due_at.isoformat()},
            )

    def submit(self, spot_check_id: int, judgements: list[Judgement], actor: str) -> list[int]:
        """Record the blind verdicts and, in the same transaction, one escape per blocking FAIL traced to the
        reviewers of the shipped round that PASSed it. The new escape ids."""
        with self._tx() as s:
            if actor in SYSTEM_ACTORS:  # a spot-check's verdicts become a person's labels: code has none to give
                raise SpotCheckError(
                    f"a spot-check is a person's judgement: {actor!r} is not a person; say who "
                    "judged (on the command line: --as PERSON)"
                )
            require(s, actor, Permission.SPOT_CHECK)
            row = _open_row(s, spot_check_id)
            if row.owner and row.owner != actor:
                raise SpotCheckError(
                    f"spot-check #{row.id} is assigned to {row.owner}; someone who may assign can give it to you"
                )
            if must_differ(actor) and (why := _judged_before(s, row, actor)):
                raise SpotCheckError(
                    f"spot-check #{row.id} needs someone else: {why}, so your verdicts would not be "
                    "an independent look at what shipped"
                )
            criteria = _criteria(get_run(s, row.run_id))
            if problems := judgement_problems(criteria, judgements):
                raise SpotCheckError("; ".join(problems))
            row.status, row.submitted_by, row.submitted_at = "done", actor, utcnow()
            row.judgements = [j.model_dump(mode="json") for j in judgements]
            s.add(row)
            reviews = _slot_checks(s, row.run_id, row.round_no)
            failed = escapes_past(escaped_criteria(criteria, judgements), (checks for _, _, checks in reviews))
            audit.append(
                s,
                actor,
                "spot_check.submitted",
                "spot_check",
                row.id,
                run_id=row.run_id,
                detail={"judged": len(judgements), "failed": [j.criterion for j in failed]},
            )
            touch(s, row.run_id)  # the run's metric facts are derived again with the run's escapes
            return [self._escape(s, row, j, reviews, actor) for j in failed]

    @staticmethod
    def _escape(
        s: Session, row: SpotCheckRow, failed: Judgement, reviews: list[tuple[str, str, dict[str, str]]], actor: str
    ) -> int:
        """One escape of a spot-check's FAIL, traced to the reviewers that PASSed the criterion; its id."""
        passed_by = [reviewer for _, reviewer, checks in reviews if checks.get(failed.criterion) == "PASS"]
        esc = EscapeRow(
            run_id=row.run_id,
            criterion=failed.criterion,
            severity="critical",
            reported_by=actor,
            description=f"spot-check #{row.id} failed {failed.criterion}: {failed.evidence.strip()}",
            source="spot_check",
            spot_check_id=row.id,
            evidence=failed.evidence.strip(),
            passed_by=passed_by,
        )
        s.add(esc)
        s.flush()
        audit.append(
            s,
            actor,
            "escape.reported",
            "escape",
            esc.id,
            run_id=row.run_id,
            after=sha256_text(esc.description),
            detail={
                "criterion": esc.criterion,
                "severity": esc.severity,
                "source": "spot_check",
                "spot_check": row.id,
                "passed_by": passed_by,
            },
        )
        return stored_id(esc)

    def comparison(self, spot_check_id: int) -> list[Compared]:
        """After submit: each criterion as the person and each reviewer of the shipped round judged it."""
        with self._read() as s:
            row = s.get(SpotCheckRow, spot_check_id)
            if row is None or row.status != "done":
                raise SpotCheckError(
                    f"spot-check #{spot_check_id} is not submitted: the reviewers' verdicts stay hidden until it is"
                )
            reviews = _slot_checks(s, row.run_id, row.round_no)
            return [
                Compared(
                    criterion=j["criterion"],
                    person=j["verdict"],
                    evidence=j.get("evidence", ""),
                    reviewers={
                        f"{slot} ({reviewer})": cast(Verdict | None, checks.get(j["criterion"]))
                        for slot, reviewer, checks in reviews
                    },
                )
                for j in row.judgements or []
            ]

    def _done(self, s: Session) -> list[tuple[SpotCheckRow, RunRow]]:
        """Submitted spot-checks with their runs, oldest first."""
        stmt = (
            select(SpotCheckRow, RunRow)
            .join(RunRow, col(RunRow.id) == col(SpotCheckRow.run_id))
            .where(SpotCheckRow.status == "done")
            .order_by(col(SpotCheckRow.id))
        )
        return list(s.exec(stmt).all())

    def outcomes(self) -> list[SpotCheckOutcome]:
        """One outcome per shipped run and round (the earliest submitted, when two rules drew it): what was judged
        and which blocking criteria escaped past a reviewer that passed them."""
        with self._read() as s:
            done = sorted(self._done(s), key=lambda pair: (submitted_at(pair[0]), pair[0].id))
            out: dict[tuple[int, int], SpotCheckOutcome] = {}
            for row, run in done:
                run_id = stored_id(run)
                if (run_id, row.round_no) in out:  # a second rule's draw of the same text is not a second sample
                    continue
                judgements = [Judgement.model_validate(j) for j in row.judgements or []]
                reviews = [checks for _, _, checks in _slot_checks(s, run_id, row.round_no)]
                failed = escapes_past(escaped_criteria(_criteria(run), judgements), reviews)
                out[(run_id, row.round_no)] = SpotCheckOutcome(
                    spot_check_id=stored_id(row),
                    run_id=run_id,
                    round_no=row.round_no,
                    rubric_name=row.rubric_name,
                    rubric_version=row.rubric_version,
                    domain=str((run.rubric_json or {}).get("domain", "")),
                    reviewer_b=run.reviewer_b,
                    reviewer_c=run.reviewer_c,
                    reviewer_d=run.reviewer_d,
                    drawn_by=cast(DrawnBy, row.drawn_by),
                    submitted_at=submitted_at(row),
                    judged=tuple(j.criterion for j in judgements),
                    failed=tuple(j.criterion for j in failed),
                )
            return sorted(out.values(), key=lambda o: o.spot_check_id)

    def labels(self) -> list[PersonLabel]:
        """Every judged criterion of every submitted spot-check, as a person's label."""
        with self._read() as s:
            return [
                PersonLabel(
                    run_id=row.run_id,
                    round_no=row.round_no,
                    criterion=j["criterion"],
                    verdict=j["verdict"],
                    source="spot_check",
                    person=row.submitted_by or "",
                    at=submitted_at(row),
                    evidence=j.get("evidence", ""),
                )
                for row, _ in self._done(s)
                for j in row.judgements or []
            ]
