"""`RunStore`: the `Store` the runner persists through, plus the queries the pages render.

Every public method is one short transaction that has committed when it returns. Write
transactions lock the run row first (SQLite: `BEGIN IMMEDIATE` already holds the database write
lock; PostgreSQL: `SELECT ... FOR UPDATE`), so concurrent writers of a run are serialised and a
read-modify-write never loses an update. Reads use a snapshot that takes no write lock.

`decision`, `state_change` and `llm_call` rows are only ever inserted: nothing in the run stores
updates or deletes them. The methods live by record kind: rounds (`storage.rounds`), escalations,
reviewer slots, escapes, settings and the call log's cost averages; `RunStore` is all of them over one
database.
"""

from __future__ import annotations

from typing import Any, TypedDict, get_args

from sqlalchemy import Engine, or_
from sqlmodel import Session, col, select

from santa_core.models import ReviewStatus, Rubric, RunState, RunStatus
from santa_core.providers import panel_families, spans_two_families
from santa_core.roles import SYSTEM_ACTORS, Permission
from santa_core.run import engine as state_machine
from santa_core.run.store import RoundRecord, RunRecord, Source
from santa_core.run.third import third_reviewer_for
from santa_core.text import sha256_text
from storage import audit, spend
from storage.audit import AuditStore
from storage.call_costs import CallCostStore
from storage.errors import MoveRefused
from storage.escalations import EscalationStore
from storage.escapes import EscapeStore
from storage.metric_facts import touch
from storage.metrics import MetricsStore
from storage.people import PeopleStore, require
from storage.queries import not_null, select_columns, stored_id
from storage.rounds import RoundStore, start_round_row
from storage.rows import RUN_COPIED, check_text, escalation_of, escape_of, state_change_of, state_of, summary_of
from storage.rubrics import RubricStore
from storage.run_json import run_json
from storage.run_rows import children, costs, cut_off_calls, get_run, lock_run, run_rows
from storage.settings import SettingsStore
from storage.slots import SlotStore, reviewer_slots
from storage.spot_checks import SpotCheckStore
from storage.state_changes import set_state
from storage.suggestions import SuggestionStore
from storage.tables import BatchRow, CallSentRow, EscalationRow, EscapeRow, ReviewRow, RunRow, StateChangeRow
from storage.times import utc
from storage.transactions import Database
from storage.views import CutOffCall, RoundView, RunClaim, RunSummary, RunView
from storage.workers import is_orphaned, this_worker

PERSON_MOVES: dict[RunStatus, tuple[state_machine.Event, Permission]] = {
    RunStatus.INTERRUPTED: (state_machine.Resume(), Permission.RESUME_RUN),
    RunStatus.AWAITING_HUMAN_REVIEW: (state_machine.HumanReviewSubmitted(), Permission.PERSON_REVIEW),
}
"""The only moves `transition` makes for a person (not system code): from this status, the
engine's state after this event, with this permission. Every other move is the engine's own
(system actors), and an escalation is left only through `resolve_escalation`."""


def check_person_move(s: Session, row: RunRow, new: RunState, actor: str) -> None:
    """Refuse every move a person may not make through `transition` (see `PERSON_MOVES`)."""
    current = state_of(row)
    if current.status == RunStatus.ESCALATED:
        raise MoveRefused(
            f"{actor} may not move run {row.id} out of escalated this way: an escalation is resolved "
            "only by resolving it (ship as is, re-review or reject), which records the justification"
        )
    move = PERSON_MOVES.get(current.status)
    if move is None or new.status != RunStatus.QUEUED:
        raise MoveRefused(
            f"{actor} may not move run {row.id} from {current.status.value} to {new.status.value}: "
            "a person only resumes an interrupted run or hands back a run whose person reviews are in; "
            "every other move is made by the desk itself"
        )
    event, permission = move
    require(s, actor, permission)
    expected = state_machine.advance(current, event)
    if new != expected:
        raise MoveRefused(
            f"{actor} may not set run {row.id} to {new.model_dump(mode='json')}; "
            f"the engine's move gives {expected.model_dump(mode='json')}"
        )
    if current.status == RunStatus.AWAITING_HUMAN_REVIEW:
        done = {
            r.slot for r in children(s, ReviewRow, stored_id(row), row.round) if r.status != ReviewStatus.PENDING.value
        }
        missing = [slot for slot, _ in reviewer_slots(row) if slot not in done]
        if missing:
            raise MoveRefused(
                f"run {row.id} still waits for a review in slot {' and '.join(missing)} "
                f"of round {row.round}; it goes back to the queue once both are in"
            )


def insert_run(s: Session, run: RunRow) -> int:
    """Add a queued run (queued by this process), its round 1, its first state change and its audit event."""
    run.worker = this_worker()
    s.add(run)
    s.flush()
    run_id = stored_id(run)
    touch(s, run_id)
    start_round_row(s, run_id, 1, run.original_output)
    s.add(StateChangeRow(run_id=run_id, to_status=run.status, actor=run.created_by, note="created"))
    audit.append(
        s,
        run.created_by,
        "run.created",
        "run",
        run_id,
        run_id=run_id,
        after=sha256_text(run.original_output),
        detail={
            "rubric": f"{run.rubric_name}@{run.rubric_version}",
            "spec_hash": sha256_text(run.spec),
            "reviewer_b": run.reviewer_b,
            "reviewer_c": run.reviewer_c,
            **({"reviewer_d": run.reviewer_d} if run.reviewer_d else {}),
            "panel": panel_families(run.reviewer_b, run.reviewer_c),
            "one_family": not spans_two_families(run.reviewer_b, run.reviewer_c),
            "fixer": run.fixer,
            "source": run.source,
            "person_b": run.person_b,
            "person_c": run.person_c,
            **({"batch": run.batch_id} if run.batch_id is not None else {}),
        },
    )
    return run_id


def cut_off_of(row: CallSentRow) -> CutOffCall:
    """A call cut off before its answer was stored, as the run page and the command line show it."""
    return CutOffCall(
        round_no=row.round_no,
        purpose=row.purpose,
        slot=row.slot,
        model=row.model,
        estimate_usd=row.estimate_usd,
        sent_at=utc(row.sent_at),
    )


def awaited(run: RunRow, row: CallSentRow) -> bool:
    """Whether a live process still waits for the answer of a call sent and not answered: the run is running under
    the claim of the process that sent it, and that process is not gone."""
    return (
        run.status == RunStatus.RUNNING.value
        and bool(run.worker)
        and row.worker == run.worker
        and not is_orphaned(run.worker, utc(run.updated_at))
    )


class Unanswered(TypedDict):
    """A run's calls sent and not answered, as RunView holds them."""

    in_flight: list[CutOffCall]
    cut_off: list[CutOffCall]


def unanswered(run: RunRow, rows: list[CallSentRow]) -> Unanswered:
    """A run's calls sent and not answered, as RunView's `in_flight` (awaited) and `cut_off` (nobody waits)."""
    return Unanswered(
        in_flight=[cut_off_of(r) for r in rows if awaited(run, r)],
        cut_off=[cut_off_of(r) for r in rows if not awaited(run, r)],
    )


PREVIEW_CHARS = 120
"""Characters of the output a runs-list line shows."""


def summaries(s: Session, rows: list[RunRow]) -> list[RunSummary]:
    """Runs-list lines with their costs, batch and the beginning of their output."""
    spent = costs(s, [stored_id(r) for r in rows])
    return [
        summary_of(r, spent[stored_id(r)]).model_copy(
            update={
                "batch_id": r.batch_id,
                "preview": " ".join(r.original_output[: PREVIEW_CHARS * 2].split())[:PREVIEW_CHARS],
            }
        )
        for r in rows
    ]


def run_matches(query: str, people: list[str] | tuple[str, ...] = ()) -> Any:
    """Runs whose number is the query (`12`, `#12`), or whose output, spec, rubric or starter contains it
    (any case; `%` and `_` are literal), or started by one of `people` (ids whose names matched)."""
    terms = [
        col(c).icontains(query, autoescape=True)
        for c in (RunRow.original_output, RunRow.spec, RunRow.rubric_name, RunRow.created_by)
    ]
    if query.lstrip("#").isdigit():
        terms.append(col(RunRow.id) == int(query.lstrip("#")))
    if people:
        terms.append(col(RunRow.created_by).in_(list(people)))
    return or_(*terms)


def current_output(run: RunRow, rounds: list[RoundView]) -> str:
    """The text under review now: the state's round, else the newest stored round."""
    current = [r for r in rounds if r.round_no == run.round] or rounds[-1:]
    return current[0].output_text if current else run.original_output


def final_output(run: RunRow, rounds: list[RoundView]) -> str | None:
    """What shipped: the NICE round's text, or the text a person shipped as is."""
    if run.status == RunStatus.SHIPPED.value:
        return current_output(run, rounds)
    if run.status != RunStatus.RESOLVED_SHIPPED.value:
        return None
    shipped = [d for r in rounds for d in r.decisions if d.action == "ship_as_is"]
    return shipped[-1].after_text if shipped else current_output(run, rounds)


class RunStore(RoundStore, EscalationStore, SlotStore, EscapeStore, SettingsStore, CallCostStore):
    """Implements `santa_core.run.store.Store` and the app's queries over one database."""

    def __init__(self, db: Database | Engine) -> None:
        """Over `db`, with the stores of the other record kinds sharing its database."""
        super().__init__(db)
        self.rubrics = RubricStore(self.db)
        """Stored rubric versions and trials."""
        self.suggestions = SuggestionStore(self.db)
        """What rubric learning reads, and rubric authors' decisions on its suggestions."""
        self.people = PeopleStore(self.db)
        """Who may act, with which roles."""
        self.audit = AuditStore(self.db)
        """The hash-chained audit trail (reads and verify)."""
        self.metrics = MetricsStore(self.db)
        """The Metrics page's figures, summed by the database."""
        self.spot_checks = SpotCheckStore(self.db)
        """Spot-check rules, the draw, the blind queue and its escapes."""

    def load_run(self, run_id: int) -> RunRecord:
        """The run with its current state, rubric and money spent so far."""
        with self._read() as s:
            row = get_run(s, run_id)
            return RunRecord(
                id=run_id,
                state=state_of(row),
                spec=row.spec,
                rubric=Rubric.model_validate(row.rubric_json),
                reviewer_b=row.reviewer_b,
                reviewer_c=row.reviewer_c,
                reviewer_d=row.reviewer_d,
                fixer=row.fixer,
                auto_approve=row.auto_approve,
                budget_usd=row.budget_usd,
                spent_usd=costs(s, [run_id])[run_id],
            )

    def load_round(self, run_id: int, round_no: int) -> RoundRecord | None:
        """The stored round, or None when it has not started."""
        with self._read() as s:
            get_run(s, run_id)
            rows = run_rows(s, run_id, round_no)
            if not rows.rounds:
                return None
            return RoundRecord(**rows.round_record(rows.rounds[0]))

    def spent_usd(self, run_id: int) -> float:
        """Money spent on the run (`storage.spend`: every call, failed and cut-off calls at their estimate)."""
        with self._read() as s:
            get_run(s, run_id)
            return costs(s, [run_id])[run_id]

    def transition(self, run_id: int, expected: set[RunStatus], new: RunState, actor: str, note: str = "") -> bool:
        """Compare-and-set the run state; False when the run was not in `expected`."""
        if new.status == RunStatus.ESCALATED and new.escalation_reason is None:
            raise ValueError("an escalated state needs an escalation_reason")
        wanted = {RunStatus(s) for s in expected}
        with self._tx() as s:
            row = lock_run(s, run_id)
            if RunStatus(row.status) not in wanted:
                return False
            if (
                row.status == RunStatus.RUNNING.value
                and new.status != RunStatus.INTERRUPTED
                and row.worker
                and row.worker != this_worker()
            ):
                return False  # another process holds the claim now (a take-over): only an interruption may pass

            if actor not in SYSTEM_ACTORS:
                check_person_move(s, row, new, actor)
            set_state(s, row, new, actor, note or new.note)
            return True

    def create_run(
        self,
        spec: str,
        output: str,
        rubric: Rubric,
        reviewer_b: str,
        reviewer_c: str,
        fixer: str,
        auto_approve: bool = False,
        budget_usd: float | None = None,
        max_rounds: int = 3,
        created_by: str = "local",
        source: str = "app",
        person_b: str | None = None,
        person_c: str | None = None,
        generation_cost_usd: float | None = None,
        reviewer_d: str | None = None,
    ) -> int:
        """Commit a queued run with round 1 holding `output`; returns its id.

        `person_b` / `person_c` assign a `person` reviewer slot to one person (None: anyone).
        `generation_cost_usd` is what producing the output cost, when known (for the Metrics page).
        `reviewer_d` is the third reviewer's model, required when the rubric has high-risk criteria.
        `source` is one of `Source` (ValueError otherwise).
        """
        check_text(spec, "spec")
        check_text(output, "output")
        reviewer_d = third_reviewer_for(rubric, reviewer_d)
        if source not in get_args(Source) or max_rounds < 1:
            raise ValueError(f"bad source {source!r} or max_rounds {max_rounds}")
        if generation_cost_usd is not None and not 0 <= generation_cost_usd < 1e9:
            raise ValueError(f"the generation cost must be a positive amount in USD, not {generation_cost_usd}")
        with self._tx() as s:
            require(s, created_by, Permission.START_RUN)
            for who in (person_b, person_c):
                if who:
                    require(s, who, Permission.PERSON_REVIEW)
            return insert_run(
                s,
                RunRow(
                    person_b=person_b or None,
                    person_c=person_c or None,
                    max_rounds=max_rounds,
                    round_cap=max_rounds,
                    spec=spec,
                    original_output=output,
                    rubric_name=rubric.name,
                    rubric_version=rubric.version,
                    rubric_json=rubric.model_dump(mode="json"),
                    reviewer_b=reviewer_b,
                    reviewer_c=reviewer_c,
                    reviewer_d=reviewer_d,
                    fixer=fixer,
                    auto_approve=auto_approve,
                    budget_usd=budget_usd,
                    created_by=created_by,
                    source=source,
                    generation_cost_usd=generation_cost_usd,
                    status=RunStatus.QUEUED.value,
                ),
            )

    def mark_interrupted(self, note: str = "the server stopped while this run was running") -> list[int]:
        """Runs left `running` by a process that is gone → `interrupted` (actor "system", with `note`); their ids.

        Runs whose worker is alive (a command line next to the app, another app process) stay.
        """
        with self._tx() as s:
            stmt = (
                select(RunRow)
                .where(col(RunRow.status) == RunStatus.RUNNING.value)
                .order_by(col(RunRow.id))
                .with_for_update()
            )
            rows = [r for r in s.exec(stmt).all() if is_orphaned(r.worker, r.updated_at)]
            for row in rows:
                new = state_machine.advance(state_of(row), state_machine.Interrupt(note=note))
                set_state(s, row, new, "system", note)
            return [stored_id(row) for row in rows]

    def get_run_view(self, run_id: int) -> RunView:
        """Everything about one run, from one snapshot."""
        with self._read() as s:
            run = get_run(s, run_id)
            rows = run_rows(s, run_id)
            history = children(s, StateChangeRow, run_id, None)
            escalations = children(s, EscalationRow, run_id, None)
            escapes = children(s, EscapeRow, run_id, None)
            rounds = [rows.round_view(r) for r in rows.rounds]
            return RunView(
                **run.model_dump(include=set(RUN_COPIED & RunView.model_fields.keys())),
                state=state_of(run),
                created_at=utc(run.created_at),
                updated_at=utc(run.updated_at),
                rubric=Rubric.model_validate(run.rubric_json),
                rounds=rounds,
                history=[state_change_of(h) for h in history],
                escalations=[escalation_of(e, run) for e in escalations],
                escapes=[escape_of(e) for e in escapes],
                total_cost_usd=spend.usd(rows.spends),
                **unanswered(run, cut_off_calls(s, [run_id])),
                current_output=current_output(run, rounds),
                final_output=final_output(run, rounds),
                batch_id=run.batch_id,
                batch_paused=run.batch_id is not None and bool(s.get_one(BatchRow, run.batch_id).paused),
            )

    def run_json(self, run_id: int) -> dict[str, Any]:
        """The run as one JSON-ready dict (the CLI's --json answer)."""
        return run_json(self.get_run_view(run_id))

    def list_runs(
        self,
        limit: int = 200,
        status: RunStatus | str | None = None,
        search: str = "",
        batch_samples: bool = True,
        people: list[str] | tuple[str, ...] = (),
    ) -> list[RunSummary]:
        """Newest runs first, optionally of one status, matching a search (`run_matches`), without the
        runs that review a batch's sample items when `batch_samples` is False."""
        stmt = select(RunRow).order_by(col(RunRow.id).desc()).limit(limit)
        if status is not None:
            stmt = stmt.where(RunRow.status == RunStatus(status).value)
        if not batch_samples:
            stmt = stmt.where(col(RunRow.batch_id).is_(None))
        if search.strip():
            stmt = stmt.where(run_matches(search.strip(), people))
        with self._read() as s:
            return summaries(s, list(s.exec(stmt).all()))

    def run_states(self, run_ids: list[int]) -> dict[int, tuple[RunStatus, str, str | None, str]]:
        """Each run's status, note, worker (the process that claimed it) and source, in one read (the task
        engine's hand-over and the waits on queued runs)."""
        if not run_ids:
            return {}
        stmt = select_columns(RunRow.id, RunRow.status, RunRow.note, RunRow.worker, RunRow.source).where(
            col(RunRow.id).in_(run_ids)
        )
        with self._read() as s:
            return {
                i: (RunStatus(status), note or "", worker, source)
                for i, status, note, worker, source in s.exec(stmt).all()
            }

    def claims(self, run_ids: list[int]) -> dict[int, RunClaim]:
        """Each run's status, note, worker and last change, in one read (whether a batch sample's reviews were left
        behind by a process that is gone: `desk.wiring.sweep`)."""
        if not run_ids:
            return {}
        stmt = select_columns(RunRow.id, RunRow.status, RunRow.note, RunRow.worker, RunRow.updated_at).where(
            col(RunRow.id).in_(run_ids)
        )
        with self._read() as s:
            return {
                i: RunClaim(status=RunStatus(status), note=note or "", worker=worker, updated_at=utc(updated))
                for i, status, note, worker, updated in s.exec(stmt).all()
            }

    def running_under(self, worker: str) -> list[int]:
        """Runs `running` under `worker`'s claim (a worker's own runs, which it gives back when none of its threads
        drives them any more: `desk.job_host.JobHost.release_orphans`)."""
        stmt = select(RunRow.id).where(RunRow.status == RunStatus.RUNNING.value, RunRow.worker == worker)
        with self._read() as s:
            return sorted(not_null(s.exec(stmt).all()))

    def active_batch_reviewers(self) -> list[tuple[str, str]]:
        """The reviewers (B, C) of every batch run queued or running now, one pair per run (the task engine's
        limit per provider on batch reviews)."""
        wanted = (RunStatus.QUEUED.value, RunStatus.RUNNING.value)
        stmt = select(RunRow.reviewer_b, RunRow.reviewer_c).where(
            RunRow.source == "batch", col(RunRow.status).in_(wanted)
        )
        with self._read() as s:
            return [(b, c) for b, c in s.exec(stmt).all()]

    def runs_to_resume(self) -> list[RunSummary]:
        """Runs to pick up after a restart: `queued` (resubmit) and `interrupted` (resume)."""
        wanted = (RunStatus.QUEUED.value, RunStatus.INTERRUPTED.value)
        stmt = select(RunRow).where(col(RunRow.status).in_(wanted)).order_by(col(RunRow.id))
        with self._read() as s:
            return summaries(s, list(s.exec(stmt).all()))
