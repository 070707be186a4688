"""House rules that keep the method pure, the pages safe and the package list honest.

The import rules read the real import graph (grimp, the library behind import-linter): every
import anywhere in a module counts, also one inside a function. No rule has a per-file exemption.
"""

from __future__ import annotations

import ast
import re
import socket
from functools import cache
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parents[1]
OURS = ("santa_core", "storage", "ui", "desk")
"""Our packages. `app.py` and `pages/` are scripts Streamlit runs: none of ours imports them (the server imports
`app.py` once, for its `st.App`)."""
COMPOSITION = "desk"
"""The composition root: the wiring (database, runner, batch driver, API clients) and the command line."""
MAX_LINES = 500


@cache
def graph() -> grimp.ImportGraph:
    """The import graph of our packages and what they import."""
    return grimp.build_graph(*OURS, include_external_packages=True)


def importers_of(importer: str, imported: str) -> list[tuple[str, str]]:
    """(module, what it imports) for every direct import from the package `importer` (its `__init__` and
    every module below it) into `imported` or anything below it."""
    found = set()
    for source in (importer, f"{importer}.**"):
        for target in (imported, f"{imported}.**"):
            found |= {
                (i["importer"], i["imported"])
                for i in graph().find_matching_direct_imports(import_expression=f"{source} -> {target}")
            }
    return sorted(found)


@pytest.mark.parametrize("forbidden", ["storage", "streamlit", "ui", COMPOSITION, "sqlmodel", "sqlalchemy"])
def test_the_core_imports_no_persistence_page_or_composition_root(forbidden: str) -> None:
    assert importers_of("santa_core", forbidden) == []


ADAPTERS = "santa_core.reviewers"
"""The one place of the core that talks to a provider's SDK: the reviewers' and the fix agent's adapters."""


@pytest.mark.parametrize("sdk", ["anthropic", "openai"])
def test_only_the_reviewers_adapters_import_a_provider_sdk(sdk: str) -> None:
    """The rest of the core depends on the adapters' interfaces, never on an SDK (the composition root wires it)."""
    adapters = [m for m, _ in importers_of("santa_core", sdk) if m == ADAPTERS or m.startswith(f"{ADAPTERS}.")]
    assert adapters  # the adapters do import it: the rule below reads a graph that holds the SDK
    outside = [
        (m, i) for pkg in ("santa_core", "storage", "ui") for m, i in importers_of(pkg, sdk) if m not in adapters
    ]
    assert outside == []


@pytest.mark.parametrize("forbidden", ["ui", "streamlit", COMPOSITION])
def test_storage_imports_no_page_or_composition_root(forbidden: str) -> None:
    assert importers_of("storage", forbidden) == []


def test_no_import_circles_among_our_modules() -> None:
    cycles = [sorted(c) for c in strongly_connected(graph(), OURS) if len(c) > 1]
    assert cycles == []


def strongly_connected(g: grimp.ImportGraph, packages: tuple[str, ...]) -> list[set[str]]:
    """Tarjan's strongly connected components of the graph of our modules (iterative)."""
    ours = sorted(m for m in g.modules if m.split(".")[0] in packages)
    edges = {m: sorted(n for n in g.find_modules_directly_imported_by(m) if n.split(".")[0] in packages) for m in ours}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []
    for root in ours:
        if root in index:
            continue
        work = [(root, iter(edges[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(edges[child])))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                found.append(component)
    return found


def test_the_circle_finder_finds_a_circle() -> None:
    g = grimp.ImportGraph()
    for name in ("santa_core.a", "santa_core.b", "santa_core.c"):
        g.add_module(name)
    g.add_import(importer="santa_core.a", imported="santa_core.b")
    g.add_import(importer="santa_core.b", imported="santa_core.a")
    g.add_import(importer="santa_core.c", imported="santa_core.a")
    assert [sorted(c) for c in strongly_connected(g, ("santa_core",)) if len(c) > 1] == [
        ["santa_core.a", "santa_core.b"]
    ]


UI_FILES = sorted([ROOT / "app.py", *(ROOT / "pages").glob("*.py"), *(ROOT / "ui").glob("*.py")])
PAGE_READS = {
    "storage.views": "*",
    "storage.errors": "*",
    "storage.audit": {"AuditEvent"},
    "storage.metrics": {"FailedRun", "MetricsOptions"},
    "storage.escapes": {"SEVERITIES"},
    "storage.records": {"RecordSource", "verification_record"},
    "storage.db": {"database_url", "redacted_url", "cannot_open"},
}
"""All a page may take from `storage`: read models, refusals, and read helpers. Stores, rows,
transactions, migrations and fact refreshes stay out; writes go through the core's actions."""


def storage_imports(path: Path) -> list[str]:
    """Every `storage` import of a file, as `module` or `module:name`."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name.split(".")[0] == "storage"]
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "storage":
            found += [f"{node.module}:{a.name}" for a in node.names]
    return found


def refused_storage_imports(path: Path) -> list[str]:
    """Storage imports a page or ui/ module may not make: anything but the reads in PAGE_READS."""

    def allowed(found: str) -> bool:
        module, _, name = found.partition(":")
        names = PAGE_READS.get(module, ())
        return bool(name) and (names == "*" or name in names)

    return [i for i in storage_imports(path) if not allowed(i)]


@pytest.mark.parametrize("path", UI_FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_pages_and_ui_import_no_concrete_store(path: Path) -> None:
    """Writes go through the core's actions (a person's one door); a page imports read models, errors and
    read helpers of `storage` only."""
    assert refused_storage_imports(path) == []


def test_the_store_import_rule_refuses_stores_rows_and_writers(tmp_path: Path) -> None:
    page = tmp_path / "page.py"
    page.write_text(
        "import storage.runs\nfrom storage import runs\nfrom storage.runs import RunStore\n"
        "from storage.tables import RunRow\nfrom storage.metric_facts import refresh\n"
        "from storage.db import migrate\nfrom storage.views import RunView\n"
        "from storage.db import database_url\n"
    )
    assert refused_storage_imports(page) == [
        "storage.runs",
        "storage:runs",
        "storage.runs:RunStore",
        "storage.tables:RunRow",
        "storage.metric_facts:refresh",
        "storage.db:migrate",
    ]


MODULES = sorted([*(p for pkg in (*OURS, "pages") for p in (ROOT / pkg).rglob("*.py")), ROOT / "app.py"])
"""Every module of the product: our packages (their migrations too), the pages and the app's script."""


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_module_holds_two_concepts(path: Path) -> None:
    assert len(path.read_text(encoding="utf-8").splitlines()) <= MAX_LINES


def stub_bodies(tree: ast.Module) -> set[int]:
    """The ids of the `...` bodies of `def name(self) -> T: ...` (a protocol's method: the formatter keeps it on one
    line); an `if x: ...` is not one."""
    return {
        id(node.body[0])
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and len(node.body) == 1
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
        and node.body[0].value.value is Ellipsis
    }


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_one_statement_per_line(path: Path) -> None:
    """No `a; b`, no `if x: y`, no `if x: ...`: lines are not packed to stay under the length rule (`ruff format` enforces it too)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    stubs = stub_bodies(tree)
    starts = [n.lineno for n in ast.walk(tree) if isinstance(n, ast.stmt) and id(n) not in stubs]
    assert sorted({line for line in starts if starts.count(line) > 1}) == []


def html_of_text(source: str) -> list[int]:
    """Lines of `st.html(...)` calls whose body is not a string constant of the module (a literal, or a module-level
    name bound to one): any other body can carry text from a file, a model or a person."""
    tree = ast.parse(source)
    constants = {
        t.id
        for n in tree.body
        if isinstance(n, ast.Assign) and isinstance(n.value, ast.Constant) and isinstance(n.value.value, str)
        for t in n.targets
        if isinstance(t, ast.Name)
    }
    return [
        n.lineno
        for n in ast.walk(tree)
        if isinstance(n, ast.Call)
        and isinstance(n.func, ast.Attribute)
        and n.func.attr == "html"
        and isinstance(n.func.value, ast.Name)
        and n.func.value.id == "st"
        and not (
            n.args
            and (
                isinstance(n.args[0], ast.Constant)
                and isinstance(n.args[0].value, str)
                or isinstance(n.args[0], ast.Name)
                and n.args[0].id in constants
            )
        )
    ]


@pytest.mark.parametrize("path", UI_FILES, ids=lambda p: p.name)
def test_no_raw_html_for_untrusted_text(path: Path) -> None:
    source = path.read_text(encoding="utf-8")
    assert "unsafe_allow_html" not in source and html_of_text(source) == []


def test_html_of_text_is_found() -> None:
    """The one HTML a page may insert is a constant of its module (the Batch page's scroll after Create)."""
    assert html_of_text('X = "<p>"\nst.html(X)\nst.html("<b>")\n') == []
    assert html_of_text('def f(t):\n    st.html(f"<p>{t}</p>")\n    st.html(t)\n') == [2, 3]
    assert html_of_text('X = "<p>"\ndef f(X):\n    st.html(X + "!")\n') == [3]


def test_every_page_file_is_in_the_navigation() -> None:
    app = (ROOT / "app.py").read_text(encoding="utf-8")
    for page in (ROOT / "pages").glob("*.py"):
        assert f'"pages/{page.name}"' in app, f"{page.name} is missing from st.navigation"


def test_requirements_are_pinned_and_xsrf_stays_on() -> None:
    lines = [ln.split("#")[0].strip() for ln in (ROOT / "requirements.txt").read_text().splitlines()]
    pins = [ln for ln in lines if ln and ln != "-e ."]  # `-e .`: this project itself, editable
    assert pins and all("==" in ln for ln in pins)
    assert any(re.fullmatch(r"streamlit(\[[a-z,]+\])?==1\.6\d*\.\d+", ln) for ln in pins)  # [auth]: st.login
    assert "enableXsrfProtection = true" in (ROOT / ".streamlit" / "config.toml").read_text()


def test_the_network_guard_refuses_non_loopback() -> None:
    with socket.socket() as s, pytest.raises(OSError, match="reach the network"):
        s.connect(("192.0.2.1", 443))


def test_the_reviewers_modules_import_first_in_a_fresh_interpreter() -> None:
    """`import santa_core.reviewers.calls` on its own (as the cost and chaos benches do) once failed: its answer
    contract imported the run's gate, whose package imports the runner, which imports the calls back half-built.
    The circle test above reads imports inside functions too, so only a fresh interpreter shows the order."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", "import santa_core.reviewers.calls, santa_core.reviewers.contract"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]


def test_a_desk_of_anthropic_models_never_loads_the_openai_sdk() -> None:
    """The app's desk, the command line, a review's wiring and an Anthropic connection test (also asked before each
    Message Batch when the screen is on) import the OpenAI-compatible adapter only when a model
    on such a provider is built (desk.wiring._chat): loading the openai SDK costs about half a second of CPU at every
    start of the app, a worker or a command. Building one such model does load it (the laziness is not a door shut)."""
    import subprocess
    import sys

    script = (
        "import sys, os\n"
        "os.environ['OPENAI_API_KEY'] = 'test'\n"
        "import ui.app_desk, desk.cli, desk.wiring as w\n"
        "w.model_reviewer('claude-sonnet-4-5'); w.model_fixer('claude-sonnet-4-5')\n"
        "from desk import connection\n"
        "from santa_core import providers\n"
        "os.environ.update(ANTHROPIC_API_KEY='test', ANTHROPIC_BASE_URL='http://127.0.0.1:9')  # nobody listens\n"
        "tested = connection.check_connection(providers.provider_of('claude-sonnet-4-5'))\n"
        "assert tested.problem and 'could not connect' in tested.problem, tested\n"
        "before = 'openai' in sys.modules\n"
        "built = type(w.model_reviewer('openai:gpt-5-mini')).__name__\n"
        "print(before, built, 'openai' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["False", "ChatReviewer", "True"]
