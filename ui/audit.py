"""The Audit page: filters over the hash-chained audit trail, a detail view, verify and CSV export."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta

import pandas as pd
import streamlit as st

from santa_core import words
from storage.audit import AuditEvent
from ui import app_desk, components, identity, spot_checks, table_fit
from ui.safe import escape_markdown

ANY = "any"
EARLIEST = date(2000, 1, 1)
"""The date inputs' lower bound (Streamlit's default is ten years back)."""
SHORT = 12
"""Characters of a hash shown in the table (the detail view and the CSV have all 64)."""
SEALS_HELP = (
    "Each write to the desk's data ends with a row seal: a system event holding the hash of every row it "
    "changed, so *Verify the chain* can tell data changed outside the desk. Hidden by default: there is "
    "one after nearly every other event."
)
HIDDEN_SCAN = 100_000
"""At most this many events of one blind run are counted as hidden."""


@dataclass
class Filters:
    """What the person asked for; None or empty: no restriction."""

    actor: str | None = None
    action: str | None = None
    entity_type: str | None = None
    run_id: int | None = None
    since: datetime | None = None
    until: datetime | None = None
    limit: int = 500
    seals: bool = False
    """List the row seals too (the system's bookkeeping events, hidden by default)."""


def short(value: str | None) -> str:
    """A hash shortened for the table."""
    return "" if not value else value[:SHORT] + "…"


def action_prefixes(actions: list[str]) -> list[str]:
    """Each action family (`run.`, `escalation.`, …) followed by the actions in it."""
    families = sorted({a.split(".", 1)[0] + "." for a in actions if "." in a})
    return sorted({*families, *actions})


def action_words(action: str) -> str:
    """An action or a family (`escalation.`) as a person reads it."""
    if action == ANY or not action.endswith("."):
        return action if action == ANY else words.audit_action(action)
    return f"{words.entity(action[:-1])}: every action"


CODES_HELP = "The stored code is in the CSV export and in *One event in full*."


def _day(value: date | None, plus: int = 0) -> datetime | None:
    return None if value is None else datetime.combine(value + timedelta(days=plus), time(), tzinfo=UTC)


def filters(facets: dict[str, list[str]]) -> Filters | None:
    """The filter controls; None when one of them holds something unusable (an error is shown)."""
    c1, c2, c3, c4 = st.columns(4)
    actor = c1.selectbox(
        "Actor",
        [ANY, *facets.get("actor", [])],
        key="audit_actor",
        format_func=lambda a: a if a == ANY else identity.display(a),
    )
    action = c2.selectbox(
        "Action",
        [ANY, *action_prefixes(facets.get("action", []))],
        key="audit_action",
        format_func=action_words,
        help="A family such as *escalation: every action* matches every action in it. " + CODES_HELP,
    )
    entity = c3.selectbox(
        "Entity",
        [ANY, *facets.get("entity_type", [])],
        key="audit_entity",
        format_func=lambda e: e if e == ANY else words.entity(e),
    )
    raw_run = c4.text_input("Run", key="audit_run", placeholder="any run")
    d1, d2, d3 = st.columns(3)
    since = d1.date_input("From (UTC)", None, min_value=EARLIEST, key="audit_since")
    until = d2.date_input("Until (UTC, inclusive)", None, min_value=EARLIEST, key="audit_until")
    limit = d3.number_input("Show at most", 10, 10_000, 500, step=100, key="audit_limit")
    seals = st.checkbox("Show the row seals", key="audit_seals", help=SEALS_HELP)
    run_id = None
    if raw_run.strip():
        if not raw_run.strip().lstrip("#").isdigit():
            st.error(f"{escape_markdown(raw_run)} is not a run number.")
            return None
        run_id = int(raw_run.strip().lstrip("#"))
    return Filters(
        actor=None if actor == ANY else actor,
        action=None if action == ANY else action,
        entity_type=None if entity == ANY else entity,
        run_id=run_id,
        since=_day(since),
        until=_day(until, plus=1),
        limit=int(limit),
        seals=seals,
    )


@dataclass
class Selection:
    """The events a person may see, newest first, and how many matching ones are held back."""

    items: list[AuditEvent]
    hidden: int = 0
    matching: int = 0
    """The events the filters select that this page may list (past *Show at most* too; blind runs' never)."""
    seals_hidden: int = 0
    """Row seals the filters select that are not listed (the *Show the row seals* box is off)."""


def _query(f: Filters) -> dict:
    return {"actor": f.actor, "action": f.action, "entity_type": f.entity_type, "since": f.since, "until": f.until}


def _hidden_count(f: Filters, blind: set[int], upto: int) -> int:
    """Events of blind runs the filters select (a run's events are few while its first reviews are out)."""
    store = app_desk.desk().audit
    runs = blind if f.run_id is None else blind & {f.run_id}
    return sum(len(store.events(**_query(f), run_id=r, limit=HIDDEN_SCAN, seals=f.seals, upto=upto)) for r in runs)


def events(f: Filters) -> Selection:
    """The events the filters select, newest first, without those of runs whose reviews are still blind.

    The page is open to everyone, so while a person reviewer's slot is open the run's events stay
    out: a review's answer hash (an all-PASS answer can be recomputed), the gate's decision and
    issue count, decision reasons and escalation justifications would show them the other review
    or earlier rounds before theirs. Verify still walks the whole chain.
    """
    repo = app_desk.desk().runs
    upto = repo.audit.head_seq()  # the list and its counts read the same chain, however many events arrive meanwhile
    blind = repo.blind_run_ids() | set(spot_checks.judging_blind())  # and runs this person spot-checks blind
    hidden = _hidden_count(f, blind, upto)
    items = repo.audit.events(
        **_query(f), run_id=f.run_id, limit=f.limit + hidden, newest_first=True, seals=f.seals, upto=upto
    )
    later = repo.blind_run_ids() - blind  # a run that turned blind while we read stays hidden too
    if later:
        blind |= later
        hidden = _hidden_count(f, blind, upto)
    # Counted without the blind runs: a number that grows when their model reviewer answers would tell.
    listed, seals = repo.audit.counts(**_query(f), run_id=f.run_id, upto=upto, except_runs=blind, seals=f.seals)
    return Selection(
        [e for e in items if e.run_id not in blind][: f.limit], hidden, matching=listed, seals_hidden=seals
    )


def count_line(selection: Selection) -> str:
    """How many events are listed, of how many the filters select, and why the rest are not listed."""
    shown, total = len(selection.items), selection.matching + selection.seals_hidden
    if shown == total:
        return f"{shown} event{'s' if shown != 1 else ''}, newest first"
    why = []
    if selection.matching > shown:
        why.append(f"{selection.matching - shown} older past *Show at most*")
    if selection.seals_hidden:
        why.append(
            f"{selection.seals_hidden} row seal{'s' if selection.seals_hidden != 1 else ''} hidden (system "
            "bookkeeping; tick *Show the row seals* to list them)"
        )
    return f"{shown} shown of {total} events, newest first: {'; '.join(why)}"


def hidden_note(count: int) -> None:
    """Say how many events are held back, and why (nothing when none is)."""
    if count:
        # No number: a count that grows by one when the model reviewer answers would tell the person
        # reviewer that the other review is in (the run page hides even the spend for that reason).
        st.info(
            "Events of runs waiting for a person reviewer, or drawn for a spot-check you may judge, are hidden, "
            "and left out of the counts below, until the reviews are in or the spot-check is judged (*Verify the "
            "chain* counts every event)."
        )


PAGE_COLUMNS = ["seq", "time", "actor", "action", "entity", "run", "detail", "hash"]
"""The page's table: the event's own hash shortened; the hashes it links (before, after, previous) are in *One event
in full* and the CSV, where they can be read whole (four cut hashes did not fit the page)."""


def frame(items: list[AuditEvent], full: bool = False) -> pd.DataFrame:
    """The events as a table: on the page in words with the event's hash shortened (PAGE_COLUMNS); in the export
    as stored (codes, actor ids, the detail's JSON, every hash whole)."""
    cut = (lambda h: h or "") if full else short
    rows = [
        {
            "seq": e.seq,
            "time": e.created_at.astimezone(UTC).isoformat(timespec="seconds")
            if full
            else f"{e.created_at.astimezone(UTC):%Y-%m-%d %H:%M:%S}",
            "actor": e.actor if full else identity.display(e.actor),
            "action": e.action if full else words.audit_action(e.action),
            "entity": f"{e.entity_type if full else words.entity(e.entity_type)} {e.entity_id}",
            "run": e.run_id,
            "before": cut(e.before_hash),
            "after": cut(e.after_hash),
            "prev": cut(e.prev_hash),
            "hash": cut(e.hash),
            "detail": json.dumps(e.detail, sort_keys=True, ensure_ascii=False) if full else words.detail(e.detail),
        }
        for e in items
    ]
    columns = ["seq", "time", "actor", "action", "entity", "run", "before", "after", "prev", "hash", "detail"]
    table = pd.DataFrame(rows, columns=columns if full else PAGE_COLUMNS)
    table["run"] = table["run"].astype("Int64")  # whole numbers, blank for events of no run (not 1.0 / None)
    return table


COLUMNS = {
    "time": st.column_config.TextColumn("time (UTC)"),
    "run": st.column_config.NumberColumn("run", format="%d"),
    "action": st.column_config.TextColumn("action", help=CODES_HELP),
    "detail": st.column_config.TextColumn("detail", help=CODES_HELP),
}


def table(selection: Selection) -> None:
    """How many events are listed and why not more; the events, their columns fitted to the page; and a CSV of
    the same selection (full hashes, actor ids)."""
    items = selection.items
    if not items:
        seals = selection.seals_hidden
        st.info(
            "No audit event matches these filters."
            + (
                f" {seals} row seal{'s do' if seals != 1 else ' does'}: tick *Show the row seals* to list them."
                if seals
                else ""
            )
        )
        return
    st.caption(count_line(selection))
    shown = frame(items)
    fitted = table_fit.fit(
        shown, table_fit.PAGE_PX, wide=("detail",), labels=components.labels_of(COLUMNS), breakable=("actor",)
    )
    st.dataframe(
        shown,
        hide_index=True,
        width="stretch",
        row_height=fitted.row_height,
        column_config=components.fitted_config(fitted, COLUMNS),
    )
    st.download_button(
        "Export these events as CSV",
        frame(items, full=True).to_csv(index=False),
        file_name="santa-audit.csv",
        mime="text/csv",
        key="audit_csv",
    )


def detail(items: list[AuditEvent]) -> None:
    """One event in full: every field, every hash whole."""
    by_seq = {e.seq: e for e in items}
    seq = st.selectbox(
        "Event",
        list(by_seq),
        key="audit_pick",
        format_func=lambda s: f"#{s} · {words.audit_action(by_seq[s].action)} · {identity.display(by_seq[s].actor)}",
    )
    if seq is not None:
        st.code(
            json.dumps(by_seq[seq].model_dump(mode="json"), indent=2, ensure_ascii=False),
            language="json",
            wrap_lines=True,
        )


def verify() -> None:
    """Recompute the whole chain and every sealed row; say whether they hold, naming what differs; show the
    newest hash to copy out, and check one kept earlier."""
    kept = st.text_input(
        "A head hash you kept (optional)",
        key="audit_expect",
        max_chars=64,
        help="Paste a newest hash noted earlier (or from SANTA_AUDIT_ANCHOR_FILE): verify then also "
        "fails when the chain no longer reaches it, the only way to catch a cut tail with a "
        "rewritten head.",
    ).strip()
    if st.button("Verify the chain", type="primary", key="audit_verify"):
        report = app_desk.desk().audit.verify(expect=kept or None)
        (st.success if report.ok else st.error)(escape_markdown(report.describe()))
        for problem in report.row_problems[5:]:
            st.error(escape_markdown(problem))
        if report.ok and report.head_hash:
            st.caption("Newest hash — copy it to a place the database's administrators cannot write:")
            st.code(report.head_hash, language=None)
