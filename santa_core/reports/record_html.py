"""The verification record as a readable, self-contained HTML document (`to_html`): inline CSS, no scripts, no
external resources, every text escaped. The JSON (`santa_core.reports.record.to_json`) is the exact record."""

from __future__ import annotations

import html
from collections.abc import Sequence

from santa_core import words as w
from santa_core.reports.record import NOT_INDEPENDENT, RecordReview, RecordRound, VerificationRecord, people_rows, when
from santa_core.reports.record_cost import ESCAPES, cost_line
from santa_core.reports.record_panel import panel_line
from santa_core.reports.record_unreviewed import audit_detail, gate_lines, round_title
from santa_core.text import canonical_json

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


def _html_summary(r: VerificationRecord) -> str:
    rows: list[tuple[str, object]] = [
        ("Status", w.status_line(r.status, r.escalation_reason)),
        ("Rubric", f"{r.rubric.name} v{r.rubric.version} (sha256 {r.rubric.hash})"),
        ("Reviewer B", r.reviewer_b + (f" — assigned to {r.person_b}" if r.person_b else "")),
        ("Reviewer C", r.reviewer_c + (f" — assigned to {r.person_c}" if r.person_c else "")),
        ("Panel", panel_line(r)),
        ("Fix agent", r.fix_agent),
        ("Auto-approve", "yes" if r.auto_approve else "no"),
        ("Created", f"{when(r.created_at)} by {r.created_by} ({r.source})"),
        ("Rounds", len(r.rounds)),
        ("Cost", cost_line(r.total_cost_usd, r.cut_off_calls)),
        ("Generated", when(r.generated_at)),
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
        f'<p class="muted">started {_e(when(rnd.started_at))} · output sha256 '
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
                [when(d.created_at), d.actor, w.worded(w.decision, d.action), d.reason, d.before_hash, d.after_hash]
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
                    when(e.created_at),
                    e.owner or "",
                    when(e.due_at),
                    w.worded(w.resolution, e.resolution or ""),
                    e.justification or "",
                    e.resolved_by or "",
                    when(e.resolved_at),
                ]
                for e in r.escalations
            ],
        ),
    ]
    parts += [
        f"<h2>{ESCAPES}</h2>",
        _table(
            ["reported", "by", "criterion", "severity", "description"],
            [[when(e.created_at), e.reported_by, e.criterion, e.severity, e.description] for e in r.escapes],
        ),
    ]
    parts += [
        "<h2>State history</h2>",
        _table(
            ["time", "from", "to", "actor", "note"],
            [
                [
                    when(h.created_at),
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
            _table(["id", "who"], people_rows(r)),
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
