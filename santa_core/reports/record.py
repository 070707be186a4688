"""The verification record of a run: what a regulated team hands over to show who decided what,
when, on which evidence. Pure: `storage.records` assembles it, this module renders it.

Every text the record holds comes with its SHA-256, and the record itself carries
`record_hash`, the SHA-256 of the canonical JSON of every other field but the time it was
generated (so two exports of an unchanged run carry the same hash), so anyone holding the
JSON alone can recompute each round's hash, each decision's before/after hash, each audit
event's hash and link, and the record's own hash. The HTML and PDF are readable renderings of
the same record; the JSON is the exact one.
"""

from __future__ import annotations

import html
import json
import unicodedata
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field, computed_field

from santa_core import words as w
from santa_core.models import CheckOutcome, CheckResult, Criterion, FixEdit, MergedIssue, RejectedEdit, ReviewIssue
from santa_core.reports.record_cost import ESCAPES, CutOffCall, cost_line
from santa_core.reports.record_panel import panel_line
from santa_core.reports.record_unreviewed import Judged, audit_detail, gate_lines, round_title
from santa_core.text import canonical_json, sha256_text

FORMAT = "santa.verification-record/1"
"""Names the shape of the record, so a reader knows which fields to expect."""


# --- the record -----------------------------------------------------------------------------


class RecordRubric(BaseModel):
    """The rubric the run was judged by: the resolved criteria reviewers saw."""

    name: str
    version: int
    domain: str
    description: str = ""
    criteria: list[Criterion]
    hash: str
    """sha256 of the canonical JSON of the resolved rubric (name, version, domain, description, criteria)."""


class RecordReview(BaseModel):
    """One reviewer's answer in one round."""

    slot: str
    reviewer: str
    status: str
    verdict: str
    """The verdict the gate counted (an error or a self-contradicting PASS is FAIL)."""
    stated_verdict: str | None = None
    """The verdict the reviewer wrote, when it gave one."""
    checks: list[CheckResult] = Field(default_factory=list)
    issues: list[ReviewIssue] = Field(default_factory=list)
    suggestions: list[str] = Field(default_factory=list)
    error: str | None = None
    raw_response: str = ""
    """The reviewer's answer exactly as received (a person's review: its JSON)."""
    raw_response_hash: str
    """sha256 of `raw_response` (the audit event `review.saved` carries it as its after-hash)."""
    cost_usd: float = 0.0


class RecordGate(BaseModel):
    """The AND gate's decision for a round and the issues it merged."""

    decision: str
    reasons: list[str] = Field(default_factory=list)
    issues: list[MergedIssue] = Field(default_factory=list)
    checks: list[CheckOutcome] | None = None
    reviewer_error: bool = False
    injection: bool = False
    disagreement: bool = False


class RecordProposal(BaseModel):
    """The fix agent's proposal for a round."""

    before_hash: str
    proposed_text: str
    proposed_hash: str
    edits: list[FixEdit] = Field(default_factory=list)
    rejected: list[RejectedEdit] = Field(default_factory=list)
    error: str | None = None
    diff: str
    """Unified diff from the round's output to the proposal."""


class RecordDecision(BaseModel):
    """A person's (or auto-approve's) decision, append-only."""

    round_no: int
    action: str
    actor: str
    reason: str
    created_at: datetime
    before_hash: str
    after_hash: str
    after_text: str


class RecordScreen(BaseModel):
    """One known-answer injection screen of the round's spec or output."""

    role: str
    model: str
    verdict: str
    """clean (answered the key), took_over (answered something else) or error (could not tell)."""
    text_hash: str
    secret: str = ""
    answer: str = ""
    error: str | None = None
    cached: bool = False
    """The verdict of an earlier screen of the same text by the same model; no call was made."""
    cost_usd: float = 0.0
    check: str = "key"
    """key (asked to repeat a key) or extraction (asked to quote the sentences that address an automated reader)."""
    quotes: list[str] = Field(default_factory=list)
    """The extraction check's quotes found in the text: the evidence."""


class RecordRound(Judged):
    """One round: the output reviewed, both reviews, the gate, the proposal and the decisions."""

    round_no: int
    started_at: datetime
    output_text: str
    output_hash: str
    reviews: list[RecordReview]
    gate: RecordGate | None = None
    proposal: RecordProposal | None = None
    decisions: list[RecordDecision] = Field(default_factory=list)
    screens: list[RecordScreen] = Field(default_factory=list)
    diff_to_next: str | None = None
    """Unified diff from this round's output to the next round's (None for the last round)."""

    @computed_field  # type: ignore[prop-decorator]  # mypy does not type a decorated property; pydantic's documented form
    @property
    def independent(self) -> bool:
        """False when one person filled both reviewer slots (only the local user of an install
        without sign-in may): the two reviews are then not independent."""
        who = [rv.reviewer for rv in self.reviews]
        return not (len(who) == 2 and who[0] == who[1] and who[0].startswith("person:"))


class RecordStateChange(BaseModel):
    """One committed status change."""

    from_status: str | None
    to_status: str
    actor: str
    note: str
    created_at: datetime


class RecordEscalation(BaseModel):
    """An escalation and how it was resolved."""

    reason: str
    status: str
    created_at: datetime
    owner: str | None = None
    due_at: datetime | None = None
    resolution: str | None = None
    justification: str | None = None
    resolved_by: str | None = None
    resolved_at: datetime | None = None


class RecordEscape(BaseModel):
    """A defect reported after the run shipped."""

    criterion: str
    description: str
    severity: str
    reported_by: str
    created_at: datetime


class RecordAuditEvent(BaseModel):
    """An audit event exactly as hashed (`created_at` is the hashed string: UTC, microseconds)."""

    seq: int
    created_at: str
    actor: str
    action: str
    entity_type: str
    entity_id: str
    run_id: int | None
    before_hash: str | None
    after_hash: str | None
    detail: dict[str, Any]
    prev_hash: str
    hash: str


class VerificationRecord(BaseModel):
    """Everything that shows how a run's output came to be shipped, rejected or left waiting."""

    format: str = FORMAT
    run_id: int
    status: str
    escalation_reason: str | None = None
    spec: str
    spec_hash: str
    rubric: RecordRubric
    reviewer_b: str
    reviewer_c: str
    reviewer_d: str | None = Field(default=None, exclude_if=lambda v: v is None)  # left out when none: hashes stay
    fix_agent: str
    panel_families: str = ""
    """The families of reviewers B and C ("Claude + GPT"; a person is their own)."""
    spans_two_families: bool | None = None
    """Whether B and C came from different model families (their misses closer to independent)."""
    person_b: str | None = None
    person_c: str | None = None
    auto_approve: bool = False
    budget_usd: float | None = None
    created_by: str
    created_at: datetime
    source: str
    total_cost_usd: float = 0.0
    cut_off_calls: list[CutOffCall] = Field(default_factory=list)
    rounds: list[RecordRound]
    final_output: str | None = None
    final_output_hash: str | None = None
    history: list[RecordStateChange]
    escalations: list[RecordEscalation]
    escapes: list[RecordEscape]
    people: dict[str, str] = Field(default_factory=dict)
    """Every actor id in the record, with the person's name and roles when the record was made
    (system code such as `worker` or `gate` is named as such)."""
    audit_events: list[RecordAuditEvent]
    """The run's events in chain order. Each links to the chain's previous event; where that
    event belongs to something else (another run, a role change) it is not in this record,
    and `python -m santa_core audit verify` checks that link against the database."""
    generated_at: datetime
    record_hash: str = ""
    """sha256 of the canonical JSON of every other field but `generated_at` (see `record_hash_of`)."""


UNHASHED = frozenset({"record_hash", "generated_at"})
"""Fields the record hash leaves out: itself, and when the record was generated (so exports of an
unchanged run, in any format, at any time, carry the same hash)."""


def record_hash_of(data: dict[str, Any]) -> str:
    """The record hash of a record as JSON data: every field but `UNHASHED`."""
    return sha256_text(canonical_json({k: v for k, v in data.items() if k not in UNHASHED}))


def sealed(record: VerificationRecord) -> VerificationRecord:
    """The record with its `record_hash` set."""
    return record.model_copy(update={"record_hash": record_hash_of(record.model_dump(mode="json"))})


# --- JSON ------------------------------------------------------------------------------------


def to_json(record: VerificationRecord) -> str:
    """The record as JSON: sorted keys, two-space indent, UTF-8 text; the same record gives the same bytes."""
    return json.dumps(record.model_dump(mode="json"), sort_keys=True, indent=2, ensure_ascii=False) + "\n"


# --- HTML ------------------------------------------------------------------------------------

_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;max-width:72rem;margin:2rem auto;padding:0 1rem;
color:#1d1d1f;line-height:1.45}
h1{font-size:1.6rem}h2{font-size:1.25rem;border-bottom:1px solid #ccc;padding-bottom:.2rem;margin-top:2rem}
h3{font-size:1.05rem}table{border-collapse:collapse;width:100%;max-width:100%;margin:.5rem 0;font-size:.9rem}
th,td{border:1px solid #ccc;padding:.3rem .45rem;text-align:left;vertical-align:top;overflow-wrap:break-word}
th{background:#f3f3f3}td.wrap{overflow-wrap:anywhere}@media (max-width:76rem){td{overflow-wrap:anywhere}}
pre{white-space:pre-wrap;word-break:break-word;background:#f7f7f7;border:1px solid #ddd;padding:.6rem;font-size:.85rem}
code,.hash{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.8rem;word-break:break-all}
.nice{color:#126b24;font-weight:bold}.naughty{color:#a40e0e;font-weight:bold}.muted{color:#666}
.reviews{display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1fr);gap:1rem}.box{border:1px solid #ddd;padding:.6rem}
"""


def _e(value: object) -> str:
    """Escaped text: every user or model text goes through here (quotes too)."""
    return html.escape("" if value is None else str(value), quote=True)


def _time(value: datetime | None) -> str:
    return "" if value is None else value.isoformat(sep=" ", timespec="seconds")  # the space: a place to wrap


def _table(headers: list[str], rows: Sequence[Sequence[object]]) -> str:
    if not rows:
        return '<p class="muted">None.</p>'
    head = "".join(f"<th>{_e(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(_td(c) for c in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _td(value: object) -> str:
    """A cell: a code's words carry the code as tooltip; a token over 40 characters (a hash) may break anywhere."""
    wrap = ' class="wrap"' if max(map(len, str(value).split()), default=0) > 40 else ""
    return (
        f'<td{wrap} title="{_e(value.code)}">{_e(value)}</td>'
        if isinstance(value, w.Worded)
        else f"<td{wrap}>{_e(value)}</td>"
    )


def _pre(text: str) -> str:
    return f"<pre>{_e(text)}</pre>"


NOT_INDEPENDENT = (
    "One person filled both reviewer slots of this round: the two reviews are not independent "
    "(allowed only for the local user of an install without sign-in)."
)


def _people_rows(r: VerificationRecord) -> list[list[str]]:
    return [[pid, who] for pid, who in sorted(r.people.items())]


def _html_summary(r: VerificationRecord) -> str:
    rows: list[tuple[str, object]] = [
        ("Status", w.status_line(r.status, r.escalation_reason)),
        ("Rubric", f"{r.rubric.name} v{r.rubric.version} (sha256 {r.rubric.hash})"),
        ("Reviewer B", r.reviewer_b + (f" — assigned to {r.person_b}" if r.person_b else "")),
        ("Reviewer C", r.reviewer_c + (f" — assigned to {r.person_c}" if r.person_c else "")),
        ("Panel", panel_line(r)),
        ("Fix agent", r.fix_agent),
        ("Auto-approve", "yes" if r.auto_approve else "no"),
        ("Created", f"{_time(r.created_at)} by {r.created_by} ({r.source})"),
        ("Rounds", len(r.rounds)),
        ("Cost", cost_line(r.total_cost_usd, r.cut_off_calls)),
        ("Generated", _time(r.generated_at)),
        ("Record hash", r.record_hash),
    ]
    body = "".join(f"<tr><th>{_e(k)}</th>{_td(v)}</tr>" for k, v in rows)
    return f"<table>{body}</table>"


def _html_review(rv: RecordReview) -> str:
    verdict = "nice" if rv.verdict == "PASS" else "naughty"
    parts = [
        f"<h4>Reviewer {_e(rv.slot)} · {_e(rv.reviewer)}</h4>",
        f'<p><span class="{verdict}">{_e(rv.verdict)}</span> <span class="muted">status {_e(w.review_status(rv.status))}'
        + (f", stated {_e(rv.stated_verdict)}" if rv.stated_verdict and rv.stated_verdict != rv.verdict else "")
        + "</span></p>",
    ]
    if rv.error:
        parts.append(f"<p>Error: {_e(rv.error)}</p>")
    parts.append(_table(["criterion", "result", "detail"], [[c.criterion, c.result, c.detail] for c in rv.checks]))
    if rv.issues:
        parts.append(
            "<p>Critical issues:</p>"
            + _table(
                ["criterion", "description", "evidence"], [[i.criterion, i.description, i.evidence] for i in rv.issues]
            )
        )
    if rv.suggestions:
        parts.append("<p>Suggestions:</p><ul>" + "".join(f"<li>{_e(s)}</li>" for s in rv.suggestions) + "</ul>")
    parts.append(f'<p class="muted">raw answer sha256 <span class="hash">{_e(rv.raw_response_hash)}</span></p>')
    return '<div class="box">' + "".join(parts) + "</div>"


def _html_round(rnd: RecordRound) -> str:
    gate = rnd.gate
    parts = [
        f'<section id="round-{rnd.round_no}"><h2>{_e(round_title(rnd, "—"))}</h2>',
        f'<p class="muted">started {_e(_time(rnd.started_at))} · output sha256 '
        f'<span class="hash">{_e(rnd.output_hash)}</span></p>',
        "<h3>Output reviewed</h3>",
        _pre(rnd.output_text),
        "<h3>Reviews</h3>",
        '<div class="reviews">' + "".join(_html_review(rv) for rv in rnd.reviews) + "</div>",
    ]
    if not rnd.reviews:
        parts.append(
            '<p class="muted">No reviews (a check, the injection screen or the budget stopped the round first).</p>'
        )
    if rnd.screens:
        parts += [
            "<h3>Injection screen</h3>",
            _table(
                ["text", "check", "model", "verdict", "key asked", "answer", "found in the text", "cost"],
                [
                    [
                        sc.role,
                        w.screen_check(sc.check),
                        sc.model,
                        w.Worded(
                            w.screen_verdict(sc.verdict, sc.check)
                            + (" (earlier screen of the same text)" if sc.cached else ""),
                            sc.verdict,
                        ),
                        sc.secret,
                        sc.error or sc.answer,
                        "\n".join(sc.quotes),
                        w.usd(sc.cost_usd),
                    ]
                    for sc in rnd.screens
                ],
            ),
        ]
    if not rnd.independent:
        parts.append(f"<p><strong>{_e(NOT_INDEPENDENT)}</strong></p>")
    if gate:
        heading, reasons = gate_lines(gate.decision, gate.reasons, rnd.unreviewed)
        parts += [f"<h3>{_e(heading)}</h3>", *(f"<p>{_e(reason)}</p>" for reason in reasons)]
        parts.append(
            _table(
                ["criterion", "flagged by", "description", "evidence"],
                [[i.criterion, i.flagged_by, i.description, i.evidence] for i in gate.issues],
            )
        )
    if rnd.proposal:
        p = rnd.proposal
        parts += [
            "<h3>Fix proposal</h3>",
            f'<p class="muted">proposed sha256 <span class="hash">{_e(p.proposed_hash)}</span></p>',
            _pre(p.diff or "(no change)"),
        ]
        if p.error:
            parts.append(f"<p>Fix agent error: {_e(p.error)}</p>")
    parts += [
        "<h3>Decisions</h3>",
        _table(
            ["time", "actor", "action", "reason", "before sha256", "after sha256"],
            [
                [_time(d.created_at), d.actor, w.worded(w.decision, d.action), d.reason, d.before_hash, d.after_hash]
                for d in rnd.decisions
            ],
        ),
    ]
    if rnd.diff_to_next is not None:
        parts += [f"<h3>Change to round {rnd.round_no + 1}</h3>", _pre(rnd.diff_to_next or "(no change)")]
    return "".join(parts) + "</section>"


def _html_rest(r: VerificationRecord) -> str:
    parts = [
        "<h2>Escalations</h2>",
        _table(
            ["reason", "status", "opened", "owner", "due", "resolution", "justification", "resolved by", "resolved at"],
            [
                [
                    w.worded(w.reason, e.reason),
                    e.status,
                    _time(e.created_at),
                    e.owner or "",
                    _time(e.due_at),
                    w.worded(w.resolution, e.resolution or ""),
                    e.justification or "",
                    e.resolved_by or "",
                    _time(e.resolved_at),
                ]
                for e in r.escalations
            ],
        ),
    ]
    parts += [
        f"<h2>{ESCAPES}</h2>",
        _table(
            ["reported", "by", "criterion", "severity", "description"],
            [[_time(e.created_at), e.reported_by, e.criterion, e.severity, e.description] for e in r.escapes],
        ),
    ]
    parts += [
        "<h2>State history</h2>",
        _table(
            ["time", "from", "to", "actor", "note"],
            [
                [
                    _time(h.created_at),
                    w.worded(w.status, h.from_status) if h.from_status else "—",
                    w.worded(w.status, h.to_status),
                    h.actor,
                    w.note(h.note),
                ]
                for h in r.history
            ],
        ),
    ]
    parts += [
        "<h2>Audit events</h2>",
        '<p class="muted">Each hash covers seq, time, actor, action, entity, run, before/after hashes, detail '
        "and the previous event's hash.</p>",
        _table(
            ["seq", "time", "actor", "action", "entity", "detail", "prev hash", "hash"],
            [
                [
                    a.seq,
                    a.created_at,
                    a.actor,
                    w.worded(w.audit_action, a.action),
                    w.Worded(f"{w.entity(a.entity_type)} {a.entity_id}", a.entity_type),
                    w.Worded(audit_detail(a.action, a.detail, r.rounds), canonical_json(a.detail)),
                    a.prev_hash,
                    a.hash,
                ]
                for a in r.audit_events
            ],
        ),
    ]
    return "".join(parts)


def to_html(record: VerificationRecord) -> str:
    """A readable, self-contained HTML document: inline CSS, no scripts, no external resources."""
    r = record
    final = (
        (
            "<h2>Final output</h2>"
            + f'<p class="muted">sha256 <span class="hash">{_e(r.final_output_hash)}</span></p>'
            + _pre(r.final_output)
        )
        if r.final_output is not None
        else ""
    )
    body = "".join(
        [
            f"<h1>Verification record — run #{r.run_id}</h1>",
            _html_summary(r),
            "<h2>People</h2>",
            _table(["id", "who"], _people_rows(r)),
            "<h2>Spec</h2>",
            f'<p class="muted">sha256 <span class="hash">{_e(r.spec_hash)}</span></p>',
            _pre(r.spec),
            "<h2>Rubric</h2>",
            _table(
                ["id", "name", "category", "severity", "pass condition", "fail signal"],
                [[c.id, c.name, c.category, c.severity, c.pass_condition, c.fail_signal] for c in r.rubric.criteria],
            ),
            *(_html_round(rnd) for rnd in r.rounds),
            final,
            _html_rest(r),
            '<p class="muted">The JSON export of this record holds the exact texts; its <code>record_hash</code> is the '
            "sha256 of the canonical JSON (sorted keys, no spaces) of every other field.</p>",
        ]
    )
    # The CSP forbids scripts and every external load even if a viewer ignores the escaping.
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">"
        f"<title>Verification record — run #{r.run_id}</title><style>{_CSS}</style></head>"
        f"<body>{body}</body></html>\n"
    )


# --- PDF -------------------------------------------------------------------------------------

PDF_ENCODING = "windows-1252"
"""fpdf2's core fonts are declared WinAnsiEncoding, i.e. cp1252: Latin-1 plus €, “ ”, — and a few more."""


def pdf_safe(text: str) -> tuple[str, int]:
    """Text the PDF's core fonts can show, and how many characters were written as escapes.

    A character outside cp1252 (or an invisible control character) becomes `\\uXXXX` (or
    `\\UXXXXXXXX`) instead of vanishing, so the reader sees something is there and which one;
    the JSON export holds the exact text.
    """
    out: list[str] = []
    replaced = 0
    for ch in text:
        if ch == "\n":
            out.append(ch)
        elif ch == "\t":
            out.append("    ")
        elif unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Co", "Cn") or not _encodable(ch):
            out.append(f"\\u{ord(ch):04x}" if ord(ch) <= 0xFFFF else f"\\U{ord(ch):08x}")
            replaced += 1
        else:
            out.append(ch)
    return "".join(out), replaced


def _encodable(ch: str) -> bool:
    try:
        ch.encode(PDF_ENCODING)
    except UnicodeEncodeError:
        return False
    return True


Block = tuple[str, str]
"""One piece of the PDF: (style, text); style is one of h1, h2, h3, p, small, mono."""

_STYLE: dict[str, tuple[str, str, float, float]] = {
    "h1": ("Helvetica", "B", 16, 8),
    "h2": ("Helvetica", "B", 13, 7),
    "h3": ("Helvetica", "B", 11, 6),
    "p": ("Helvetica", "", 10, 5),
    "small": ("Helvetica", "", 8, 4),
    "mono": ("Courier", "", 8.5, 4),
}


def _pdf_round(rnd: RecordRound) -> list[Block]:
    out: list[Block] = [
        ("h2", round_title(rnd, "-")),
        ("small", f"started {_time(rnd.started_at)} - output sha256 {rnd.output_hash}"),
        ("h3", "Output reviewed"),
        ("mono", rnd.output_text),
    ]
    for rv in rnd.reviews:
        out.append(("h3", f"Reviewer {rv.slot}: {rv.reviewer} - {rv.verdict} ({w.review_status(rv.status)})"))
        if rv.error:
            out.append(("p", f"Error: {rv.error}"))
        out += [("p", f"[{c.result}] {c.criterion}: {c.detail}") for c in rv.checks]
        out += [
            (
                "p",
                f"Critical issue - {i.criterion}: {i.description}"
                + (f" (evidence: {i.evidence})" if i.evidence else ""),
            )
            for i in rv.issues
        ]
        out += [("p", f"Suggestion: {s}") for s in rv.suggestions]
        out.append(("small", f"raw answer sha256 {rv.raw_response_hash}"))
    if not rnd.independent:
        out.append(("p", NOT_INDEPENDENT))
    if rnd.screens:
        out.append(("h3", "Injection screen"))
        out += [
            (
                "p",
                f"{sc.role} - {w.screen_check(sc.check)} - {sc.model} - {w.screen_verdict(sc.verdict, sc.check)}"
                + (" (earlier screen)" if sc.cached else "")
                + (f" - key {sc.secret}" if sc.check == "key" else "")
                + f" - answer {sc.error or sc.answer!r}"
                + "".join(f" - found {q!r}" for q in sc.quotes)
                + f" - cost {w.usd(sc.cost_usd)}",
            )
            for sc in rnd.screens
        ]
    if rnd.gate:
        heading, reasons = gate_lines(rnd.gate.decision, rnd.gate.reasons, rnd.unreviewed)
        out += [("h3", heading), *(("p", reason) for reason in reasons)]
        out += [("p", f"{i.criterion} (flagged by {i.flagged_by}): {i.description}") for i in rnd.gate.issues]
    if rnd.proposal:
        out += [
            ("h3", "Fix proposal"),
            ("small", f"proposed sha256 {rnd.proposal.proposed_hash}"),
            ("mono", rnd.proposal.diff or "(no change)"),
        ]
    if rnd.decisions:
        out.append(("h3", "Decisions"))
    for d in rnd.decisions:
        out += [
            (
                "p",
                f"{_time(d.created_at)} - {d.actor} - {w.decision(d.action)}" + (f": {d.reason}" if d.reason else ""),
            ),
            ("small", f"before sha256 {d.before_hash}\nafter sha256 {d.after_hash}"),
        ]
    if rnd.diff_to_next is not None:
        out += [("h3", f"Change to round {rnd.round_no + 1}"), ("mono", rnd.diff_to_next or "(no change)")]
    return out


def _pdf_blocks(r: VerificationRecord) -> list[Block]:
    """The record as a flat list of styled paragraphs, in reading order."""
    out: list[Block] = [
        ("p", f"Status: {w.status_line(r.status, r.escalation_reason)}"),
        ("p", f"Rubric: {r.rubric.name} v{r.rubric.version} (sha256 {r.rubric.hash})"),
        ("p", f"Reviewer B: {r.reviewer_b} - Reviewer C: {r.reviewer_c} - Fix agent: {r.fix_agent}"),
        ("p", f"Panel: {panel_line(r)}"),
        (
            "p",
            f"Created {_time(r.created_at)} by {r.created_by} ({r.source}) - cost {cost_line(r.total_cost_usd, r.cut_off_calls)}",
        ),
        ("p", f"Generated {_time(r.generated_at)}"),
        ("small", f"Record sha256 {r.record_hash}"),
        ("h2", "People"),
        *(("p", f"{pid}: {who}") for pid, who in _people_rows(r)),
        ("h2", "Spec"),
        ("small", f"sha256 {r.spec_hash}"),
        ("mono", r.spec),
        ("h2", "Rubric criteria"),
    ]
    out += [
        ("p", f"{c.id} ({c.category}, {c.severity}): pass if {c.pass_condition}; fails on {c.fail_signal}")
        for c in r.rubric.criteria
    ]
    for rnd in r.rounds:
        out += _pdf_round(rnd)
    if r.final_output is not None:
        out += [("h2", "Final output"), ("small", f"sha256 {r.final_output_hash}"), ("mono", r.final_output)]
    out.append(("h2", "Escalations"))
    out += [
        (
            "p",
            f"{w.reason(e.reason)} ({e.status}) opened {_time(e.created_at)}; owner {e.owner or '-'}; due {_time(e.due_at) or '-'}"
            + (
                f"; resolved ({w.resolution(e.resolution)}) by {e.resolved_by} at {_time(e.resolved_at)}: {e.justification or ''}"
                if e.resolution
                else ""
            ),
        )
        for e in r.escalations
    ] or [("p", "None.")]
    out.append(("h2", ESCAPES))
    out += [
        ("p", f"{_time(e.created_at)} {e.reported_by} - {e.criterion} ({e.severity}): {e.description}")
        for e in r.escapes
    ] or [("p", "None.")]
    out.append(("h2", "State history"))
    out += [
        (
            "p",
            f"{_time(h.created_at)} {w.status(h.from_status) if h.from_status else '-'} -> {w.status(h.to_status)} "
            f"by {h.actor}" + (f": {w.note(h.note)}" if h.note else ""),
        )
        for h in r.history
    ]
    out.append(("h2", "Audit events"))
    out += [
        (
            "small",
            f"#{a.seq} {a.created_at} {a.actor} {w.audit_action(a.action)} ({a.action}) {a.entity_type} {a.entity_id} "
            f"{canonical_json(a.detail)}\nprev {a.prev_hash}\nhash {a.hash}",
        )
        for a in r.audit_events
    ]
    return out


def _pdf_note(replaced: int) -> str:
    """What the first page says about characters the PDF cannot show."""
    base = (
        "This PDF is a readable copy. The JSON export of the record holds the exact texts; every "
        "hash here is of those exact texts."
    )
    if not replaced:
        return base
    return (
        f"{base} {replaced} character(s) outside the PDF fonts' Windows-1252 set are shown as \\uXXXX "
        "escapes (their Unicode code point in hex)."
    )


def to_pdf(record: VerificationRecord) -> bytes:
    """A readable PDF of the record (fpdf2 core fonts; characters they lack shown as escapes, counted on page 1)."""
    from fpdf import FPDF

    blocks: list[Block] = []
    replaced = 0
    for style, text in _pdf_blocks(record):
        safe, n = pdf_safe(text)
        blocks.append((style, safe))
        replaced += n
    footer = pdf_safe(f"Run #{record.run_id} verification record - sha256 {record.record_hash}")[0]

    class _Doc(FPDF):
        def footer(self) -> None:
            self.set_y(-12)
            self.set_font("Helvetica", "", 7)
            self.cell(0, 5, f"{footer} - page {self.page_no()}/{{nb}}", align="C")

    pdf = _Doc(format="A4")
    pdf.core_fonts_encoding = PDF_ENCODING
    pdf.set_title(f"Verification record - run #{record.run_id}")
    pdf.set_creator("Santa review desk")
    pdf.set_auto_page_break(auto=True, margin=15)
    pdf.add_page()
    for style, text in [("h1", f"Verification record - run #{record.run_id}"), ("small", _pdf_note(replaced)), *blocks]:
        family, weight, size, height = _STYLE[style]
        pdf.set_font(family, weight, size)
        if style in ("h2", "h3"):
            pdf.ln(2)
        pdf.multi_cell(0, height, text or " ", new_x="LMARGIN", new_y="NEXT")
    return bytes(pdf.output())
