"""Rubric versions: every save is a new immutable row; runs keep the version they were judged by.

A version stores the authored document (own criteria + the pinned rubrics it extends) and the
rubric it resolves to. Saving refuses a document that does not resolve, a missing change note,
and a stale edit (someone saved a newer version since the author opened theirs). Saving content
identical to the latest version creates nothing.

Rubric trials (the Rubrics page's "Try it" and re-checks of past runs) are appended here too.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import func
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, select

from santa_core.models import CheckOutcome, ReviewOutcome, Rubric, RubricDocument
from santa_core.roles import Permission
from santa_core.rubrics import library as lib
from santa_core.rubrics.learning import SuggestionDecided
from santa_core.rubrics.store import (
    RubricConflict,
    RubricNotFound,
    RubricSaveError,
    RubricSummary,
    SaveResult,
    TrialView,
    VersionInfo,
)
from santa_core.text import sha256_text
from storage import audit
from storage.call_log import CallLogStore
from storage.hashing import content_hash
from storage.people import RoleCheck, require
from storage.tables import RubricVersionRow, RunRow, SuggestionDecisionRow, TrialRow
from storage.times import utc

MAX_NOTE_CHARS = 2_000


class RubricStore(RoleCheck, CallLogStore):
    """Stored rubric versions and trials (implements `santa_core.rubrics.store.Store`); every method is one
    transaction."""

    # --- reading ------------------------------------------------------------------------------

    @staticmethod
    def _row(s: Session, name: str, version: int | None) -> RubricVersionRow | None:
        stmt = select(RubricVersionRow).where(RubricVersionRow.name == name)
        if version is not None:
            stmt = stmt.where(RubricVersionRow.version == version)
        return s.exec(stmt.order_by(col(RubricVersionRow.version).desc()).limit(1)).first()

    def _get(self, name: str, version: int | None) -> RubricVersionRow:
        with self._read() as s:
            row = self._row(s, name, version)
        if row is None:
            what = f"{name}@{version}" if version is not None else name
            raise RubricNotFound(f"unknown rubric {what!r} (known: {', '.join(self.names()) or 'none'})")
        return row

    def names(self) -> list[str]:
        """Stored rubric names, alphabetical."""
        with self._read() as s:
            return sorted(set(s.exec(select(RubricVersionRow.name)).all()))

    def document(self, name: str, version: int | None = None) -> RubricDocument:
        """The authored document of a version (None: the latest)."""
        return RubricDocument.model_validate(self._get(name, version).document_json)

    def resolved(self, name: str, version: int | None = None) -> Rubric:
        """The rubric reviewers see for a version (None: the latest)."""
        return Rubric.model_validate(self._get(name, version).resolved_json)

    def latest_version(self, name: str) -> int | None:
        """The newest version number of a rubric, None when it does not exist."""
        with self._read() as s:
            row = self._row(s, name, None)
        return row.version if row else None

    def lookup(self, name: str, version: int | None) -> tuple[RubricDocument, Rubric]:
        """`santa_core.rubrics.library.Lookup` over stored versions ("base" is an alias of "general")."""
        name = {"base": "general"}.get(name, name)
        try:
            row = self._get(name, version)
        except RubricNotFound as exc:
            raise KeyError(str(exc)) from exc
        return RubricDocument.model_validate(row.document_json), Rubric.model_validate(row.resolved_json)

    def list_rubrics(self) -> list[RubricSummary]:
        """The latest version of every rubric, by domain then name."""
        latest = (
            select(RubricVersionRow.name, func.max(RubricVersionRow.version).label("v"))
            .group_by(RubricVersionRow.name)
            .subquery()
        )
        stmt = select(RubricVersionRow).join(
            latest, (col(RubricVersionRow.name) == latest.c.name) & (col(RubricVersionRow.version) == latest.c.v)
        )
        with self._read() as s:
            rows = s.exec(stmt).all()
        return sorted((_summary(r) for r in rows), key=lambda r: (r.domain, r.name))

    def versions(self, name: str) -> list[VersionInfo]:
        """Every version of a rubric, newest first."""
        stmt = (
            select(RubricVersionRow)
            .where(col(RubricVersionRow.name) == name)
            .order_by(col(RubricVersionRow.version).desc())
        )
        with self._read() as s:
            return [_info(r) for r in s.exec(stmt).all()]

    def export(self, name: str, version: int | None = None, fmt: str = "yaml") -> str:
        """A version as YAML or JSON text (the documented file schema)."""
        return lib.export_document(self.document(name, version), fmt)

    # --- writing ------------------------------------------------------------------------------

    def save(
        self,
        doc: RubricDocument,
        author: str,
        note: str,
        base_version: int | None,
        source: str = "studio",
        suggestion_key: str | None = None,
    ) -> SaveResult:
        """Save a new version of `doc.name`, made from `base_version` (None: a new rubric); with `suggestion_key`,
        the version applies that rubric-learning suggestion.

        Raises RubricSaveError (with every problem), RubricConflict, or SuggestionDecided (the suggestion was
        accepted or dismissed already); changes nothing then.
        """
        note = note.strip()
        if not note:
            raise RubricSaveError(["change note: say what changed and why (it is kept with the version)"])
        if "\x00" in note:
            raise RubricSaveError(["change note: contains a NUL character; remove it"])
        if len(note) > MAX_NOTE_CHARS:
            raise RubricSaveError([f"change note: at most {MAX_NOTE_CHARS} characters"])
        return self._insert(
            self._checked(doc), author, note, source, expect=base_version, version=None, suggestion_key=suggestion_key
        )

    def import_text(self, text: str, fmt: str, author: str, note: str = "") -> SaveResult:
        """Import a YAML/JSON rubric file as the next version; identical content creates nothing.

        The file's version number is kept when it is newer than the stored one (so an exported
        file imported into another database exports to the same bytes). Raises
        `santa_core.rubrics.library.RubricFileError` naming field and line; nothing changes then.
        """
        doc = lib.read_document(text, fmt, self.lookup)
        resolved = lib.resolve(doc, self.lookup)
        note = note.replace("\x00", "").strip() or f"imported from a {fmt.upper()} file"
        return self._insert((doc, resolved), author, note, "import", expect="any", version=doc.version)

    def _checked(self, doc: RubricDocument) -> tuple[RubricDocument, Rubric]:
        """The same checks an imported file gets: parents exist and are pinned, ids unique, checks valid."""
        try:
            pinned = lib.check_document(doc, self.lookup)
            return pinned, lib.resolve(pinned, self.lookup)
        except (lib.RubricFileError, lib.RubricCompositionError) as exc:
            errors = getattr(exc, "errors", None) or [str(exc)]
            raise RubricSaveError(errors) from exc

    def _insert(
        self,
        checked: tuple[RubricDocument, Rubric],
        author: str,
        note: str,
        source: str,
        expect: int | None | str,
        version: int | None,
        suggestion_key: str | None = None,
    ) -> SaveResult:
        """Append the version row unless the content equals the latest version's."""
        doc, resolved = checked
        digest = sha256_text(lib.content_key(doc))
        try:
            with self._tx() as s:
                require(s, author, Permission.EDIT_RUBRIC)
                if suggestion_key is not None:
                    _undecided(s, suggestion_key)
                latest = self._row(s, doc.name, None)
                current = latest.version if latest else None
                if expect != "any" and expect != current:
                    raise RubricConflict(_conflict_message(doc.name, expect, latest))
                if latest is not None and latest.content_hash == digest:
                    return SaveResult(name=doc.name, version=latest.version, created=False)
                number = max(version or 0, (current or 0) + 1)
                s.add(_version_row(doc, resolved, number, digest, author, note, source))
                audit.append(
                    s,
                    author,
                    "rubric.saved",
                    "rubric",
                    f"{doc.name}@{number}",
                    before=None if latest is None else latest.content_hash,
                    after=digest,
                    detail={"source": source, "note": note},
                )
        except IntegrityError as exc:  # PostgreSQL: another writer took the number first
            raise RubricConflict(f"another version of {doc.name!r} was saved at the same moment; reload") from exc
        return SaveResult(name=doc.name, version=number, created=True)

    def seed_builtins(self) -> None:
        """Store the built-in rubrics as version 1 of each name that does not exist yet."""
        docs = lib.builtin_documents()
        with self._read() as s:  # one read, not a write transaction per rubric: nearly always all are there
            names = [doc.name for doc in docs]
            stored = set(s.exec(select(RubricVersionRow.name).where(col(RubricVersionRow.name).in_(names))).all())
        for doc in docs:
            if doc.name in stored:
                continue
            try:
                with self._tx() as s:
                    if self._row(s, doc.name, None) is not None:
                        continue
                    resolved = lib.resolve(doc, self.lookup)
                    digest = sha256_text(lib.content_key(doc))
                    s.add(_version_row(doc, resolved, 1, digest, "santa", "built-in rubric", "builtin"))
                    audit.append(
                        s,
                        "builtin",
                        "rubric.saved",
                        "rubric",
                        f"{doc.name}@1",
                        after=digest,
                        detail={"source": "builtin", "note": "built-in rubric"},
                    )
            except IntegrityError:
                continue  # another process seeded it first

    # --- trials -------------------------------------------------------------------------------

    def record_trial(
        self,
        kind: str,
        rubric: Rubric,
        output: str,
        checks: list[CheckOutcome],
        outcome: ReviewOutcome | None,
        actor: str,
        run_id: int | None = None,
        stored_version: int | None = None,
        verdict: str | None = None,
        trial_key: str | None = None,
    ) -> int:
        """Append one trial with its reviewer call (if any) and its verdict (checks and reviewer); returns its id.
        Its calls are in the call log already, named by `trial_key` (`note_calls_answered`)."""
        row = TrialRow(
            kind=kind,
            run_id=run_id,
            rubric_name=rubric.name,
            rubric_version=stored_version,
            rubric_json=rubric.model_dump(mode="json"),
            output_text=output,
            output_hash=sha256_text(output),
            check_outcomes_json=[c.model_dump(mode="json") for c in checks],
            actor=actor,
            **(_outcome_values(outcome) if outcome else {}),
            verdict=verdict,
            trial_key=trial_key,
        )
        with self._tx() as s:
            require(s, actor, Permission.TRY_RUBRIC)
            s.add(row)
            s.flush()
            assert row.id is not None
            audit.append(
                s,
                actor,
                "rubric.trial",
                "rubric_trial",
                row.id,
                run_id=run_id,
                after=row.output_hash,
                detail={"kind": kind, "rubric": rubric.name, "verdict": verdict, "cost_usd": str(row.cost_usd)},
            )
            return row.id

    def trials(
        self, kind: str | None = None, run_ids: list[int] | None = None, limit: int = 200, rubric: str | None = None
    ) -> list[TrialView]:
        """Stored trials, newest first, optionally of one kind, for some runs or of one rubric."""
        stmt = select(TrialRow).order_by(col(TrialRow.id).desc()).limit(limit)
        if kind:
            stmt = stmt.where(TrialRow.kind == kind)
        if rubric:
            stmt = stmt.where(TrialRow.rubric_name == rubric)
        if run_ids is not None:
            stmt = stmt.where(col(TrialRow.run_id).in_(run_ids))
        with self._read() as s:
            return [_trial_view(r) for r in s.exec(stmt).all()]

    def final_outputs(self, run_ids: list[int]) -> dict[int, tuple[str, str]]:
        """run id -> (spec, final output text) for finished runs (the last round's output)."""
        from storage.tables import RoundRow

        last = (
            select(RoundRow.run_id, func.max(RoundRow.round_no).label("n"))
            .where(col(RoundRow.run_id).in_(run_ids))
            .group_by(col(RoundRow.run_id))
            .subquery()
        )
        stmt = (
            select(RoundRow.run_id, RunRow.spec, RoundRow.output_text)
            .join(RoundRow, col(RoundRow.run_id) == col(RunRow.id))
            .join(last, (last.c.run_id == RoundRow.run_id) & (last.c.n == RoundRow.round_no))
        )
        with self._read() as s:
            return {rid: (spec, text) for rid, spec, text in s.exec(stmt).all()}


def _conflict_message(name: str, expect: int | None | str, latest: RubricVersionRow | None) -> str:
    if latest is None:
        return f"rubric {name!r} no longer exists at version {expect}; reload"
    if expect is None:
        return f"a rubric named {name!r} already exists (version {latest.version}); pick another name or open it"
    return (
        f"{latest.author} saved {name} v{latest.version} while you were editing v{expect}; "
        "compare their version before saving yours"
    )


def _undecided(s: Session, key: str) -> None:
    """Refuse (SuggestionDecided) a suggestion with a decision: in the save's transaction, so two accepts of one
    suggestion cannot both find it open."""
    action = s.exec(select(SuggestionDecisionRow.action).where(SuggestionDecisionRow.suggestion_key == key)).first()
    if action is not None:
        raise SuggestionDecided(key, action)


def _version_row(
    doc: RubricDocument, resolved: Rubric, number: int, digest: str, author: str, note: str, source: str
) -> RubricVersionRow:
    doc = doc.model_copy(update={"version": number})
    resolved = resolved.model_copy(update={"version": number})
    return RubricVersionRow(
        name=doc.name,
        version=number,
        domain=doc.domain,
        document_json=lib.document_data(doc),
        resolved_json=resolved.model_dump(mode="json"),
        content_hash=digest,
        author=author,
        change_note=note,
        source=source,
    )


def _summary(row: RubricVersionRow) -> RubricSummary:
    doc = row.document_json
    return RubricSummary(
        name=row.name,
        domain=row.domain,
        version=row.version,
        description=doc.get("description", ""),
        extends=list(doc.get("extends", [])),
        criteria=len(row.resolved_json.get("criteria", [])),
        author=row.author,
        saved_at=utc(row.created_at),
    )


def _info(row: RubricVersionRow) -> VersionInfo:
    return VersionInfo(
        name=row.name,
        version=row.version,
        author=row.author,
        created_at=utc(row.created_at),
        change_note=row.change_note,
        source=row.source,
    )


def _outcome_values(outcome: ReviewOutcome) -> dict[str, Any]:
    """Columns of a trial's reviewer call: verdict, review, usage, cost and the raw call."""
    call = outcome.calls[0] if outcome.calls else None
    request = call.request if call else None
    response = call.response if call else outcome.raw_response
    return {
        "reviewer": outcome.reviewer,
        "review_status": outcome.status.value,
        "review_json": outcome.review.model_dump(mode="json") if outcome.review else None,
        "error": outcome.error,
        "request_json": request,
        "response_text": response,
        "content_hash": content_hash(request, response) if request is not None else None,
        "cost_usd": outcome.cost_usd,
        "latency_s": outcome.latency_s,
        **outcome.usage.model_dump(),
    }


def _trial_view(row: TrialRow) -> TrialView:
    assert row.id is not None
    return TrialView(
        id=row.id,
        kind=row.kind,
        run_id=row.run_id,
        rubric_name=row.rubric_name,
        rubric_version=row.rubric_version,
        output_hash=row.output_hash,
        checks=[CheckOutcome.model_validate(c) for c in row.check_outcomes_json],
        reviewer=row.reviewer,
        review_status=row.review_status,
        verdict=row.verdict,
        review=row.review_json,
        error=row.error,
        cost_usd=row.cost_usd,
        actor=row.actor,
        created_at=utc(row.created_at),
    )
