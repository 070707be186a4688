"""Format checks: the output (or each fenced block of its language) parses as JSON, YAML or Python.

Nothing is ever executed.
"""

from __future__ import annotations

import json
import re
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import yaml

from santa_core.checks.base import CheckConfigBase, CheckResult, line_of, plural
from santa_core.checks.folding import Folded


class ValidJsonCheck(CheckConfigBase):
    """The output (or each ```json block in it) parses as JSON."""

    type: Literal["valid_json"]


class ValidYamlCheck(CheckConfigBase):
    """The output (or each ```yaml block in it) parses as YAML."""

    type: Literal["valid_yaml"]


class PythonParsesCheck(CheckConfigBase):
    """The output (or each ```python block in it) parses as Python; nothing is executed."""

    type: Literal["python_parses"]


_FENCE_OPEN = re.compile(r" {0,3}(`{3,}|~{3,})[ \t]*([^\s`]*)[^`]*")

_ParseError = tuple[int, int | None, str]
"""(line, column or None, message) of a parse error, relative to the parsed text."""


@dataclass(frozen=True)
class _Block:
    number: int
    fence_line: int
    text: str
    closed: bool


def _fenced_blocks(text: str, tags: frozenset[str]) -> list[_Block]:
    """The fenced code blocks whose info string starts with one of `tags`, in order."""
    lines, i = text.split("\n"), 0
    blocks: list[_Block] = []
    while i < len(lines):
        m = _FENCE_OPEN.fullmatch(lines[i].rstrip("\r"))
        if not m:
            i += 1
            continue
        fence = m.group(1)
        close = re.compile(rf" {{0,3}}{re.escape(fence[0])}{{{len(fence)},}}[ \t]*")
        j = i + 1
        while j < len(lines) and not close.fullmatch(lines[j].rstrip("\r")):
            j += 1
        if m.group(2).lower() in tags:
            blocks.append(_Block(len(blocks) + 1, i + 1, "\n".join(lines[i + 1 : j]), j < len(lines)))
        i = j + 1
    return blocks


class _NotJson(ValueError):
    """NaN or Infinity: Python's parser accepts them, JSON does not."""


def _no_constant(name: str) -> None:
    raise _NotJson(name)


def _json_error(text: str) -> _ParseError | None:
    try:
        json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        return exc.lineno, exc.colno, exc.msg
    except _NotJson as exc:
        m = re.search(rf"(?<![\w\"]){re.escape(str(exc))}(?![\w\"])", text)
        line = line_of(text, m.start()) if m else 1
        column = m.start() - text.rfind("\n", 0, m.start()) if m else None
        return line, column, f"{exc} is not valid JSON (write a number or null)"
    except (ValueError, RecursionError) as exc:  # e.g. an integer past the digit limit, deep nesting
        return 1, None, str(exc) or "nested too deeply"
    return None


def _yaml_error(text: str) -> _ParseError | None:
    try:
        # What safe_load_all does (the safe loader of safe_load, but a "---" separated stream is valid too), one
        # document at a time, each node also looked over for a duplicate key: one reading of the text, not two. An
        # error anywhere in the stream still wins over a duplicate key, as when the stream was loaded first.
        loader = yaml.SafeLoader(text)
        duplicate = None
        try:
            while loader.check_node():
                node = loader.get_node()
                duplicate = duplicate or _duplicate_key(node)
                loader.construct_document(node)
        finally:
            loader.dispose()
        if duplicate:
            return duplicate
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc)
        context = getattr(exc, "context", None)
        message = f"{context}: {problem}" if context else problem
        return (mark.line + 1, mark.column + 1, message) if mark else (1, None, message)
    except RecursionError:
        return 1, None, "nested too deeply"
    except ValueError as exc:  # a value the parser cannot build, e.g. an integer past Python's digit limit
        return 1, None, f"it cannot be read: {exc}"
    return None


_PY_FILENAME = "<santa-output>"
# Compiling an output may warn (e.g. an invalid escape sequence: valid code, noisy). A module-wide
# filter for that file name, set once: catch_warnings() is not thread-safe and checks run in threads.
for _category in (SyntaxWarning, DeprecationWarning):  # Python 3.11 says DeprecationWarning, 3.12+ SyntaxWarning
    warnings.filterwarnings("ignore", category=_category, module=re.escape(_PY_FILENAME))


def _duplicate_key(node: yaml.Node | None, visited: set[int] | None = None) -> _ParseError | None:
    """A key given twice in one mapping: YAML forbids it, though PyYAML keeps the last one silently.

    Each node is looked at once (`visited`, by identity): an alias is the node it names, so nine aliases of nine
    aliases of … ("billion laughs") made a walk that visits every path 9**k times, minutes for 500 characters.
    """
    visited = set() if visited is None else visited
    if id(node) in visited:
        return None
    visited.add(id(node))
    if isinstance(node, yaml.MappingNode):
        seen: set[str] = set()
        for key, value in node.value:
            name = str(getattr(key, "value", ""))
            if name in seen:
                return key.start_mark.line + 1, key.start_mark.column + 1, f"duplicate key {name!r}"
            seen.add(name)
            if found := _duplicate_key(value, visited):
                return found
    elif isinstance(node, yaml.SequenceNode):
        for item in node.value:
            if found := _duplicate_key(item, visited):
                return found
    return None


def _python_error(text: str) -> _ParseError | None:
    # Why compile and never exec: compiling catches what a parse alone lets through ("return"
    # outside a function, "break" outside a loop) and runs nothing.
    try:
        compile(text, _PY_FILENAME, "exec", dont_inherit=True)
    except SyntaxError as exc:
        return exc.lineno or 1, exc.offset, exc.msg
    except (ValueError, RecursionError, MemoryError) as exc:  # null bytes, absurd nesting
        return 1, None, str(exc) or type(exc).__name__
    return None


def _located(error: _ParseError, first_line: int) -> str:
    """'line L, column C: message' with L counted in the whole output."""
    line, column, message = error
    where = f"line {first_line + line - 1}" + (f", column {column}" if column else "")
    return f"{where}: {message}"


def _parses(
    output: str, language: str, tags: frozenset[str], parse: Callable[[str], _ParseError | None]
) -> CheckResult:
    """Parse the tagged fenced blocks, or the whole output when it has none."""
    # Why no evidence: a parser reports where it gave up, often far from the actual mistake
    # ("'(' was never closed" points at the opening), so it must not pin the fix to that line.
    blocks = _fenced_blocks(output, tags)
    if not blocks:
        if not output.strip():
            return False, f"the output is empty: no {language} to parse", ""
        if (error := parse(output)) is not None:
            return False, f"the output is not valid {language}: {_located(error, 1)}", ""
        return True, f"the output parses as {language}", ""
    problems = []
    for b in blocks:
        where = f"{language} block {b.number} (fence at line {b.fence_line})"
        if not b.closed:
            problems.append(f"{where}: the fence is never closed")
        elif not b.text.strip():
            problems.append(f"{where}: the block is empty")
        elif (error := parse(b.text)) is not None:
            problems.append(f"{where}: {_located(error, b.fence_line + 1)}")
    if problems:
        return False, "; ".join(problems), ""
    return True, f"{plural(len(blocks), language + ' block')} found, all parse", ""


def valid_json(cfg: ValidJsonCheck, output: str, folded: Folded) -> CheckResult:
    return _parses(output, "JSON", frozenset({"json"}), _json_error)


def valid_yaml(cfg: ValidYamlCheck, output: str, folded: Folded) -> CheckResult:
    return _parses(output, "YAML", frozenset({"yaml", "yml"}), _yaml_error)


def python_parses(cfg: PythonParsesCheck, output: str, folded: Folded) -> CheckResult:
    return _parses(output, "Python", frozenset({"python", "py", "python3"}), _python_error)
