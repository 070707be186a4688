"""Built-in rubrics (data files in `rubrics/`), composition, and loading rubric files.

A rubric file is YAML or JSON with `name`, `version`, `domain`, `description`, `criteria`,
and optionally `extends: <rubric>` to put another rubric's criteria first. A broken file
raises `RubricFileError` whose message names the field (and, for YAML, the line), e.g.
``criteria[2].pass_condition: field required (line 14)``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from santa_core.checks import check_config_errors, error_message
from santa_core.models import Rubric

RUBRIC_DIR = Path(__file__).parent / "rubrics"
MAX_RUBRIC_BYTES = 1_000_000
"""Larger rubric files are refused: a rubric is a short list, not a data dump."""

# name a user picks -> data files composed in order (base first)
_BUILTINS: dict[str, tuple[str, ...]] = {
    "general": ("base",),
    "content": ("base", "content"),
    "code": ("base", "code"),
    "compliance": ("base", "compliance"),
}
_EXTENDS_ALIASES = {"base": "general"}

Loc = tuple[str | int, ...]


class RubricFileError(ValueError):
    """A rubric file that cannot be loaded; `errors` holds one message per problem."""

    def __init__(self, errors: list[str]) -> None:
        super().__init__("; ".join(errors))
        self.errors = errors


class RubricCompositionError(ValueError):
    """Composing rubrics would give two criteria the same id."""


def builtin_names() -> list[str]:
    """Names of the built-in rubrics users can pick, "general" first."""
    return list(_BUILTINS)


def compose(base: Rubric, *extensions: Rubric) -> Rubric:
    """Base criteria then each extension's, in order; a repeated id is an error.

    Name, domain and description come from the last part. The version is the sum of the
    parts' versions minus (parts - 1): 1 when every part is v1, and it grows whenever any
    part's version grows.
    """
    parts = (base, *extensions)
    owner: dict[str, str] = {}
    for part in parts:
        for c in part.criteria:
            if c.id in owner:
                raise RubricCompositionError(
                    f"duplicate criterion id {c.id!r}: in {owner[c.id]} and in {part.name}"
                )
            owner[c.id] = part.name
    last = parts[-1]
    return Rubric(
        name=last.name,
        version=sum(p.version for p in parts) - (len(parts) - 1),
        domain=last.domain,
        description=last.description,
        criteria=[c.model_copy() for p in parts for c in p.criteria],
    )


def load_builtin(name: str) -> Rubric:
    """A built-in rubric by the name users pick (see `builtin_names`), composed."""
    if name not in _BUILTINS:
        raise KeyError(f"unknown built-in rubric {name!r} (known: {', '.join(_BUILTINS)})")
    parts = [_read_part(RUBRIC_DIR / f"{stem}.yaml") for stem in _BUILTINS[name]]
    return compose(*parts)


def load_rubric_file(path: str | Path) -> Rubric:
    """Load a YAML (.yaml/.yml) or JSON (.json) rubric file, resolving `extends`."""
    path = Path(path)
    fmt = "json" if path.suffix.lower() == ".json" else "yaml"
    return parse_rubric(_read_text(path), fmt)


def parse_rubric(text: str, fmt: str = "yaml") -> Rubric:
    """Parse rubric text ("yaml" or "json", e.g. an upload), resolving `extends`."""
    data, lines = _parse(text, fmt)
    rubric, extends = _validate(data, lines)
    if extends is None:
        return rubric
    parent = _extends_target(extends, lines)
    taken = set(parent.criterion_ids())
    clashes = [
        lines.label(("criteria", i, "id"), f"criterion id {c.id!r} is already in {parent.name}")
        for i, c in enumerate(rubric.criteria)
        if c.id in taken
    ]
    if clashes:
        raise RubricFileError(clashes)
    return compose(parent, rubric)


# --- internals ------------------------------------------------------------------------------


def _read_text(path: Path) -> str:
    """File text, refusing huge or non-UTF-8 files with a clear error."""
    try:
        if path.stat().st_size > MAX_RUBRIC_BYTES:
            raise RubricFileError([f"file is larger than {MAX_RUBRIC_BYTES} bytes"])
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise RubricFileError([f"file is not UTF-8 text: {exc}"]) from exc
    except OSError as exc:
        raise RubricFileError([f"cannot read {path}: {exc.strerror or exc}"]) from exc


def _read_part(path: Path) -> Rubric:
    """One built-in data file as a rubric, without resolving `extends`."""
    data, lines = _parse(_read_text(path), "yaml")
    return _validate(data, lines)[0]


class _Lines:
    """Maps a field location to a YAML line number (None for JSON)."""

    def __init__(self, node: yaml.Node | None) -> None:
        self.node = node

    def line(self, loc: Loc) -> int | None:
        """1-based line of the deepest node on `loc` that exists."""
        node = self.node
        if node is None:
            return None
        for key in loc:
            child = _child(node, key)
            if child is None:
                break
            node = child
        return node.start_mark.line + 1

    def label(self, loc: Loc, msg: str) -> str:
        """'criteria[2].pass_condition: field required (line 14)'."""
        line = self.line(loc)
        return f"{_dotted(loc)}: {msg}" + (f" (line {line})" if line else "")


def _child(node: yaml.Node, key: str | int) -> yaml.Node | None:
    """The value node under a mapping key or at a sequence index."""
    if isinstance(node, yaml.MappingNode) and isinstance(key, str):
        return next((v for k, v in node.value if getattr(k, "value", None) == key), None)
    if isinstance(node, yaml.SequenceNode) and isinstance(key, int) and 0 <= key < len(node.value):
        return node.value[key]
    return None


def _dotted(loc: Loc) -> str:
    """("criteria", 2, "pass_condition") -> "criteria[2].pass_condition"."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


def _parse(text: str, fmt: str) -> tuple[Any, _Lines]:
    """Parse YAML (keeping the node tree for line numbers) or JSON."""
    if fmt == "json":
        try:
            return json.loads(text), _Lines(None)
        except json.JSONDecodeError as exc:
            raise RubricFileError([f"invalid JSON: {exc.msg} (line {exc.lineno})"]) from exc
    # Why SafeLoader: a rubric file may come from anyone; safe_load never builds objects.
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise RubricFileError([f"invalid YAML: {problem}{where}"]) from exc
    finally:
        loader.dispose()
    return data, _Lines(node)


def _validate(data: Any, lines: _Lines) -> tuple[Rubric, str | None]:
    """Validate parsed data into a rubric; collect every problem with its location."""
    if not isinstance(data, dict):
        raise RubricFileError([lines.label((), "expected a mapping with name, version, criteria")])
    data = dict(data)
    extends = data.pop("extends", None)
    if extends is not None and not isinstance(extends, str):
        raise RubricFileError([lines.label(("extends",), "expected the name of a rubric")])
    try:
        rubric = Rubric.model_validate(data)
    except ValidationError as exc:
        raise RubricFileError([lines.label(tuple(e["loc"]), error_message(e)) for e in exc.errors()]) from exc
    errors = _semantic_errors(rubric, lines)
    if errors:
        raise RubricFileError(errors)
    return rubric, extends


def _semantic_errors(rubric: Rubric, lines: _Lines) -> list[str]:
    """Duplicate ids and invalid deterministic checks, located."""
    errors, seen = [], set()
    for i, c in enumerate(rubric.criteria):
        if c.id in seen:
            errors.append(lines.label(("criteria", i, "id"), f"duplicate criterion id {c.id!r}"))
        seen.add(c.id)
        if c.check is not None:
            errors += [
                lines.label(("criteria", i, "check", *loc), msg) for loc, msg in check_config_errors(c.check)
            ]
    return errors


def _extends_target(name: str, lines: _Lines) -> Rubric:
    """The built-in rubric an `extends:` names ("base" is an alias of "general")."""
    target = _EXTENDS_ALIASES.get(name, name)
    if target not in _BUILTINS:
        known = ", ".join([*_EXTENDS_ALIASES, *_BUILTINS])
        raise RubricFileError([lines.label(("extends",), f"unknown rubric {name!r} (known: {known})")])
    return load_builtin(target)
