"""The Metrics page's figures stated with confidence: the spot-check escape rate and the panels' claim (Escapes
tab), reviewer calibration against people (Reviewers tab), and the Settings panel picker's line per model.

Computed over the whole history (`desk.calibration.figures`), whatever the page's filters: the samples are small,
and a filter would only widen the intervals.
"""

from __future__ import annotations

import threading

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from desk import calibration
from santa_core import words
from santa_core.reports.calibration import MIN_LABELS, CalibrationRow, PanelClaim, weakest
from santa_core.reports.confidence import Grouping, Rate
from santa_core.reports.metrics import MetricsReport
from santa_core.reports.spot_figures import ConfidenceFigures
from ui import app_desk
from ui.metrics_tables import table
from ui.safe import escape_markdown

GROUP_WORDS: dict[Grouping, str] = {
    "rubric": "rubric",
    "family_pair": "family pair",
    "model_pair": "panel",
    "week": "week",
    "month": "month",
}
"""The groupings a person picks the escape rate by."""

SPOT_DEFINITION = (
    "**Spot-check escape rate** = spot-checks in which a person failed a criterion a reviewer passed ÷ submitted "
    "spot-checks, each shipped run and round once (the earliest submitted when two rules drew it). Spot-checks are "
    "shipped runs drawn at random (a rule's share, plus the weekly floor's top-up, random within its week) and "
    "judged blind. Weeks weigh by their spot-checks, so a week the floor topped up weighs more than its share of "
    "shipped work; drawn spot-checks nobody submitted are not in the rate (the count beside it shows them). "
    "Periods are by the day a spot-check was submitted (UTC). The interval is the exact binomial "
    "(Clopper–Pearson) 95 % interval: it holds the true rate at least 95 % of the time, whatever the sample size."
)
REPORTED_BIAS = (
    "They count only the defects someone noticed after shipping and reported: most defects are never "
    "reported, so this rate is biased low."
)
REPORTED_WORDS = f"**Reported escapes** are a separate series. {REPORTED_BIAS}"


_last = threading.local()
"""The figures of the report a page run is drawing, so the download and the open tab read them once: a page run
is one thread, and the next run makes a new report."""


def figures() -> ConfidenceFigures:
    """The figures over the desk's whole history."""
    return calibration.figures(app_desk.desk().runs)


def figures_for(report: MetricsReport) -> ConfidenceFigures:
    """The figures read alongside `report`, read once per report (it is held, so its id cannot be reused)."""
    held = getattr(_last, "held", None)
    if held is None or held[0] is not report:
        held = _last.held = (report, figures())
    return held[1]


def names() -> dict[str, str]:
    """Criterion id → name."""
    return calibration.criterion_names(app_desk.desk().runs)


def escapes(report: MetricsReport) -> None:
    """The spot-check escape rate with its interval, by group; reported escapes apart; the panels' claim."""
    doc = figures_for(report)
    overall = doc.spot_check_escape_rate.overall
    with st.container(horizontal=True, vertical_alignment="center"):
        st.markdown("**Escape rate from spot-checks**", width="content")
        with st.popover("Definition", icon=":material/info:", type="tertiary", key="metrics_def_spot"):
            st.markdown(f"{SPOT_DEFINITION}\n\n{REPORTED_WORDS}")
    if overall.n == 0:
        st.info(
            "No spot-check submitted yet, so the desk cannot state an escape rate with confidence. Spot-checks "
            "draw shipped runs at random for a blind person review; the figure appears with the first one.",
            icon=":material/hourglass_empty:",
        )
    else:
        st.markdown(
            escape_markdown(words.capital(words.escapes_sentence(overall.k, overall.n, overall.low, overall.high)))
        )
        by = st.segmented_control(
            "Spot-check escape rate by",
            list(GROUP_WORDS),
            format_func=GROUP_WORDS.get,
            default="rubric",
            key="metrics_spot_by",
        )
        rows = doc.spot_check_escape_rate.groups[by or "rubric"]
        table(pd.DataFrame([{GROUP_WORDS[by or "rubric"]: r.key, "escaped (95 % CI)": of(r.escapes)} for r in rows]))
    drawn = app_desk.desk().runs.spot_checks.spot_checks()
    if drawn:  # people choose which to judge: a rate over few of many drawn may not speak for the rest
        submitted = sum(c.status == "done" for c in drawn)
        st.caption(f"{submitted:,} submitted of {len(drawn):,} drawn spot-checks.")
    h = report.headline
    st.markdown(
        f"**Reported escapes (biased low):** {h.escapes} reported on {h.escaped_runs} of {h.shipped} "
        f"shipped runs in this view. {REPORTED_BIAS}"
    )
    panels(doc.spot_check_escape_rate.panels, names())


def panels(claims: list[PanelClaim], named: dict[str, str]) -> None:
    """Per panel and criterion: spot-check escapes against the product of the reviewers' miss rates."""
    st.markdown("**The method's claim: both reviewers must miss**")
    st.caption(
        "If a panel's reviewers miss independently, a defect gets past both with probability q_B × q_C "
        "(each q is the reviewer's miss rate against people). A text holds the defect at most always, so "
        "the spot-check escape rate on a criterion is at most that product; an escape rate above the "
        "product's range says the two miss together (correlated misses). The product's range multiplies "
        "the ends of each miss rate's 95 % interval."
    )
    if not claims:
        st.info("No spot-check yet: nothing to hold the product against.", icon=":material/hourglass_empty:")
        return
    table(pd.DataFrame([claim_row(c, named) for c in claims]), wide=("q_B × q_C (range)", "verdict"))


def of(r: Rate) -> str:
    """'2.1 % (0.4–6.1 %) of 140': a rate, its interval and n in one cell that wraps at its spaces."""
    if r.value is None or r.low is None or r.high is None:
        return "— of 0"
    return f"{words.percent(r.value)} ({words.percent(r.low).removesuffix(' %')}–{words.percent(r.high)}) of {r.n:,}"


def claim_row(c: PanelClaim, named: dict[str, str]) -> dict[str, object]:
    """One row of the panel table, as the page writes it."""
    misses = " × ".join(f"{m} {words.percent(r.value)} of {r.n:,}" for m, r in c.misses.items())
    if c.product is None:
        product = f"— (a reviewer has no label){': ' + misses if misses else ''}"
    else:
        product = (
            f"{words.percent(c.product)} ({words.percent(c.product_low).removesuffix(' %')}–"
            f"{words.percent(c.product_high)}): {misses}"
        )
    verdict = "they miss together: above the product" if c.correlated else "no sign of misses together"
    if c.third is not None:
        verdict += f"; with {c.third} as a third reviewer: {words.percent(c.with_third)}"
    return {
        "panel": " + ".join(c.panel),
        "criterion": named.get(c.criterion, c.criterion),
        "escaped (95 % CI)": of(c.escapes),
        "q_B × q_C (range)": product,
        "verdict": verdict,
    }


def reviewer_calibration(report: MetricsReport) -> None:
    """Recall and false-alarm rate per model and criterion against people, with intervals; recall plotted."""
    doc = figures_for(report).calibration
    st.markdown("**Reviewer calibration against people**")
    st.caption(
        "Every person judgement is a label: a person's review in a reviewer slot (once its round's gate "
        "is in), a spot-check, an escalation shipped as is (PASS on its flagged criteria) or rejected (FAIL "
        "on them). Recall = the model failed it too ÷ people failed it; false alarms = the model failed it "
        "÷ people passed it; 95 % exact intervals. Labels from escalations cover only criteria a reviewer "
        "flagged, and spot-checks only what both passed: read n and the sources with the rate."
    )
    if not doc.rows:
        st.info(
            "No person has judged a text a model also judged yet: no calibration to show.",
            icon=":material/hourglass_empty:",
        )
        return
    named = names()
    table(pd.DataFrame([calibration_row(r, named) for r in doc.rows]), wide=("criterion", "labels"))
    st.plotly_chart(recall_figure(doc.rows, named), width="stretch", key="metrics_chart_recall")


def calibration_row(r: CalibrationRow, named: dict[str, str]) -> dict[str, object]:
    """One row of the calibration table: recall of the labels people failed, false alarms of those they passed."""
    return {
        "model": r.model,
        "criterion": named.get(r.criterion, r.criterion),
        "recall (95 % CI)": of(r.recall),
        "false alarms (95 % CI)": of(r.false_alarm),
        "labels": ", ".join(f"{source.replace('_', ' ')} {n:,}" for source, n in sorted(r.sources.items())),
    }


def recall_figure(rows: list[CalibrationRow], named: dict[str, str]) -> go.Figure:
    """Recall per criterion, one series per model, with the interval as error bars."""
    fig = go.Figure()
    for model in dict.fromkeys(r.model for r in rows):
        mine = [r for r in rows if r.model == model and r.recall.n]
        fig.add_bar(
            name=model,
            x=[named.get(r.criterion, r.criterion) for r in mine],
            y=[r.recall.value for r in mine],
            error_y={
                "type": "data",
                "symmetric": False,
                "array": [(r.recall.high or 0) - (r.recall.value or 0) for r in mine],
                "arrayminus": [(r.recall.value or 0) - (r.recall.low or 0) for r in mine],
            },
            customdata=[r.recall.n for r in mine],
            hovertemplate="%{x}: %{y:.0%} (n = %{customdata})",
        )
    fig.update_layout(
        barmode="group",
        yaxis={"title": "recall", "tickformat": ".0%", "range": [0, 1.05]},
        title="Recall against people, with 95 % intervals",
        margin={"t": 40},
    )
    return fig


def weakest_lines(models: list[str]) -> list[str]:
    """One line per calibrated model with a criterion of at least MIN_LABELS person FAIL labels: the one it misses
    most (`models` first, in their order)."""
    rows = figures().calibration.rows
    named = names()
    lines = []
    for model in dict.fromkeys([*models, *(r.model for r in rows)]):  # the offered models first
        if (row := weakest(rows, model)) is not None:
            lines.append(
                words.misses_sentence(
                    escape_markdown(model),
                    escape_markdown(named.get(row.criterion, row.criterion)),
                    row.miss.k,
                    row.miss.n,
                )
            )
    return lines


def picker_lines(models: list[str]) -> None:
    """Under the Settings panel picker: each model's weakest criterion against people, the picked ones first."""
    lines = weakest_lines(models)
    if lines:
        st.caption(
            "Against people's judgements: " + "; ".join(lines) + f" (criteria with at least {MIN_LABELS} "
            "defects people found)."
        )
