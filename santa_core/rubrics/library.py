"""Built-in rubrics (data files in `rubrics/`), rubric documents, composition, files.

A rubric file is YAML or JSON with `name`, `version`, `domain`, `description`, `criteria`,
and optionally `extends` (a rubric name, "name@version", or a list of them) to put other
rubrics' criteria first. A broken file raises `RubricFileError` whose message names the field
and the line, e.g. ``criteria[2].pass_condition: field required (line 14)``.

Resolution goes through a `Lookup` (name, version or None for the latest) -> (document,
resolved rubric): the built-ins here, or the stored versions in `storage`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from santa_core.checks import check_config_errors, error_message
from santa_core.models import Criterion, Rubric, RubricDocument

RUBRIC_DIR = Path(__file__).parent / "builtin"
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
Lookup = Callable[[str, int | None], tuple[RubricDocument, Rubric]]
"""(name, version or None for the latest) -> (that version's document, resolved); KeyError if none."""


class RubricFileError(ValueError):
    """A rubric file that cannot be loaded; `errors` holds one message per problem."""

    def __init__(self, errors: list[str]) -> None:
        super().__init__("; ".join(errors))
        self.errors = errors


class RubricCompositionError(ValueError):
    """Resolving a rubric would give two different criteria the same id."""


def builtin_names() -> list[str]:
    """Names of the built-in rubrics users can pick, "general" first."""
    return list(_BUILTINS)


def load_builtin(name: str) -> Rubric:
    """A built-in rubric by the name users pick (see `builtin_names`), resolved."""
    return builtin_lookup(name, None)[1]


def builtin_documents() -> list[RubricDocument]:
    """The built-in rubrics as version-1 documents, parents first (the seed of a new database)."""
    return [_builtin_document(name).model_copy(deep=True) for name in _BUILTINS]  # copies: the parse is kept


def builtin_lookup(name: str, version: int | None) -> tuple[RubricDocument, Rubric]:
    """Resolve a built-in by name (version None or 1); KeyError for anything else."""
    name = _EXTENDS_ALIASES.get(name, name)
    if name not in _BUILTINS or version not in (None, 1):
        known = ", ".join(f"{n}@1" for n in _BUILTINS)
        raise KeyError(f"unknown rubric {_ref(name, version)!r} (known: {known})")
    doc = _builtin_document(name).model_copy(deep=True)  # a copy: callers may change what they get
    return doc, resolve(doc, builtin_lookup)


def load_rubric_file(path: str | Path, lookup: Lookup | None = None) -> Rubric:
    """Load a YAML (.yaml/.yml) or JSON (.json) rubric file, resolved against `lookup`."""
    path = Path(path)
    return parse_rubric(read_rubric_text(path), format_of(path), lookup)


def format_of(path: str | Path) -> str:
    """ "json" for a .json file, else "yaml"."""
    return "json" if Path(path).suffix.lower() == ".json" else "yaml"


def parse_rubric(text: str, fmt: str = "yaml", lookup: Lookup | None = None) -> Rubric:
    """Parse rubric text ("yaml" or "json", e.g. an upload) and resolve what it extends."""
    return resolve(read_document(text, fmt, lookup), lookup or builtin_lookup)


def read_document(text: str, fmt: str = "yaml", lookup: Lookup | None = None) -> RubricDocument:
    """Parse and check a rubric file; `extends` is pinned to versions; errors name field and line.

    Checks beyond the schema: duplicate ids, checks that cannot run, parents that do not exist,
    ids that clash with a parent's, and a rubric left with no active criterion.
    """
    data, lines = _parse(text, fmt)
    return _checked(_validate(data, lines), lookup or builtin_lookup, lines)


def check_document(doc: RubricDocument, lookup: Lookup | None = None) -> RubricDocument:
    """The checks of `read_document` for a document built in code (the editor): pinned, or RubricFileError."""
    return _checked(doc, lookup or builtin_lookup, _Lines(None))


def _checked(doc: RubricDocument, lookup: Lookup, lines: _Lines) -> RubricDocument:
    errors = _semantic_errors(doc, lines)
    if errors:
        raise RubricFileError(errors)
    pinned, parents = _pin(doc, lookup, lines)
    _check_against_parents(pinned, parents, lines)
    return pinned


def resolve(doc: RubricDocument, lookup: Lookup) -> Rubric:
    """Parents' criteria (each shared ancestor once), then the document's own active ones."""
    criteria: list[Criterion] = []
    owner: dict[str, str] = {}
    for ref in doc.extends:
        name, version = split_ref(ref)
        for c in lookup(name, version)[1].criteria:
            _add_once(criteria, owner, c, ref)
    for c in doc.criteria:
        if not c.retired:
            _add_once(criteria, owner, c, doc.name)
    if not criteria:
        raise RubricFileError(["criteria: a rubric needs at least one active criterion"])
    return Rubric(
        name=doc.name,
        version=doc.version,
        domain=doc.domain,
        description=doc.description,
        criteria=[c.model_copy() for c in criteria],
    )


def split_ref(ref: str) -> tuple[str, int | None]:
    """ "general@2" -> ("general", 2); "general" -> ("general", None)."""
    name, sep, version = ref.partition("@")
    if not sep:
        return name, None
    if not version.isdigit() or int(version) < 1:
        raise ValueError(f"bad rubric reference {ref!r}: expected name@version, e.g. general@1")
    return name, int(version)


def _ref(name: str, version: int | None) -> str:
    return name if version is None else f"{name}@{version}"


def document_data(doc: RubricDocument) -> dict[str, Any]:
    """The canonical mapping of a document (the documented file schema), in a fixed key order."""
    data: dict[str, Any] = {
        "name": doc.name,
        "version": doc.version,
        "domain": doc.domain,
        "description": doc.description,
    }
    if doc.extends:
        data["extends"] = list(doc.extends)
    data["criteria"] = [_criterion_data(c) for c in doc.criteria]
    return data


def _criterion_data(c: Criterion) -> dict[str, Any]:
    """One criterion in file order; `check` keys with `type` first, `retired` and `third_reviewer` only when true."""
    out: dict[str, Any] = {
        "id": c.id,
        "name": c.name,
        "category": c.category,
        "severity": c.severity,
        "pass_condition": c.pass_condition,
        "fail_signal": c.fail_signal,
    }
    if c.check is not None:
        out["check"] = {"type": c.check.get("type"), **{k: _whole(c.check[k]) for k in sorted(c.check) if k != "type"}}
    if c.retired:
        out["retired"] = True
    if c.third_reviewer:  # only when true: a version without it keeps its bytes, and so its content hash
        out["third_reviewer"] = True
    return out


def _whole(value: Any) -> Any:
    """12.0 -> 12: a limit typed as a whole number in a file or a form is the same limit, stored one way."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


def export_document(doc: RubricDocument, fmt: str = "yaml") -> str:
    """The document as YAML or JSON text; exporting, importing and exporting again gives the same bytes."""
    data = document_data(doc)
    if fmt == "json":
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    if fmt != "yaml":
        raise ValueError(f"unknown format {fmt!r} (yaml or json)")
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100, default_flow_style=False)


class _Dumper(yaml.SafeDumper):
    """SafeDumper that writes multi-line text as a literal block, as an author would type it."""


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    # Why double quotes for U+0085 (NEL, e.g. a cp1252 "…" read as Latin-1): PyYAML writes it raw
    # in plain, single-quoted and block scalars, where it reads back as a line break; only
    # double quotes escape it, so export -> import keeps the text.
    style = '"' if "\x85" in value else "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str)


def content_key(doc: RubricDocument) -> str:
    """What makes two versions the same rubric: every field except the version number."""
    data = document_data(doc)
    data.pop("version")
    return json.dumps(data, sort_keys=True, ensure_ascii=False)


# --- internals ------------------------------------------------------------------------------


def read_rubric_text(path: Path) -> str:
    """File text, refusing huge or non-UTF-8 files with a clear error."""
    try:
        if path.stat().st_size > MAX_RUBRIC_BYTES:
            raise RubricFileError([f"file is larger than {MAX_RUBRIC_BYTES} bytes"])
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise RubricFileError([f"file is not UTF-8 text: {exc}"]) from exc
    except OSError as exc:
        raise RubricFileError([f"cannot read {path}: {exc.strerror or exc}"]) from exc


@cache
def _builtin_document(name: str) -> RubricDocument:
    """A built-in as a document: its own data file, extending the parts before it (pinned @1); parsed once per
    process (the files ship with the code; YAML takes 11 ms for the four), shared, so callers take a copy."""
    *parents, own = _BUILTINS[name]
    data, lines = _parse(read_rubric_text(RUBRIC_DIR / f"{own}.yaml"), "yaml")
    doc = _validate({**data, "extends": [f"{_EXTENDS_ALIASES.get(p, p)}@1" for p in parents]}, lines)
    return doc.model_copy(update={"name": name})


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
    """Parse YAML (keeping the node tree for line numbers) or JSON; a UTF-8 byte-order mark is ignored."""
    text = text.removeprefix("\ufeff")
    if fmt == "json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise RubricFileError([f"invalid JSON: {exc.msg} (line {exc.lineno})"]) from exc
        nodes = _json_nodes(text)
        errors = _duplicate_keys(nodes, _Lines(nodes))
        if errors:
            raise RubricFileError(errors)
        return data, _Lines(nodes)
    # Why SafeLoader: a rubric file may come from anyone; safe_load never builds objects.
    loader = None
    try:
        loader = _NoAliasLoader(text)  # the reader refuses control characters here already
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
    except yaml.reader.ReaderError as exc:
        line = text[: exc.position].count("\n") + 1
        code = exc.character if isinstance(exc.character, int) else ord(str(exc.character)[:1] or "?")
        raise RubricFileError(
            [
                f"invalid YAML: character U+{code:04X} is not allowed in a YAML file; "
                f"remove it or write it as an escape in double quotes (line {line})"
            ]
        ) from exc
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise RubricFileError([f"invalid YAML: {problem}{where}"]) from exc
    finally:
        if loader is not None:
            loader.dispose()
    errors = _duplicate_keys(node, _Lines(node))
    if errors:
        raise RubricFileError(errors)
    return data, _Lines(node)


class _NoAliasLoader(yaml.SafeLoader):
    """SafeLoader that refuses aliases (*name): a rubric never needs one, and a few thousand aliases
    of one long anchor make a small file expand into a huge one."""

    def compose_node(self, parent: yaml.Node | None, index: object) -> yaml.Node | None:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise yaml.composer.ComposerError(
                None, None, "aliases (*name) are not allowed in a rubric file", event.start_mark
            )
        # PyYAML's stubs type compose_node's parent as a Node, though the composer passes None at the root
        return super().compose_node(parent, index)  # type: ignore[arg-type]


def _json_nodes(text: str) -> yaml.Node | None:
    """YAML's node tree of a JSON text, for line numbers only (JSON is nearly a subset of YAML)."""
    # Tabs and characters YAML refuses become spaces: same lines, and only lines are wanted here.
    text = re.sub(
        r"[^\n\x20-\x7e\u00a0-\ud7ff\ue000-\ufffd]|[\u2028\u2029]", " ", text
    )  # YAML breaks lines at U+2028/9
    loader = None
    try:
        loader = yaml.SafeLoader(text)
        return loader.get_single_node()
    except yaml.YAMLError:
        return None  # messages then carry the field without a line
    finally:
        if loader is not None:
            loader.dispose()


def _duplicate_keys(node: yaml.Node | None, lines: _Lines, loc: Loc = ()) -> list[str]:
    """A key given twice in one mapping (YAML and JSON would silently keep the last one)."""
    errors: list[str] = []
    if isinstance(node, yaml.MappingNode):
        seen: set[str] = set()
        for key, value in node.value:
            name = str(getattr(key, "value", ""))
            if name in seen:
                where = f" (line {key.start_mark.line + 1})"
                errors.append(f"{_dotted((*loc, name))}: given twice; keep one{where}")
            seen.add(name)
            errors += _duplicate_keys(value, lines, (*loc, name))
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            errors += _duplicate_keys(item, lines, (*loc, i))
    return errors


def _validate(data: Any, lines: _Lines) -> RubricDocument:
    """Validate parsed data into a document; collect every problem with its location."""
    if not isinstance(data, dict):
        raise RubricFileError([lines.label((), "expected a mapping with name, version, criteria")])
    data = dict(data)
    if isinstance(data.get("extends"), str):
        data["extends"] = [data["extends"]]
    try:
        doc = RubricDocument.model_validate(data)
    except ValidationError as exc:
        raise RubricFileError([lines.label(tuple(e["loc"]), _message(e)) for e in exc.errors()]) from exc
    return doc


def _message(err: Any) -> str:
    """Schema messages in an author's words; the name pattern is spelled out."""
    if err["loc"] == ("name",) and err["type"] == "string_pattern_mismatch":
        return "a rubric name is lower-case letters, digits, '-' and '_' (at most 64), e.g. acme-compliance"
    return error_message(err)


def _semantic_errors(doc: RubricDocument, lines: _Lines) -> list[str]:
    """Duplicate ids, invalid deterministic checks and malformed `extends` entries, located."""
    errors, seen = [], set()
    if doc.name in _EXTENDS_ALIASES:
        errors.append(
            lines.label(
                ("name",),
                f"{doc.name!r} is reserved (in extends it means {_EXTENDS_ALIASES[doc.name]}); pick another name",
            )
        )
    for i, ref in enumerate(doc.extends):
        try:
            split_ref(ref)
        except ValueError as exc:
            errors.append(lines.label(("extends", i), str(exc)))
    for i, c in enumerate(doc.criteria):
        errors += [
            lines.label(("criteria", i, f), "must not be blank")
            for f in ("name", "category", "pass_condition", "fail_signal")
            if not getattr(c, f).strip()
        ]
        if c.id in seen:
            errors.append(lines.label(("criteria", i, "id"), f"duplicate criterion id {c.id!r}"))
        seen.add(c.id)
        if c.check is not None:
            errors += [lines.label(("criteria", i, "check", *loc), msg) for loc, msg in check_config_errors(c.check)]
    return errors


def _pin(doc: RubricDocument, lookup: Lookup, lines: _Lines) -> tuple[RubricDocument, list[Rubric]]:
    """Each `extends` entry as "name@version" of an existing rubric, and the resolved parents."""
    pinned, parents, errors = [], [], []
    for i, ref in enumerate(doc.extends):
        name, version = split_ref(ref)
        try:
            parent_doc, parent = lookup(name, version)
        except KeyError as exc:
            errors.append(lines.label(("extends", i), str(exc.args[0]) if exc.args else f"unknown rubric {ref!r}"))
            continue
        if parent_doc.name == doc.name:
            errors.append(lines.label(("extends", i), f"a rubric cannot extend itself ({ref!r})"))
            continue
        pinned.append(f"{parent_doc.name}@{parent_doc.version}")
        parents.append(parent)
        taken = {c.id for c in parent_doc.criteria if c.retired}
        errors += [
            lines.label(
                ("criteria", j, "id"),
                f"criterion id {c.id!r} is retired in {pinned[-1]}; retired ids stay reserved, so pick another id",
            )
            for j, c in enumerate(doc.criteria)
            if c.id in taken
        ]
    if errors:
        raise RubricFileError(errors)
    return doc.model_copy(update={"extends": pinned}), parents


def _check_against_parents(doc: RubricDocument, parents: list[Rubric], lines: _Lines) -> None:
    """Own ids must not clash with a parent's, parents must agree, and something must be judged."""
    owner: dict[str, Criterion] = {}
    errors = []
    for ref, parent in zip(doc.extends, parents, strict=True):
        for c in parent.criteria:
            if c.id in owner and owner[c.id] != c:
                errors.append(
                    lines.label(
                        ("extends",),
                        (
                            f"{ref} and another parent define criterion {c.id!r} differently: one of them was "
                            "built on an older version of a shared parent; save it on the newer version first, "
                            "or keep the parents pinned"
                        ),
                    )
                )
            owner.setdefault(c.id, c)
    for i, c in enumerate(doc.criteria):
        if c.id in owner:
            named = next(r for r, p in zip(doc.extends, parents, strict=True) if c.id in p.criterion_ids())
            errors.append(lines.label(("criteria", i, "id"), f"criterion id {c.id!r} is already in {named}"))
    if not errors and not owner and all(c.retired for c in doc.criteria):
        errors.append(lines.label(("criteria",), "a rubric needs at least one active criterion"))
    if errors:
        raise RubricFileError(errors)


def _add_once(criteria: list[Criterion], owner: dict[str, str], c: Criterion, source: str) -> None:
    """Append a criterion; the same criterion twice (a shared ancestor) is kept once, a clash is an error."""
    if c.id in owner:
        if next(x for x in criteria if x.id == c.id) != c:
            raise RubricCompositionError(f"duplicate criterion id {c.id!r}: in {owner[c.id]} and in {source}")
        return
    owner[c.id] = source
    criteria.append(c)
