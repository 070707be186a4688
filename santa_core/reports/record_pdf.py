"""The verification record as a PDF (`to_pdf`) in the core fonts: a character they cannot show is written as an
escape, and the document says how many were. The JSON (`santa_core.reports.record.to_json`) is the exact record."""

from __future__ import annotations

import unicodedata

from santa_core import words as w
from santa_core.reports.record import NOT_INDEPENDENT, RecordRound, VerificationRecord, people_rows, when
from santa_core.reports.record_cost import ESCAPES, cost_line
from santa_core.reports.record_panel import panel_line
from santa_core.reports.record_unreviewed import gate_lines, round_title
from santa_core.text import canonical_json

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
        ("small", f"started {when(rnd.started_at)} - output sha256 {rnd.output_hash}"),
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
                f"{when(d.created_at)} - {d.actor} - {w.decision(d.action)}" + (f": {d.reason}" if d.reason else ""),
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
            f"Created {when(r.created_at)} by {r.created_by} ({r.source}) - cost {cost_line(r.total_cost_usd, r.cut_off_calls)}",
        ),
        ("p", f"Generated {when(r.generated_at)}"),
        ("small", f"Record sha256 {r.record_hash}"),
        ("h2", "People"),
        *(("p", f"{pid}: {who}") for pid, who in people_rows(r)),
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
            f"{w.reason(e.reason)} ({e.status}) opened {when(e.created_at)}; owner {e.owner or '-'}; due {when(e.due_at) or '-'}"
            + (
                f"; resolved ({w.resolution(e.resolution)}) by {e.resolved_by} at {when(e.resolved_at)}: {e.justification or ''}"
                if e.resolution
                else ""
            ),
        )
        for e in r.escalations
    ] or [("p", "None.")]
    out.append(("h2", ESCAPES))
    out += [
        ("p", f"{when(e.created_at)} {e.reported_by} - {e.criterion} ({e.severity}): {e.description}")
        for e in r.escapes
    ] or [("p", "None.")]
    out.append(("h2", "State history"))
    out += [
        (
            "p",
            f"{when(h.created_at)} {w.status(h.from_status) if h.from_status else '-'} -> {w.status(h.to_status)} "
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
