"""`python -m santa_core record|audit|people`, run as a pipeline would: a subprocess against a
temporary SQLite DATABASE_URL (no model client is opened by these commands)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from sqlalchemy import text

from storage.runs import RunStore
from storage.startup import init_db
from tests.cli.test_rubric import err, out, santa
from tests.conftest import grant
from tests.core.reports.test_record import escalated_run  # noqa: F401 - a fixture: a 3-round escalated, resolved run


@pytest.fixture
def repo(env: dict[str, str]) -> RunStore:
    """The command line's database, opened here to arrange and to check."""
    return grant(RunStore(init_db(env["DATABASE_URL"], mark_interrupted=False)))


def sha(data: str) -> str:
    return hashlib.sha256(data.encode("utf-8")).hexdigest()


# --- record ----------------------------------------------------------------------------------


def test_record_json_to_stdout(env: dict[str, str], tmp_path: Path, escalated_run: int) -> None:  # noqa: F811
    done = santa(env, tmp_path, "record", str(escalated_run))
    assert done.returncode == 0, err(done)
    data = json.loads(out(done))
    assert data["run_id"] == escalated_run and len(data["rounds"]) == 3
    rest = {k: v for k, v in data.items() if k not in ("record_hash", "generated_at")}
    assert data["record_hash"] == sha(json.dumps(rest, sort_keys=True, separators=(",", ":"), ensure_ascii=False))


def test_record_html_and_pdf_files(env: dict[str, str], tmp_path: Path, escalated_run: int) -> None:  # noqa: F811
    done = santa(env, tmp_path, "record", str(escalated_run), "--format", "html", "--out", "run.html")
    assert done.returncode == 0, err(done)
    assert out(done).startswith(f"wrote the html record of run {escalated_run} to run.html")
    page = (tmp_path / "run.html").read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and "<script" not in page
    done = santa(env, tmp_path, "record", str(escalated_run), "--format", "pdf", "--out", "run.pdf")
    assert done.returncode == 0, err(done)
    assert (tmp_path / "run.pdf").read_bytes().startswith(b"%PDF")
    piped = santa(env, tmp_path, "record", str(escalated_run), "--format", "pdf")  # stdout is a pipe here
    assert piped.returncode == 0 and piped.stdout.startswith(b"%PDF") and piped.stdout.rstrip().endswith(b"%%EOF")


def test_record_of_an_unknown_run_is_bad_input(env: dict[str, str], tmp_path: Path, repo: RunStore) -> None:
    done = santa(env, tmp_path, "record", "999")
    assert done.returncode == 2 and done.stdout == b""
    assert err(done).strip() == "santa: run 999 does not exist; see the runs list in the app"
    done = santa(env, tmp_path, "record", "abc")
    assert done.returncode == 2 and "invalid int value" in err(done)
    done = santa(env, tmp_path, "record", "1", "--format", "docx")
    assert done.returncode == 2 and "invalid choice" in err(done)


def test_record_to_an_unwritable_path(env: dict[str, str], tmp_path: Path, escalated_run: int) -> None:  # noqa: F811
    done = santa(env, tmp_path, "record", str(escalated_run), "--out", str(tmp_path / "no" / "such" / "dir.json"))
    assert done.returncode == 2 and "cannot write" in err(done)


# --- audit -----------------------------------------------------------------------------------


def test_audit_verify_intact(env: dict[str, str], tmp_path: Path, escalated_run: int, repo: RunStore) -> None:  # noqa: F811
    count = len(repo.audit.events(limit=100_000, seals=True))
    done = santa(env, tmp_path, "audit", "verify")
    assert done.returncode == 0, err(done)
    newest = repo.audit.events(limit=1, seals=True)[0].hash
    rows = repo.audit.verify().rows_checked
    assert rows > 0 and out(done).strip() == f"intact: {count} events, {rows} rows; newest hash {newest}"


def test_a_tampered_row_fails_verify_and_is_named(
    env: dict[str, str],
    tmp_path: Path,
    escalated_run: int,  # noqa: F811
    repo: RunStore,
) -> None:
    target = next(e for e in repo.audit.events(newest_first=False, limit=100_000) if e.action == "decision.edit")
    with repo.engine.begin() as conn:  # someone with the database file rewrites who decided
        conn.execute(text("UPDATE audit_event SET actor = 'mallory@example.com' WHERE id = :id"), {"id": target.id})
    done = santa(env, tmp_path, "audit", "verify")
    assert done.returncode == 1, out(done) + err(done)
    shown = out(done)
    assert f"audit event #{target.id} (seq {target.seq})" in shown
    assert "does not match its hash" in shown and f"{target.seq - 1} events before it verified" in shown


def test_removed_newest_rows_fail_verify(
    env: dict[str, str],
    tmp_path: Path,
    escalated_run: int,  # noqa: F811
    repo: RunStore,
) -> None:
    newest = repo.audit.events(limit=1, seals=True)[0]
    with repo.engine.begin() as conn:
        conn.execute(text("DELETE FROM audit_event WHERE seq = :seq"), {"seq": newest.seq})
    done = santa(env, tmp_path, "audit", "verify")
    assert done.returncode == 1 and "newest events were removed" in out(done)


def test_audit_list_filters(env: dict[str, str], tmp_path: Path, escalated_run: int, repo: RunStore) -> None:  # noqa: F811
    done = santa(env, tmp_path, "audit", "list", "--run", str(escalated_run), "--action", "decision.", "--json")
    assert done.returncode == 0, err(done)
    events = json.loads(out(done))
    assert [e["action"] for e in events] == ["decision.ship_as_is", "decision.edit", "decision.approve"]  # newest first
    assert {e["run_id"] for e in events} == {escalated_run}
    assert [e["hash"] for e in events] == [e.hash for e in repo.audit.events(run_id=escalated_run, action="decision.")]
    done = santa(env, tmp_path, "audit", "list", "--actor", "officer@example.com", "--limit", "1")
    lines = out(done).splitlines()
    assert done.returncode == 0 and lines[0].split()[:4] == ["SEQ", "TIME", "(UTC)", "ACTOR"]
    assert len(lines) == 2 and "officer@example.com" in lines[1] and "escalation.resolved" in lines[1]
    done = santa(env, tmp_path, "audit", "list", "--limit", "0")
    assert done.returncode == 2 and "--limit" in err(done)


# --- people ----------------------------------------------------------------------------------


def test_people_set_makes_the_first_admin_as_cli(env: dict[str, str], tmp_path: Path) -> None:
    done = santa(
        env,
        tmp_path,
        "people",
        "set",
        "dana@example.com",
        "--roles",
        "admin, compliance_officer",
        "--name",
        "Dana Ruiz",
    )
    assert done.returncode == 0, err(done)
    assert out(done).strip() == "Dana Ruiz <dana@example.com>: admin, compliance officer"
    repo = RunStore(init_db(env["DATABASE_URL"], mark_interrupted=False))
    person = repo.people.get("dana@example.com")
    assert person is not None and {r.value for r in person.roles} == {"admin", "compliance_officer"}
    assert person.updated_by == "cli"
    (event,) = repo.audit.events(action="person.roles_set", limit=10)
    assert event.actor == "cli" and event.entity_id == "dana@example.com"
    listed = json.loads(out(santa(env, tmp_path, "people", "list", "--json")))
    assert [p["id"] for p in listed] == ["local", "dana@example.com"]
    table = out(santa(env, tmp_path, "people", "list")).splitlines()
    assert table[0].split() == ["ID", "NAME", "ROLES", "UPDATED", "BY", "UPDATED", "AT"]
    assert any(line.startswith("dana@example.com") and "admin,compliance_officer" in line for line in table)


def test_people_set_refuses_bad_roles_and_the_last_admin(env: dict[str, str], tmp_path: Path) -> None:
    done = santa(env, tmp_path, "people", "set", "x@example.com", "--roles", "boss")
    assert done.returncode == 2 and "unknown role 'boss'" in err(done)
    done = santa(env, tmp_path, "people", "set", "x@example.com", "--roles", " , ")
    assert done.returncode == 2 and "at least one role" in err(done)
    done = santa(env, tmp_path, "people", "set", "local", "--roles", "viewer")  # local is the only admin
    assert done.returncode == 2 and "stays an admin" in err(done)
    done = santa(env, tmp_path, "people", "set", "x@example.com")
    assert done.returncode == 2 and "--roles" in err(done)
    repo = RunStore(init_db(env["DATABASE_URL"], mark_interrupted=False))
    assert [p.id for p in repo.people.all()] == ["local"]  # nothing changed
