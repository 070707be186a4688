"""Data and in-browser checks for the screenshot test (tests/e2e/test_screens.py).

The data is made the way production makes it, with the seeded history's pieces
(tests/support/metrics_history.py: `RunStore.create_run`, the real `Runner` with scripted reviewer and
fixer doubles, the actions for people's decisions), only on other days:

- `seed_one_day`: the seeded history's runs (shipped, fixed, escalated at the cap, shipped or rejected by
  a person, a fix waiting for approval, a person reviewer's slot waiting, queued) all created on ONE_DAY,
  plus open escalations for a reviewer error and a budget stop, so the queue shows several reasons;
- `seed_year`: a run every other week for the year before ONE_DAY;
- `seed_third_reviewer`: a stored rubric that marks a criterion for a third reviewer (slot D), and a run of today
  on it where D alone FAILs: NAUGHTY, its fix waiting for approval (three review cards and the decision bar).

The checks run in the page (`page.evaluate`) and return what they found, so the test can say where:
`OVERFLOW_JS` (the document or an element wider than the window, a box that scrolls sideways: a dataframe
whose columns do not fit), `CODES_JS` (stored codes in the text a person reads; `internal_codes` takes them
from santa_core/words.py's tables), `AXES_JS` (the Plotly charts as drawn: x-axis type, tick positions and
labels, data points; `axis_problems` judges them against the view's bucket). `LAYOUT_JS` tells when a page
has finished drawing.
"""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import UTC, datetime, timedelta

from santa_core import words
from santa_core.models import EscalationReason, Rubric, RubricDocument, RunState, RunStatus
from storage.runs import RunStore
from tests.support import metrics_history as mh

ONE_DAY = datetime(2026, 3, 2, tzinfo=UTC)
"""The day of the one-day history (a Monday, so a week bucket starts on it)."""
YEAR_STEP_DAYS = 14
"""One run every other week over the year before ONE_DAY."""

# --- the stored codes a person must never read ----------------------------------------------------------


def internal_codes() -> list[str]:
    """Every stored code of santa_core.words's tables that cannot pass for a word: those with an underscore
    or a dot (`round_cap`, `resolved_shipped`, `ship_as_is`, `run.created`, `max_rounds` …). Plain-word codes
    (`budget`, `reject`, `escalated`) read the same as their words and cannot be told apart."""
    tables = (
        words.STATUS,
        words.REASON,
        words.RESOLUTION,
        words.DECISION,
        words.REVIEW_STATUS,
        words.SCREEN_VERDICT,
        words.PATTERN_STATUS,
        words.PATTERN_KIND,
        words.AUDIT_ACTION,
        words.ENTITY,
        words.SETTING,
    )
    codes = (
        {str(code) for table in tables for code in table}
        | {str(s) for s in RunStatus}
        | {str(r) for r in EscalationReason}
    )
    return sorted(c for c in codes if "_" in c or "." in c)


def code_pattern(codes: list[str]) -> str:
    """A JavaScript regular expression (source) that finds any of `codes` as a whole token."""
    alternatives = "|".join(re.escape(c) for c in sorted(codes, key=len, reverse=True))
    return rf"(?<![\w.-])(?:{alternatives})(?![\w-]|\.\w)"


# --- data ---------------------------------------------------------------------------------------------


NAMES = {
    "facts": ("facts_checked", "Facts are checked"),
    "numbers": ("numbers_sourced", "Numbers have a source"),
    "tone": ("calm_tone", "Calm tone"),
    "short": ("short_enough", "Short enough"),
    "cites": ("cites_law", "Cites the law"),
}
"""The seeded rubrics' criteria as a desk writes them: a snake_case id and a name that reads differently, so a
screen that shows an id where the name belongs is caught."""
DRILLED = NAMES["facts"]
"""(id, name) of the criterion whose failure bar the test drills into."""


def named(rubric: Rubric) -> Rubric:
    """`rubric` with its criteria's ids and names as `NAMES` gives them (the steps read criteria in order)."""
    criteria = [c.model_copy(update=dict(zip(("id", "name"), NAMES[c.id], strict=True))) for c in rubric.criteria]
    return rubric.model_copy(update={"criteria": criteria})


def _on(day: datetime, case: mh.Case) -> mh.Case:
    """The case created on `day`, at its own time of day, its rubric's criteria `named`."""
    return replace(case, day=case.day.replace(year=day.year, month=day.month, day=day.day), rubric=named(case.rubric))


def seed_one_day(repo: RunStore, day: datetime = ONE_DAY) -> dict[str, int]:
    """The seeded history's runs, all created on `day` (at their own times of day), each in the state
    metrics_history.HISTORY describes; plus two open escalations (a reviewer error, a budget stop).
    The run ids by the history's keys."""
    cases = [_on(day, c) for c in mh.HISTORY]
    cases.append(_on(day, mh.Case("b_error_open", mh.on(1, 1, 9), mh.DESK1, ("E",), ("PPPP",))))
    ids = mh.seed(repo, cases)
    ids["budget"] = budget_stop(repo, day.replace(hour=15))
    return ids


def budget_stop(repo: RunStore, when: datetime) -> int:
    """A run stopped by its budget before any review: an open escalation, no model needed."""
    run_id = mh.create(repo, mh.Case("budget", when, named(mh.DESK1), (), ()))
    repo.transition(run_id, {RunStatus.QUEUED}, RunState(status=RunStatus.RUNNING), "worker")
    repo.transition(
        run_id,
        {RunStatus.RUNNING},
        RunState(status=RunStatus.ESCALATED, round=1, escalation_reason=EscalationReason.BUDGET, note="budget spent"),
        "worker",
    )
    return run_id


def seed_year(repo: RunStore, last: datetime = ONE_DAY, step_days: int = YEAR_STEP_DAYS) -> list[int]:
    """A run every `step_days` over the year before `last` (not on `last` itself), NICE at once or after
    an auto-approved fix, some with a generation cost: an over-time chart with one point per fortnight."""
    ids = []
    runner = mh.make_runner(repo)
    try:
        for n, back in enumerate(range(step_days, 366, step_days)):
            day = (last - timedelta(days=back)).replace(hour=10 + n % 8)
            b, c = (("PPPP",), ("PPPP",)) if n % 3 else (("FPPP", "PPPP"), ("FPPF", "PPPP"))
            case = mh.Case(
                f"year{n}",
                day,
                named(mh.DESK1 if n % 2 else mh.DESK2),
                b,
                c,
                reviewer_c=mh.SONNET if n % 4 == 1 else mh.HAIKU,
                by=("ann", "bob", "lee")[n % 3],
                gen=0.4 if n % 2 else None,
                auto=True,
            )
            run_id = mh.create(repo, case)
            runner.execute(run_id)
            ids.append(run_id)
    finally:
        runner.shutdown()
    return ids


HIGH_RISK_RUBRIC = "launch"
"""The stored rubric whose "Facts are checked" criterion a third reviewer judges too (issue 35)."""


def seed_third_reviewer(repo: RunStore) -> int:
    """Rubric `HIGH_RISK_RUBRIC` v1 (the desk's criteria as `NAMES` gives them, facts marked high-risk) saved as an
    author saves one, and a run on it created now: B and C PASS everything, D (its one criterion) FAILs, so the
    round is NAUGHTY and the fix waits for a person's approval. The run's id."""
    marked = [c.model_copy(update={"third_reviewer": c.id == DRILLED[0]}) for c in named(mh.DESK1).criteria]
    repo.rubrics.save(
        RubricDocument(name=HIGH_RISK_RUBRIC, domain="marketing", criteria=marked),
        "ann",
        "a third reviewer on the facts",
        None,
    )
    rubric = repo.rubrics.resolved(HIGH_RISK_RUBRIC, 1)
    spec = mh.spec_of("third")
    mh.SCRIPTS[spec] = {"B": ("PPPP",), "C": ("PPPP",), "D": ("F",)}  # D is asked its high-risk criterion only
    run_id = repo.create_run(
        spec=spec,
        output=mh.BRIEF,
        rubric=rubric,
        reviewer_b=mh.OPUS,
        reviewer_c=mh.HAIKU,
        reviewer_d=mh.SONNET,
        fixer="fixer",
        created_by="ann",
    )
    runner = mh.make_runner(repo)
    try:
        runner.execute(run_id)
    finally:
        runner.shutdown()
    return run_id


# --- checks that run in the page --------------------------------------------------------------------------

OVERFLOW_JS = r"""
(rootSelector) => {
  const vw = document.documentElement.clientWidth;
  const found = [];
  const se = document.scrollingElement;
  if (se.scrollWidth > se.clientWidth) {
    found.push(`the page scrolls sideways: ${se.scrollWidth} px of content in a ${se.clientWidth} px window`);
  }
  const root = document.querySelector(rootSelector) || document.body;
  const name = (el) => {
    const testid = el.closest('[data-testid]');
    const keyed = el.closest('[class*="st-key-"]');
    const key = keyed ? (keyed.className.match(/st-key-(\S+)/) || [])[1] : '';
    const grid = el.closest('[data-testid="stDataFrame"]');
    const columns = grid ? [...grid.querySelectorAll('th')].map(th => th.textContent.trim()) : [];
    const text = (el.innerText || el.textContent || '').trim().replace(/\s+/g, ' ').slice(0, 70);
    return [el.tagName.toLowerCase() + (el.className && typeof el.className === 'string'
              ? '.' + el.className.trim().split(/\s+/)[0] : ''),
            testid ? `in ${testid.getAttribute('data-testid')}` : '',
            key ? `key ${key}` : '',
            columns.length ? `columns ${columns.join(' | ')}` : '',
            text && !grid ? `"${text}"` : ''].filter(Boolean).join(' ');
  };
  const cutBy = (el) => {  // the nearest ancestor that clips el sideways, when it ends inside the window
    for (let a = el.parentElement; a && a !== document.documentElement; a = a.parentElement) {
      if (getComputedStyle(a).overflowX !== 'visible') return a.getBoundingClientRect().right <= vw + 1 ? a : null;
    }
    return null;
  };
  const reported = [];
  for (const el of root.querySelectorAll('*')) {
    if (reported.some(r => r.contains(el))) continue;  // its widest ancestor says it already
    if (!el.checkVisibility({visibilityProperty: true})) continue;
    const box = el.getBoundingClientRect();
    if (box.width <= 2 || box.height <= 2) continue;  // visually hidden helpers
    const style = getComputedStyle(el);
    if (['auto', 'scroll'].includes(style.overflowX) && el.scrollWidth > el.clientWidth + 2) {
      found.push(`${name(el)} scrolls sideways: ${el.scrollWidth} px of content in ${el.clientWidth} px `
                 + `(${el.scrollWidth - el.clientWidth} px out of view)`);
      reported.push(el);
      continue;
    }
    if ((box.right > vw + 1 || box.left < -1) && !cutBy(el)) {
      found.push(`${name(el)} spans ${Math.round(box.left)}–${Math.round(box.right)} px in a ${vw} px window`);
      reported.push(el);
    }
  }
  return found;
}
"""
"""Horizontal overflow: the document wider than the window; an element of the main content that reaches
past the window's edge; a box that scrolls sideways (a glide-grid dataframe is a canvas in a scroller: a
scroller whose content is wider than the grid means columns cut at the grid's right edge)."""

CODES_JS = r"""
(source) => {
  const pieces = [['page', document.body.innerText]];
  // Dataframe cells are drawn on a canvas; glide's accessibility table holds the drawn ones as text.
  document.querySelectorAll('[data-testid="stDataFrame"] th, [data-testid="stDataFrame"] td')
    .forEach(c => pieces.push(['table cell', c.textContent]));
  document.querySelectorAll('.js-plotly-plot .main-svg text').forEach(t => pieces.push(['chart', t.textContent]));
  const found = [];
  for (const [where, text] of pieces) {
    for (const m of text.matchAll(new RegExp(source, 'g'))) {
      const around = text.slice(Math.max(0, m.index - 50), m.index + m[0].length + 50).replace(/\s+/g, ' ');
      found.push(`${m[0]} (${where}: "…${around}…")`);
    }
  }
  return found;
}
"""
"""Stored codes in what a person reads: the page's visible text (tooltips are not in it until hovered),
the dataframes' cells and the charts' labels."""

TRUNCATED_JS = r"""
(rootSelector) => {
  const root = document.querySelector(rootSelector) || document.body;
  const found = [];
  const canvas = document.createElement('canvas').getContext('2d');
  const say = (el, text, why) => {
    const testid = el.closest('[data-testid]');
    found.push(`"${text.trim().replace(/\s+/g, ' ').slice(0, 60)}" ${why}`
               + (testid ? ` (in ${testid.getAttribute('data-testid')})` : ''));
  };
  for (const el of root.querySelectorAll('*')) {
    if (el.closest('[data-testid="stDataFrame"], .js-plotly-plot, [data-testid="stTooltipContent"]')) continue;
    if (!el.checkVisibility({visibilityProperty: true})) continue;
    const style = getComputedStyle(el);
    if (el.tagName === 'INPUT' && ['text', 'search', ''].includes(el.type)) {
      // An input draws its value (or placeholder) on one line: measured with its own font against its box.
      const text = el.value || el.placeholder || '';
      canvas.font = `${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
      const room = el.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
      if (text && canvas.measureText(text).width > room + 1) say(el, text, `cut: ${Math.round(canvas.measureText(text).width)} px of text in ${Math.round(room)} px`);
      continue;
    }
    const own = [...el.childNodes].filter(n => n.nodeType === Node.TEXT_NODE).map(n => n.textContent).join('');
    const text = el.innerText || '';
    if (!own.trim() && !(style.textOverflow === 'ellipsis' && text.trim())) continue;
    const clips = style.textOverflow === 'ellipsis' || ['hidden', 'clip'].includes(style.overflowX);
    if (clips && el.scrollWidth > el.clientWidth + 1) {
      say(el, text, `cut at the right: ${el.scrollWidth} px of text in ${el.clientWidth} px`);
    } else if (style.webkitLineClamp !== 'none' && style.webkitLineClamp && el.scrollHeight > el.clientHeight + 1) {
      say(el, text, `cut after ${style.webkitLineClamp} line(s)`);
    } else if (/\u2026$/.test(own.trim()) && el.closest('[data-testid="stMetric"]')) {
      say(el, text, 'shortened with "…"');
    }
  }
  return found;
}
"""
"""Text a person cannot read whole: an element that clips its text (an ellipsis, overflow hidden) narrower than
the text, a line clamp that hides lines, a metric shortened with "…", an input whose value or placeholder is
wider than its box (measured with the input's font). Grids and charts are left to the overflow check and the
fitting (their cells are drawn on a canvas)."""

WORDS_JS = r"""
(sources) => {
  const patterns = sources.map(([name, source]) => [name, new RegExp(source, 'g')]);
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const pieces = [];
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const el = n.parentElement;
    // Commands and code in `code` are meant to be typed; hidden text (tooltips not open) is not read.
    if (!el || el.closest('code, pre, script, style, [data-testid="stTooltipContent"], [data-testid^="stIcon"]')) continue;
    if (getComputedStyle(el).fontFamily.includes('Material')) continue;  // an icon's ligature ("hourglass_empty")
    if (!el.checkVisibility({visibilityProperty: true})) continue;
    pieces.push(['page', n.textContent]);
  }
  document.querySelectorAll('[data-testid="stDataFrame"] th, [data-testid="stDataFrame"] td')
    .forEach(c => pieces.push(['table cell', c.textContent]));
  document.querySelectorAll('.js-plotly-plot .main-svg text').forEach(t => pieces.push(['chart', t.textContent]));
  const found = [];
  for (const [where, text] of pieces) {
    for (const [name, re] of patterns) {
      for (const m of text.matchAll(re)) {
        const around = text.slice(Math.max(0, m.index - 40), m.index + m[0].length + 40).replace(/\s+/g, ' ');
        found.push(`${name} ${m[0]} (${where}: "…${around}…")`);
      }
    }
  }
  return found;
}
"""
"""Internal words in what a person reads, outside `code`: snake_case ids, injection-screen keys, raw validation
text (`INTERNAL_WORDS`)."""

INTERNAL_WORDS = (
    ("a snake_case id", r"(?<![\w./-])[a-z][a-z0-9]*(?:_[a-z0-9]+)+(?![\w/-])"),
    ("an injection-screen key", r"FAIL-[A-Z0-9]{4,}"),
    ("raw validation text", r"Input should be|validation errors? for|Field required"),
)
"""(what, JavaScript regular expression) of each kind of internal word `WORDS_JS` looks for."""

AXES_JS = r"""
() => [...document.querySelectorAll('.js-plotly-plot')].filter(p => p.checkVisibility()).map(p => {
  const layout = p._fullLayout || {};
  const x = layout.xaxis || {};
  const keyed = p.closest('[class*="st-key-"]');
  const ticks = [...p.querySelectorAll('.xtick text')].map(t => {
    const lines = [...t.querySelectorAll('tspan.line')].map(l => l.textContent);
    return lines.length ? lines.join(' ') : t.textContent;
  });
  const points = (p._fullData || []).filter(t => t.visible !== false)
    .reduce((n, t) => n + Math.max((t.x || []).length, (t.y || []).length, (t.values || []).length), 0);
  return {chart: keyed ? (keyed.className.match(/st-key-(\S+)/) || [])[1] : '(no key)', type: x.type || '',
          ticks, at: (x._vals || []).map(v => v.x), points};
})
"""
"""Every drawn Plotly chart: its key, the x-axis type, the tick labels as drawn (lines joined by a space),
the tick positions (ms since the epoch on a date axis) and how many data points its traces hold."""

LAYOUT_JS = r"""
() => JSON.stringify([
  ...[...document.querySelectorAll('[data-testid="stDataFrame"]')].filter(g => g.checkVisibility()).map(g => {
    const s = g.querySelector('.dvn-scroller');
    return s && g.querySelector('table th') ? [s.scrollWidth, s.clientWidth, s.scrollHeight] : null;
  }),
  ...[...document.querySelectorAll('[data-testid="stPlotlyChart"]')].map(c => {
    const p = c.querySelector('.js-plotly-plot');
    return p && p._fullLayout && p.querySelector('.main-svg') ? p.querySelectorAll('.xtick').length : null;
  }),
  document.querySelector('[data-testid="stSkeleton"], [data-testid="stSpinner"]') ? null : 0,
  document.body.scrollHeight, (document.querySelector('[data-testid="stMain"]') || document.body).scrollHeight])
"""
"""A fingerprint of the drawn layout: each visible dataframe's scroller and each chart's tick count, the page's
height; null while something is not drawn yet (a grid until its accessibility table holds its header and drawn
cells, a chart until Plotly laid it out, a placeholder for an element still loading). Streamlit's script is idle
before its grids have sized their columns and while Plotly's code is still loading."""

# --- reading what the checks found (pure) ---------------------------------------------------------------

DAY_MS = 86_400_000
BUCKET_DAYS = {"hour": 1 / 24, "day": 1, "week": 7, "month": 28}
"""The shortest bucket of each grain, in days (a month: February)."""
GRAIN = re.compile(r"Grouped by (hour|day|week|month)\b")
"""The Quality tab's caption names the buckets of the view's over-time charts."""
TIME_OF_DAY = re.compile(r"\d{1,2}:\d{2}|:\d{2}\b|\b[AP]M\b")


def grain_of(text: str) -> str | None:
    """The view's bucket as the Metrics page states it, or None."""
    match = GRAIN.search(text)
    return match.group(1) if match else None


def axis_problems(axes: list[dict], grain: str) -> list[str]:
    """What is wrong with the drawn charts (AXES_JS) of a view bucketed by `grain`: a chart with no data
    (empty axes), a date axis with no tick, a tick that shows a time of day, two ticks with the same label,
    a tick off midnight or closer to the next than one bucket."""
    found = []
    for axis in axes:
        chart = axis["chart"]
        if axis["points"] == 0:
            found.append(f"{chart}: a chart with no data point (empty axes)")
        if axis["type"] != "date":
            continue
        ticks, at = axis["ticks"], axis["at"]
        if not ticks:
            found.append(f"{chart}: a time axis with no tick label")
        if grain != "hour" and (timed := [t for t in ticks if TIME_OF_DAY.search(t)]):
            found.append(f"{chart}: time-axis ticks show a time of day {timed} (buckets of a {grain})")
        if len(set(ticks)) != len(ticks):
            found.append(f"{chart}: time-axis ticks repeat a label {ticks}: ticks finer than their labels")
        if off := [x for x in at if x % (DAY_MS * BUCKET_DAYS[grain] if grain == "hour" else DAY_MS)]:
            found.append(f"{chart}: time-axis ticks off the bucket's start at {off[:3]} ms (labels {ticks})")
        gaps = [(b - a) / DAY_MS for a, b in zip(at, at[1:], strict=False)]
        if close := [g for g in gaps if g < BUCKET_DAYS[grain] - 1e-9]:
            found.append(f"{chart}: ticks {min(close):g} days apart, finer than the {grain} bucket (labels {ticks})")
    return found
