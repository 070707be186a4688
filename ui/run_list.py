"""The Runs page's list: search, status filter and "hide batch samples", kept in the URL; one line per
run with the beginning of its text; a click on a line (or its open link) opens the run.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
import streamlit as st

from santa_core import words
from santa_core.models import RunStatus
from storage.views import RunSummary
from ui import app_desk, components, identity

ALL = "all"
LIMIT = 500
"""Runs listed at most (newest first); a search reaches every run, not only these."""
SEARCH, STATUS, HIDE, TABLE = "runs_q", "runs_status", "runs_hide_samples", "runs_table"
"""The widgets' keys."""
URL = {SEARCH: "q", STATUS: "status", HIDE: "samples"}
"""Which query parameter keeps which filter (`?q=acme&status=escalated&samples=shown`)."""
SHOWN = "shown"
"""`samples=shown`: batch sample reviews are listed too (hidden is the default, so it needs no parameter)."""
STATUS_HELP = "Where the run stands. The stored codes (JSON record, command line):  \n" + words.legend(words.STATUS)
REASON_HELP = "Why the run escalated. The stored codes:  \n" + words.legend(words.REASON)


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
    wanted = {URL[SEARCH]: f.search, URL[STATUS]: "" if f.status == ALL else f.status,
              URL[HIDE]: "" if f.hide_samples else SHOWN}
    for name, value in wanted.items():
        if value and st.query_params.get(name) != value:
            st.query_params[name] = value
        elif not value and name in st.query_params:
            del st.query_params[name]


def filters() -> Filters:
    """The search box, the status filter and the batch-sample switch, seeded from and kept in the URL."""
    _seed_from_url()
    left, mid, right = st.columns([3, 2, 2], vertical_alignment="bottom")
    search = left.text_input("Search", key=SEARCH, placeholder="run number, words of the text or spec, rubric, who",
                             help="Matches the run number (12 or #12), the output as submitted, the spec, the "
                                  "rubric's name and who started the run (name or e-mail), in any case.")
    status = mid.selectbox("Status", [ALL, *(s.value for s in RunStatus)], key=STATUS,
                           format_func=lambda s: "all" if s == ALL else components.status_label(s), help=STATUS_HELP)
    hide = right.toggle("Hide batch samples", key=HIDE,
                        help="A batch reviews a sample of its items, each as a run of its own; they are listed on "
                             "the Batch page. Off: they are listed here too.")
    chosen = Filters(search=search.strip(), status=str(status), hide_samples=bool(hide))
    _write_url(chosen)
    return chosen


def runs(f: Filters) -> list[RunSummary]:
    """The runs the filters select, newest first ("started by" also matches people's names)."""
    repo = app_desk.desk().runs
    q = f.search.lower()
    people = [p.id for p in repo.people.all() if q and q in p.label.lower()]
    return repo.list_runs(limit=LIMIT, status=None if f.status == ALL else f.status, search=f.search,
                          batch_samples=not f.hide_samples, people=people)


def nothing_listed(f: Filters) -> None:
    """Why the list is empty: no run at all yet, or none that the filters let through."""
    if not app_desk.desk().runs.list_runs(limit=1):
        st.info("No runs yet. Start one on the Review page or with `python -m santa_core review`.")
        return
    st.info("No run matches these filters." + (" Batch sample reviews are hidden: turn off *Hide batch samples* "
                                               "to list them too." if f.hide_samples else ""))


def frame(items: list[RunSummary], blind: set[int]) -> pd.DataFrame:
    """One row per run; the open link first so it is never cut off at the right edge. "by" names who started
    the run as they were named then (as the run page does): a later rename does not rewrite the list."""
    rows = [{
        "open": f"./review?run={r.id}", "run": r.id, "status": components.status_label(r.status),
        "text": r.preview, "by": identity.display_at(r.created_by, r.created_at), "created": r.created_at,
        "escalation": words.reason(r.escalation_reason), "rubric": f"{r.rubric_name} v{r.rubric_version}",
        # A run waiting for a person reviewer shows no spend: it would tell them the other reviewer answered.
        "rounds": r.rounds, "cost (USD)": None if r.id in blind else round(r.cost_usd, 6),
        "source": "batch sample" if r.batch_id else r.source,
    } for r in items]
    columns = ["open", "run", "status", "text", "by", "created", "escalation", "rubric", "rounds", "cost (USD)",
               "source"]
    return pd.DataFrame(rows, columns=columns)


def table(items: list[RunSummary]) -> None:
    """The list; selecting a row (its box) opens that run (the select box below does the same from the keyboard)."""
    blind = app_desk.desk().runs.blind_run_ids()
    event = st.dataframe(frame(items, blind), hide_index=True, width="stretch", key=TABLE, on_select="rerun",
                         selection_mode="single-row", column_config={
                             "open": st.column_config.LinkColumn("open", display_text="open run", width="small",
                                                                 help="Opens the run in a new tab."),
                             "run": st.column_config.NumberColumn("run", format="#%d", width="small"),
                             "status": st.column_config.TextColumn("status", help=STATUS_HELP),
                             "text": st.column_config.TextColumn("text", width="large",
                                                                 help="The beginning of the output as submitted."),
                             "escalation": st.column_config.TextColumn("escalation", help=REASON_HELP)})
    if event.selection.rows and event.selection.rows[0] < len(items):
        st.switch_page("pages/review.py", query_params={"run": str(items[event.selection.rows[0]].id)})
    st.caption(f"{len(items)} run{'s' if len(items) != 1 else ''}"
               + (f" (the newest {LIMIT})" if len(items) == LIMIT else "") + ". Tick the box at the start of a row to open "
               "its run.")
    if blind & {r.id for r in items}:
        st.caption("No cost is shown for runs waiting for a person reviewer until the reviews are in.")
    choice = st.selectbox("Open run", [r.id for r in items], format_func=lambda i: f"#{i}", key="runs_open_id")
    if st.button("Open", key="runs_open"):
        st.switch_page("pages/review.py", query_params={"run": str(choice)})
