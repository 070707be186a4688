"""The adapters' call sites: every place the code reaches a provider SDK's endpoint is listed here, and each paid
one passes the call log's door (`note_sending`) before its request leaves. A new call site fails this test until
it is routed through the door (or shown to be free and listed as such).

Read from the source (the AST of every module of the packages that may talk to a provider); the behaviour is
proved by tests/storage/test_call_log.py and test_call_log_doors.py against the loopback servers.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("santa_core", "desk", "storage", "ui", "pages", "bench", "scripts")

PAID = {
    ("messages", "create"),
    ("messages", "parse"),
    ("messages", "stream"),
    ("completions", "create"),
    ("completions", "parse"),
    ("completions", "stream"),
    ("responses", "create"),
    ("responses", "parse"),
    ("responses", "stream"),
    ("messages", "batches", "create"),
    ("embeddings", "create"),
    ("count_tokens",),
}
"""Endpoints that bill (or, for count_tokens, cost a rate-limited request), by the tail of the attribute chain
(`client.beta.messages.batches.create` ends in ("messages", "batches", "create"); the desk's own
`desk.batches.create`, a batch of items, is not an endpoint)."""
FREE = {
    ("models", "list"),
    ("messages", "batches", "retrieve"),
    ("messages", "batches", "cancel"),
    ("messages", "batches", "results"),
    ("messages", "batches", "list"),
}
"""Endpoints that bill nothing: the model list (Test connection, the screen's provider check) and a Message
Batch's status, cancel and results (its items are billed as answered, and are on record before the create)."""

PAID_SITES = {
    ("santa_core/reviewers/anthropic.py", "AnthropicCaller._send"),
    ("santa_core/reviewers/openai_compat.py", "ChatCaller._send"),
    ("santa_core/reviewers/message_batches.py", "submit"),
}
"""Every function that reaches a paid endpoint."""


def sites() -> dict[tuple[str, str], set[tuple[str, ...]]]:
    """(module, qualified function) -> the SDK endpoints referenced there (called, or taken as a function)."""
    found: dict[tuple[str, str], set[tuple[str, ...]]] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")) if (ROOT / package).is_dir() else ():
            module = path.relative_to(ROOT).as_posix()
            visit(ast.parse(path.read_text(encoding="utf-8")), module, "", found)
    return found


def visit(node: ast.AST, module: str, scope: str, found: dict) -> None:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            visit(child, module, f"{scope}.{child.name}".lstrip("."), found)
            continue
        if isinstance(child, ast.Attribute):
            chain = attribute_chain(child)
            for key in (chain[-3:], chain[-2:], chain[-1:]):
                if key in PAID or key in FREE:
                    found.setdefault((module, scope), set()).add(key)
        visit(child, module, scope, found)


def attribute_chain(node: ast.Attribute) -> tuple[str, ...]:
    """`a.b(x).c.d` as ("b", "c", "d"): the attribute names leading to `node`, through calls."""
    names: list[str] = []
    current: ast.AST = node
    while isinstance(current, ast.Attribute | ast.Call):
        if isinstance(current, ast.Attribute):
            names.append(current.attr)
            current = current.value
        else:
            current = current.func
    return tuple(reversed(names))


def calls_in_order(function: ast.AST) -> list[str]:
    """Names of the functions called in `function`, in source order (`a.b.c()` as 'c')."""
    names = [
        (n.lineno, n.col_offset, n.func.attr if isinstance(n.func, ast.Attribute) else getattr(n.func, "id", ""))
        for n in ast.walk(function)
        if isinstance(n, ast.Call)
    ]
    return [name for *_, name in sorted(names)]


def function(module: str, qualname: str) -> ast.AST:
    tree = ast.parse((ROOT / module).read_text(encoding="utf-8"))
    for part in qualname.split("."):
        tree = next(n for n in ast.iter_child_nodes(tree) if getattr(n, "name", None) == part)
    return tree


def test_every_paid_call_site_is_listed() -> None:
    paid = {site for site, keys in sites().items() if keys & PAID}
    assert paid == PAID_SITES, "a new paid call site: route it through the call log's door (note_sending)"


def test_a_message_batch_notes_every_item_before_it_is_created() -> None:
    order = calls_in_order(function("santa_core/reviewers/message_batches.py", "submit"))
    assert "note_sending" in order and order.index("note_sending") < order.index("create")


def test_the_adapters_send_only_through_the_door() -> None:
    # `_send` (the only paid sites of the adapters) is called from one place: `_deliver`'s attempt, after the note.
    callers = {site for site in all_callers("_send")}
    assert callers == {("santa_core/reviewers/calls.py", "StructuredCaller._deliver.attempt")}
    order = calls_in_order(function("santa_core/reviewers/calls.py", "StructuredCaller._deliver.attempt"))
    assert order == ["perf_counter", "note_sending", "_send"]


def all_callers(name: str) -> set[tuple[str, str]]:
    """(module, qualified function) of every call of a method or function named `name` in the packages."""
    found: set[tuple[str, str]] = set()

    def walk(node: ast.AST, module: str, scope: str) -> None:
        for child in ast.iter_child_nodes(node):
            inner = scope
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                inner = f"{scope}.{child.name}".lstrip(".")
            elif isinstance(child, ast.Call) and name in (
                getattr(child.func, "attr", None),
                getattr(child.func, "id", None),
            ):
                found.add((module, scope))
            walk(child, module, inner)

    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")) if (ROOT / package).is_dir() else ():
            walk(ast.parse(path.read_text(encoding="utf-8")), path.relative_to(ROOT).as_posix(), "")
    return found


def test_the_free_endpoints_are_the_only_others() -> None:
    free = {site: keys for site, keys in sites().items() if not keys & PAID}
    assert all(keys <= FREE for keys in free.values())
    assert ("desk/connection.py", "_list_models") in free  # Test connection: the model list, billed by no API
