"""The verification record of a 3-round escalated run, checked from the exported JSON alone."""

from __future__ import annotations

import hashlib
import html
import json
import re
import zlib
from datetime import UTC, datetime
from pathlib import Path

import pytest

from santa_core.models import FixEdit, FixPlan, RunStatus
from santa_core.reports.record import to_json
from santa_core.reports.record_html import to_html
from santa_core.reports.record_pdf import pdf_safe, to_pdf
from santa_core.reviewers.base import ReviewRequest
from santa_core.reviewers.doubles import FunctionFixer, FunctionReviewer, failing
from santa_core.rubrics.library import load_builtin
from santa_core.run import actions
from santa_core.run.runner import Runner
from storage.audit import GENESIS, event_hash
from storage.errors import RunNotFound
from storage.records import verification_record
from storage.runs import RunStore
from storage.startup import init_db
from tests.conftest import grant, migrated_sqlite

RUBRIC = load_builtin("general")
SPEC = "Write one sentence announcing the Acme rocket. Price: 10 €."
FIRST = "Acme launched its rocket in 2019 <script>alert('x')</script> — ✓ 漢字 € 🚀"
EDITOR, OFFICER = "editor@example.com", "officer@example.com"


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def always_flags(request: ReviewRequest):
    return failing(request, "factual_accuracy", "wrong launch year <b>", evidence="2019")


def appends_a_word(request) -> FixPlan:
    """Changes the text every round but never fixes what the reviewers flag."""
    return FixPlan(edits=[FixEdit(issue=0, before="in 2019", after="in 2019 still")])


@pytest.fixture
def repo(tmp_path: Path) -> RunStore:
    return grant(RunStore(init_db(migrated_sqlite(tmp_path / "santa.db"), mark_interrupted=False)))


@pytest.fixture
def escalated_run(repo: RunStore) -> int:
    """Three NAUGHTY rounds (approve, then edit), round cap, shipped as is by an officer, one escape."""
    reviewers = {name: FunctionReviewer(name, always_flags) for name in ("b", "c")}
    fixer = FunctionFixer("fixer", appends_a_word)
    runner = Runner(repo, lambda name: reviewers[name], lambda name: fixer, workers=2)
    run_id = repo.create_run(
        spec=SPEC, output=FIRST, rubric=RUBRIC, reviewer_b="b", reviewer_c="c", fixer="fixer", created_by=EDITOR
    )
    assert runner.execute(run_id).status == RunStatus.AWAITING_APPROVAL
    actions.approve_fix(repo, run_id, EDITOR, reason="looks right")
    assert runner.execute(run_id).status == RunStatus.AWAITING_APPROVAL
    edited = repo.load_round(run_id, 2).proposal.proposed_text + "\nEdited by a person."
    actions.approve_fix(repo, run_id, EDITOR, edited, "added a line")
    state = runner.execute(run_id)
    assert (state.status, state.round) == (RunStatus.ESCALATED, 3)
    repo.assign_escalation(run_id, OFFICER, "admin@example.com")
    repo.resolve_escalation(run_id, "ship_as_is", OFFICER, "Legal confirmed the year.")
    repo.report_escape(run_id, "factual_accuracy", "The year was wrong after all.", "major", "viewer@example.com")
    return run_id


def exported(repo: RunStore, run_id: int) -> dict:
    return json.loads(to_json(verification_record(repo, run_id)))


def test_hashes_recompute_from_the_record_alone(repo: RunStore, escalated_run: int) -> None:
    data = exported(repo, escalated_run)
    rounds = data["rounds"]
    assert [r["round_no"] for r in rounds] == [1, 2, 3]
    for rnd in rounds:
        assert rnd["output_hash"] == sha(rnd["output_text"])
    for rnd, nxt in zip(rounds, rounds[1:], strict=False):
        (decision,) = rnd["decisions"]
        assert decision["before_hash"] == sha(rnd["output_text"])
        assert decision["after_hash"] == sha(nxt["output_text"]) == sha(decision["after_text"])
    (ship,) = rounds[2]["decisions"]
    assert ship["action"] == "ship_as_is" and ship["before_hash"] == ship["after_hash"] == sha(rounds[2]["output_text"])
    assert data["final_output_hash"] == sha(data["final_output"]) == rounds[2]["output_hash"]
    assert data["spec_hash"] == sha(data["spec"])
    rubric = data["rubric"]
    body = {k: v for k, v in rubric.items() if k != "hash"}  # from the record alone
    assert rubric["hash"] == sha(json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False))
    for rnd in rounds:
        for review in rnd["reviews"]:
            assert review["raw_response"] and review["raw_response_hash"] == sha(review["raw_response"])
    saved = {
        (e["detail"]["round"], e["detail"]["slot"]): e["after_hash"]
        for e in data["audit_events"]
        if e["action"] == "review.saved"
    }
    assert saved == {(r["round_no"], v["slot"]): v["raw_response_hash"] for r in rounds for v in r["reviews"]}
    rest = {k: v for k, v in data.items() if k not in ("record_hash", "generated_at")}
    assert data["record_hash"] == sha(json.dumps(rest, sort_keys=True, separators=(",", ":"), ensure_ascii=False))


def test_exports_at_different_times_carry_the_same_record_hash(repo: RunStore, escalated_run: int) -> None:
    first = verification_record(repo, escalated_run, now=datetime(2026, 1, 1, tzinfo=UTC))
    later = verification_record(repo, escalated_run, now=datetime(2026, 6, 1, tzinfo=UTC))
    assert first.generated_at != later.generated_at and first.record_hash == later.record_hash
    repo.report_escape(escalated_run, "factual_accuracy", "a later defect", "minor", "viewer@example.com")
    assert verification_record(repo, escalated_run).record_hash != first.record_hash


def test_audit_events_rehash_and_link(repo: RunStore, escalated_run: int) -> None:
    events = exported(repo, escalated_run)["audit_events"]
    assert events and all(e["run_id"] == escalated_run for e in events)
    hashed = (
        "seq",
        "created_at",
        "actor",
        "action",
        "entity_type",
        "entity_id",
        "run_id",
        "before_hash",
        "after_hash",
        "detail",
        "prev_hash",
    )  # as docs/cli.md describes it, not via the production code
    for event in events:
        body = json.dumps({k: event[k] for k in hashed}, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        assert sha(body) == event["hash"] == event_hash(event)
    for before, after in zip(events, events[1:], strict=False):
        assert after["seq"] == before["seq"] + 1  # nothing else happened meanwhile in this database
        assert after["prev_hash"] == before["hash"]
    # The first event links to the chain before the run (the role grants and their seal), which verify checks.
    first = events[0]
    (before_run,) = [
        e for e in repo.audit.events(newest_first=False, limit=10_000, seals=True) if e.seq == first["seq"] - 1
    ]
    assert first["prev_hash"] == before_run.hash != GENESIS and before_run.run_id is None
    assert repo.audit.verify().ok
    actions_seen = [e["action"] for e in events]
    for action in (
        "run.created",
        "review.saved",
        "round.gate",
        "proposal.saved",
        "decision.approve",
        "decision.edit",
        "escalation.opened",
        "escalation.assigned",
        "decision.ship_as_is",
        "escalation.resolved",
        "escape.reported",
    ):
        assert action in actions_seen, action


def test_every_review_decision_and_the_escalation_are_present(repo: RunStore, escalated_run: int) -> None:
    data = exported(repo, escalated_run)
    for rnd in data["rounds"]:
        assert [r["slot"] for r in rnd["reviews"]] == ["B", "C"]
        for review in rnd["reviews"]:
            assert review["verdict"] == "FAIL" and review["issues"][0]["criterion"] == "factual_accuracy"
            assert {c["criterion"] for c in review["checks"]} == set(RUBRIC.criterion_ids())
        assert rnd["gate"]["decision"] == "NAUGHTY" and rnd["gate"]["issues"][0]["flagged_by"] == "both"
    assert [d["action"] for r in data["rounds"] for d in r["decisions"]] == ["approve", "edit", "ship_as_is"]
    assert [d["actor"] for r in data["rounds"] for d in r["decisions"]] == [EDITOR, EDITOR, OFFICER]
    assert data["rounds"][0]["proposal"]["diff"].count("+Acme") == 1
    assert "+Edited by a person." in data["rounds"][1]["diff_to_next"]
    assert data["rounds"][2]["diff_to_next"] is None
    (esc,) = data["escalations"]
    assert (esc["reason"], esc["owner"], esc["resolution"], esc["resolved_by"]) == (
        "round_cap",
        OFFICER,
        "ship_as_is",
        OFFICER,
    )
    assert esc["justification"] == "Legal confirmed the year." and esc["resolved_at"] and esc["due_at"]
    assert data["status"] == RunStatus.RESOLVED_SHIPPED.value
    assert [(h["from_status"], h["to_status"]) for h in data["history"]][-1] == ("escalated", "resolved_shipped")
    (escape,) = data["escapes"]
    assert (escape["severity"], escape["reported_by"]) == ("major", "viewer@example.com")
    assert (data["reviewer_b"], data["reviewer_c"], data["fix_agent"], data["created_by"]) == (
        "b",
        "c",
        "fixer",
        EDITOR,
    )


def test_json_is_stable(repo: RunStore, escalated_run: int) -> None:
    record = verification_record(repo, escalated_run)
    assert to_json(record) == to_json(record.model_validate_json(to_json(record)))


def test_html_shows_each_round_and_escapes_markup(repo: RunStore, escalated_run: int) -> None:
    page = to_html(verification_record(repo, escalated_run))
    for n in (1, 2, 3):
        assert f'id="round-{n}"' in page
    assert "<script" not in page and "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in page
    assert "wrong launch year &lt;b&gt;" in page and "漢字" in page
    assert "http://" not in page and "https://" not in page and "src=" not in page
    assert "Legal confirmed the year." in page and "The year was wrong after all." in page


def test_pdf_survives_text_outside_latin_1(repo: RunStore, escalated_run: int) -> None:
    pdf = to_pdf(verification_record(repo, escalated_run))
    assert pdf.startswith(b"%PDF") and pdf.rstrip().endswith(b"%%EOF")
    shown = pdf_text(pdf)
    assert "u2713" in shown and "u6f22" in shown and "U0001f680" in shown  # shown as code points, not dropped
    assert "€" in shown  # Windows-1252 has the euro sign: it stays itself
    assert "shown as" in shown and "JSON export of the record holds the exact texts" in shown


def pdf_text(pdf: bytes) -> str:
    """The page content streams of a PDF, inflated and decoded as the core fonts' Windows-1252.

    Each stream is read to its declared /Length: compressed bytes may end in a carriage return, which a search for
    the newline before `endstream` would take for the line end (and the stream would not inflate)."""
    out = []
    for m in re.finditer(rb"/Length (\d+)\s*>>\s*stream\r?\n", pdf):
        part = pdf[m.end() : m.end() + int(m[1])]
        try:
            out.append(zlib.decompress(part).decode("cp1252", errors="replace"))
        except zlib.error:
            out.append(part.decode("cp1252", errors="replace"))
    return re.sub(r"\)\s*-?\d*\.?\d*\s*\(", "", "\n".join(out))  # join text pieces split by kerning


def test_pdf_text_reads_a_stream_whose_compressed_bytes_end_in_a_carriage_return() -> None:
    """The CI flake of 2026-12-05: a page whose deflated stream ended in b"\\r" read as garbage, so its heading
    was missing from the text. Found by trying texts until the deflated bytes end so (about one in 256)."""
    text = next(
        f"BT (Audit events {n}) Tj ET"
        for n in range(100_000)
        if zlib.compress(f"BT (Audit events {n}) Tj ET".encode()).endswith(b"\r")
    )
    data = zlib.compress(text.encode())
    pdf = b"4 0 obj\n<<\n/Filter /FlateDecode\n/Length %d\n>>\nstream\n%s\nendstream\nendobj\n" % (len(data), data)
    assert "(Audit events" in pdf_text(pdf)


def test_pdf_safe_escapes_instead_of_dropping() -> None:
    assert pdf_safe("€ ✓ 漢字") == ("€ \\u2713 \\u6f22\\u5b57", 3)
    assert pdf_safe("a\tb\u200bc🚀") == ("a    b\\u200bc\\U0001f680", 2)


def test_unknown_run(repo: RunStore) -> None:
    with pytest.raises(RunNotFound):
        verification_record(repo, 999)


def test_the_record_says_who_each_actor_is(repo: RunStore, escalated_run: int) -> None:
    data = exported(repo, escalated_run)
    actors = {d["actor"] for r in data["rounds"] for d in r["decisions"]} | {e["actor"] for e in data["audit_events"]}
    assert actors <= set(data["people"])
    assert data["people"]["officer@example.com"].endswith("(compliance_officer)")
    assert data["people"]["worker"] == "the desk itself (system code)"
    assert all(r["independent"] for r in data["rounds"])  # two models: independent
    assert "<h2>People</h2>" in to_html(verification_record(repo, escalated_run))


def test_one_person_in_both_slots_is_stated_in_the_record(repo: RunStore) -> None:
    """The local user of an install without sign-in may fill both slots; the record must say so."""
    from santa_core.models import CheckResult, Review

    run_id = repo.create_run(
        spec=SPEC,
        output=FIRST,
        rubric=RUBRIC,
        reviewer_b="person",
        reviewer_c="person",
        fixer="person",
        created_by="local",
    )
    review = Review(
        verdict="PASS",
        checks=[CheckResult(criterion=c, result="PASS", detail="checked") for c in RUBRIC.criterion_ids()],
        critical_issues=[],
        suggestions=[],
    )
    for slot in ("B", "C"):
        actions.submit_person_review(repo, run_id, slot, review, "local")
    record = verification_record(repo, run_id)
    assert record.rounds[0].independent is False
    assert json.loads(to_json(record))["rounds"][0]["independent"] is False
    assert "not independent" in to_html(record) and record.people["local"].startswith("local user")


# --- the panel's model families ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reviewer_b", "reviewer_c", "families", "two", "line"),
    [
        pytest.param(
            "claude-sonnet-5-5",
            "claude-haiku-5-5",
            "Claude + Claude",
            False,
            "Claude + Claude: one model family, so the reviewers' misses are not independent",
            id="one-family",
        ),
        pytest.param(
            "claude-sonnet-5-5",
            "openai:gpt-5.4-mini",
            "Claude + GPT",
            True,
            "Claude + GPT: two model families",
            id="two-families",
        ),
    ],
)
def test_the_record_states_whether_the_panel_spans_two_model_families(
    repo: RunStore, reviewer_b: str, reviewer_c: str, families: str, two: bool, line: str
) -> None:
    from santa_core.reports.record_panel import panel_line
    from santa_core.reports.record_pdf import _pdf_blocks

    run_id = repo.create_run(
        spec=SPEC,
        output=FIRST,
        rubric=RUBRIC,
        reviewer_b=reviewer_b,
        reviewer_c=reviewer_c,
        fixer="claude-opus-5-5",
        created_by=EDITOR,
    )
    record = verification_record(repo, run_id)
    assert record.spans_two_families is two and record.panel_families == families
    data = exported(repo, run_id)
    assert (data["spans_two_families"], data["panel_families"]) == (two, families)  # in the exact (JSON) record too
    assert panel_line(record) == line
    other = "two model families" if not two else "one model family"
    page = to_html(record)
    assert f"<tr><th>Panel</th><td>{html.escape(line)}</td></tr>" in page and other not in page
    assert ("p", f"Panel: {line}") in _pdf_blocks(record)
    shown = pdf_text(to_pdf(record))
    assert f"Panel: {line}" in shown and other not in shown
