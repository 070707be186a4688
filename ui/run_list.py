"""The Runs page's list: search, status filter and "hide batch samples", kept in the URL; one line per
run with the beginning of its text; the run's number is the link that opens it (the one way to).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

import pandas as pd
import streamlit as st

from santa_core import words
from santa_core.models import RunStatus
from storage.views import RunSummary
from ui import app_desk, components, identity, table_fit

ALL = "all"
LIMIT = 500
"""Runs listed at most (newest first); a search reaches every run, not only these."""
SEARCH, STATUS, HIDE = "runs_q", "runs_status", "runs_hide_samples"
"""The widgets' keys."""
URL = {SEARCH: "q", STATUS: "status", HIDE: "samples"}
"""Which query parameter keeps which filter (`?q=acme&status=escalated&samples=shown`)."""
SHOWN = "shown"
"""`samples=shown`: batch sample reviews are listed too (hidden is the default, so it needs no parameter)."""
STATUS_HELP = "Where the run stands. The stored codes (JSON record, command line):  \n" + words.legend(words.STATUS)
STATUS_COLUMN_HELP = (
    STATUS_HELP.replace("Where the run stands.", "Where the run stands, and why an escalated run escalated.")
    + "  \n"
    + words.legend(words.REASON)
)

SOURCE = {"cli": "command line", "batch": "batch"}
"""Where a run came from, said after who started it (a run started in the app says nothing more)."""
ROW_LINES = 4
"""The most lines a row of the list is tall: three when they do, four when long previews (120 characters),
reasons and names (an e-mail address may break at a line's end) share the row."""
ROWS_SHOWN = 10
"""Rows drawn before the list scrolls."""
WIDTHS = {"run": 56}
"""The run number (its link) keeps its width; the other columns share the rest by their content."""
RUN_LINK = r"run=(\d+)$"
"""A run's link shows its number (the part of its address this captures)."""


@dataclass(frozen=True)
class Filters:
    """What the person asked the list for."""

    search: str = ""
    status: str = ALL
    hide_samples: bool = True


def _seed_from_url() -> None:
    """A widget not drawn yet in this session (a fresh tab, a shared link, coming back from another
    page) starts from the URL; one that exists keeps what the person chose."""
    params = st.query_params
    if SEARCH not in st.session_state:
        st.session_state[SEARCH] = params.get(URL[SEARCH], "")
    if STATUS not in st.session_state:
        wanted = params.get(URL[STATUS], ALL)
        st.session_state[STATUS] = wanted if wanted in {ALL, *RunStatus} else ALL
    if HIDE not in st.session_state:
        st.session_state[HIDE] = params.get(URL[HIDE]) != SHOWN


def _write_url(f: Filters) -> None:
    """The filters into the URL, so a reload or a copied link shows the same list; defaults leave no trace."""
    wanted = {
        URL[SEARCH]: f.search,
        URL[STATUS]: "" if f.status == ALL else f.status,
        URL[HIDE]: "" if f.hide_samples else SHOWN,
    }
    for name, value in wanted.items():
        if value and st.query_params.get(name) != value:
            st.query_params[name] = value
        elif not value and name in st.query_params:
            del st.query_params[name]


def filters() -> Filters:
    """The search box, the status filter and the batch-sample switch, seeded from and kept in the URL."""
    _seed_from_url()
    left, mid, right = st.columns([3, 2, 3], vertical_alignment="bottom")  # the toggle's label whole at 1,024 px
    search = left.text_input(
        "Search",
        key=SEARCH,
        placeholder="number, words, rubric, who",
        help="Matches the run number (12 or #12), the output as submitted, the spec, the "
        "rubric's name and who started the run (name or e-mail), in any case.",
    )
    status = mid.selectbox(
        "Status",
        [ALL, *(s.value for s in RunStatus)],
        key=STATUS,
        format_func=lambda s: "all" if s == ALL else components.status_label(s),
        help=STATUS_HELP,
    )
    hide = right.toggle(
        "Hide batch samples",
        key=HIDE,
        help="A batch reviews a sample of its items, each as a run of its own; they are listed on "
        "the Batch page. Off: they are listed here too.",
    )
    chosen = Filters(search=search.strip(), status=str(status), hide_samples=bool(hide))
    _write_url(chosen)
    return chosen


def runs(f: Filters) -> list[RunSummary]:
    """The runs the filters select, newest first ("started by" also matches people's names)."""
    repo = app_desk.desk().runs
    q = f.search.lower()
    people = [p.id for p in repo.people.all() if q and q in p.label.lower()]
    return repo.list_runs(
        limit=LIMIT,
        status=None if f.status == ALL else f.status,
        search=f.search,
        batch_samples=not f.hide_samples,
        people=people,
    )


def nothing_listed(f: Filters) -> None:
    """Why the list is empty: no run at all yet, or none that the filters let through."""
    if not app_desk.desk().runs.list_runs(limit=1):
        st.info("No runs yet. Start one on the Review page or with `python -m santa_core review`.")
        return
    st.info(
        "No run matches these filters."
        + (
            " Batch sample reviews are hidden: turn off *Hide batch samples* to list them too."
            if f.hide_samples
            else ""
        )
    )


def when(at: datetime) -> str:
    """A creation time, short: date and minutes (UTC), which sorts as it reads."""
    return f"{at.astimezone(UTC):%Y-%m-%d %H:%M}"


def started_by(r: RunSummary) -> str:
    """Who started the run as they were named then, and where from unless it was the app."""
    where = "batch sample" if r.batch_id else "" if r.source == "app" else SOURCE.get(r.source, r.source)
    return identity.display_at(r.created_by, r.created_at) + (f" ({where})" if where else "")


def status_words(r: RunSummary) -> str:
    """The status, and for an escalated run why it escalated (a resolved one says how it was resolved; its
    page says why it had escalated)."""
    label = components.status_label(r.status)
    return (
        f"{label}: {words.reason(r.escalation_reason)}"
        if r.status == RunStatus.ESCALATED and r.escalation_reason
        else label
    )


def rubric_words(r: RunSummary) -> str:
    """The rubric version and the round the run reached, each unbroken: "desk v1, round 3"."""
    rubric = f"{r.rubric_name} v{r.rubric_version}"
    return table_fit.unbroken(rubric + ",") + " " + table_fit.unbroken(f"round {r.rounds}") if r.rounds else rubric


def frame(items: list[RunSummary], blind: set[int]) -> pd.DataFrame:
    """One row per run; the run's number first, as the link that opens it (never cut off at the right edge). Few
    columns, so that they fit the page: the status says why a run escalated, "by" where a run not started in the app came
    from, "rubric" the round the run reached too. "by" names who started the run as they were named then
    (as the run page does): a later rename does not rewrite the list."""
    rows = [
        {
            "run": f"./review?run={r.id}",
            "status": status_words(r),
            "text": r.preview,
            "by": started_by(r),
            "created": when(r.created_at),
            "rubric": rubric_words(r),
            # A run waiting for a person reviewer shows no spend: it would tell them the other reviewer answered.
            "cost": None if r.id in blind else components.usd(r.cost_usd),
        }
        for r in items
    ]
    columns = ["run", "status", "text", "by", "created", "rubric", "cost"]
    return pd.DataFrame(rows, columns=columns)


COLUMNS = {
    "run": st.column_config.LinkColumn(
        "run", display_text=RUN_LINK, help="The run's number: click it to open the run (in a new tab)."
    ),
    "status": st.column_config.TextColumn("status", help=STATUS_COLUMN_HELP),
    "text": st.column_config.TextColumn("text", help="The beginning of the output as submitted."),
    "by": st.column_config.TextColumn(
        "by",
        help="Who started the run, and where from when not in the app: "
        "the command line, or a batch (its sample reviews).",
    ),
    "created": st.column_config.TextColumn("created", help="When the run was started (UTC)."),
    "rubric": st.column_config.TextColumn(
        "rubric", help="The rubric version the run is judged by, and the round it reached."
    ),
    "cost": st.column_config.TextColumn("cost", help="What the run's calls cost so far, in US dollars."),
}


def table(items: list[RunSummary]) -> None:
    """The list; each row's run number is the link that opens its run (one way to open a run: no row selection, no picker).
    Its columns fit the page (table_fit), long cells wrapping over up to ROW_LINES lines."""
    blind = app_desk.desk().runs.blind_run_ids()
    shown = frame(items, blind)
    fitted = table_fit.fit(
        shown,
        table_fit.PAGE_PX,
        wide=("text",),
        fixed=WIDTHS,
        labels=components.labels_of(COLUMNS),
        most_lines=ROW_LINES,
        breakable=("by",),
    )
    row = fitted.row_height or 35
    st.dataframe(
        shown,
        hide_index=True,
        width="stretch",
        row_height=fitted.row_height,
        height=min(len(items), ROWS_SHOWN) * row + 38,
        column_config=components.fitted_config(fitted, COLUMNS),
    )
    st.caption(
        f"{len(items)} run{'s' if len(items) != 1 else ''}"
        + (f" (the newest {LIMIT})" if len(items) == LIMIT else "")
        + ". Click a run's number to open it."
    )
    if blind & {r.id for r in items}:
        st.caption("No cost is shown for runs waiting for a person reviewer until the reviews are in.")
