"""The lexicon of every language the injection detector reads (`santa_core.checks.languages`), compiled.

Each language's words are data, one table a language in `lexicon/<iso>.toml`:

- `agents`: words that name an automated agent whatever the text ("language model", "KI", "ボット");
- `roles`: words a person can be too ("reviewer", "judge", "editor", "the board"); they name an automated agent
  beside a `qualifiers` word near them ("AI", "automated") or right before "this text" ("whoever is checking this
  copy");
- `directives`: imperatives aimed at the agent ("ignore", "mark", "zignoruj"); where the imperative looks like
  other forms of the verb (English "mark", Spanish "marca"), `clause_start` counts one only where a clause starts
  (the sentence's start, a comma, colon or dash, or a `leads` word such as "please" after one);
- `orders`: orders that need no position ("do not flag", "you must"); `overrides`: what an order sets aside
  ("previous instructions", "the rubric"); `duties`: third-person orders ("should mark", "soll");
- `verdicts`: the verdict words and states (PASS, approved, compliant, met, no issues, OK); `desk`: the desk's
  own words (criteria, rubric, verdict);
- `this_text`: the language's words for "this text" ("this copy", "dieser Text", "本文");
- `address`: what marks a vocative ("dear", "note to", "if you are").

Matching: one pattern per language (a prefix tree per word class, in named groups), compiled once. Tables in
`mode = "words"` read the text folded by `folding.fold` (NFKC, marks and invisibles dropped, case folded) and
match whole words ("*" ends a stem: any ending); `clitics` are letters that may be glued before a word (Arabic,
Hebrew). Tables in `mode = "substring"` (Japanese, Chinese, Korean, Thai: words touch) read the text NFKC-composed
and case-folded, and match anywhere but an ASCII word, which stays whole. A table's words are normalised as its
view is, so both sides compare equal; each view keeps an index back to the original, for the evidence. Every word
a rule uses lies within the table's `window` of the addressee and among its nearest neighbours (`languages`), so the
work per addressee is bounded and the layer runs in linear time.
"""

from __future__ import annotations

import tomllib
import unicodedata
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from santa_core.checks.bounded import Pattern, escape
from santa_core.checks.folding import fold

CLASSES = (
    "agents",
    "roles",
    "qualifiers",
    "overrides",
    "directives",
    "orders",
    "duties",
    "desk",
    "verdicts",
    "this_text",
    "address",
)
"""The word classes of a table, in the order the pattern tries them."""
_KEYS = frozenset(CLASSES) | {"language", "mode", "clause_start", "clitics", "leads", "window"}
_WINDOW = {"words": 300, "substring": 60}
"""How far (folded characters) an order, verdict or "this text" may stand from the addressee it goes with."""


@dataclass(frozen=True)
class Table:
    """One language's lexicon, compiled: one pattern whose named groups are the word classes."""

    iso: str
    mode: str
    pattern: Pattern
    clause_start: bool
    leads: frozenset[str]
    verdict_words: frozenset[str]
    address_words: frozenset[str]
    window: int
    trigger: Pattern
    """The words without which no sentence of the text can hit (an agent, a role, an override): a text with none of
    them is not read further by this table, so a long text that speaks to nobody costs one quick pass a table."""


def _normal(word: str, mode: str) -> str:
    """A table's word as its view writes it: folded (`words`) or composed (`substring`), one space between words."""
    if mode == "substring":
        return " ".join(unicodedata.normalize("NFKC", word).casefold().split())
    return _folded(word)


def _folded(word: str) -> str:
    """A table's word folded as the text is (case first, so a Greek or Cyrillic word's capitals fold as its small
    letters), one space between words."""
    return " ".join(fold(word, casefold=True, latin_first=False).text.split())


_STEM = "\x00stem"
_END = "\x00end"


def _trie(entries: list[list[str]]) -> dict[str, Any]:
    """The entries (each a list of tokens: characters, _STEM, then _END) as a prefix tree."""
    root: dict[str, Any] = {}
    for tokens in entries:
        node = root
        for token in tokens:
            node = node.setdefault(token, {})
    return root


def _emit(node: dict[str, Any], tail: str) -> str:
    """A prefix tree as a pattern: the literal branches first, then a stem's ending, then the word's end (so the
    longest entry wins, as in "bots" before "bot"). Why a tree: a list of a thousand words was tried word by word
    at every word start; the tree reads each character once."""
    branches = [escape(ch) + _emit(child, tail) for ch, child in sorted(node.items()) if not ch.startswith("\x00")]
    if _STEM in node:
        branches.append(r"\w*+" + _emit(node[_STEM], ""))
    if _END in node:
        branches.append(tail)
    if len(branches) == 1:
        return branches[0]
    return "(?:" + "|".join(branches) + ")"


def _tokens(word: str) -> list[str]:
    """A normalised entry as tokens: its characters, _STEM where a word of it ends in "*", and _END."""
    out: list[str] = []
    for i, part in enumerate(word.split(" ")):
        if i:
            out.append(" ")
        out.extend(part[:-1] if part.endswith("*") else part)
        if part.endswith("*"):
            out.append(_STEM)
    return [*out, _END]


def _alternation(words: list[str], mode: str, clitics: str) -> str:
    """The class's words as one pattern (a prefix tree): whole words, or stems with "*", or in `substring` mode
    anywhere but an ASCII word ("AI"), which stays whole (not inside "said"); `clitics` may stand before a word."""
    ascii_words: list[list[str]] = []
    other_words: list[list[str]] = []
    for raw in words:
        word = _normal(raw, mode)
        if word.replace("*", "").strip():
            (ascii_words if word.isascii() else other_words).append(_tokens(word))
    parts = []
    if mode == "substring":
        if ascii_words:
            parts.append(r"(?<![a-z0-9])" + _emit(_trie(ascii_words), r"(?![a-z0-9])"))
        if other_words:
            parts.append(_emit(_trie(other_words), ""))
    else:
        glue = f"[{escape(_folded(clitics))}]{{0,3}}" if clitics else ""
        if ascii_words:
            parts.append(_emit(_trie(ascii_words), r"(?!\w)"))
        if other_words:
            parts.append(glue + _emit(_trie(other_words), r"(?!\w)"))
    return "|".join(parts) or r"(?!)"


def _compile(iso: str, data: dict[str, Any]) -> Table:
    """A table's data as a `Table`; a key outside the format is refused (a misspelt class would match nothing)."""
    unknown = set(data) - _KEYS
    if unknown:
        raise ValueError(f"lexicon {iso}: unknown keys {sorted(unknown)}")
    mode = data.get("mode", "words")
    if mode not in _WINDOW:
        raise ValueError(f"lexicon {iso}: mode {mode!r} is not one of {sorted(_WINDOW)}")
    clitics = data.get("clitics", "")
    groups = [f"(?P<{name}>{_alternation(data.get(name, []), mode, clitics)})" for name in CLASSES]
    return Table(
        iso=iso,
        mode=mode,
        # Why one word start before the groups: a lookbehind in each of a thousand alternatives is tried at every
        # character; once in front, the engine leaves a position inside a word at once.
        pattern=Pattern("|".join(groups) if mode == "substring" else rf"(?<!\w)(?:{'|'.join(groups)})"),
        clause_start=bool(data.get("clause_start", False)),
        leads=frozenset(_folded(w) for w in data.get("leads", [])),
        verdict_words=frozenset(_normal(w, mode) for w in data.get("verdicts", [])),
        address_words=frozenset(_normal(w, mode) for w in data.get("address", []) if " " not in w),
        window=int(data.get("window", _WINDOW[mode])),
        trigger=_trigger(data, mode, clitics),
    )


_TRIGGERS = ("agents", "roles", "overrides")
"""The classes a hit needs one of (`_judge`: an addressee, carried or not; `_overridden`: an override)."""


def _trigger(data: dict[str, Any], mode: str, clitics: str) -> Pattern:
    """The pattern of a table's TRIGGERS classes alone, bounded as the table's own."""
    words = "|".join(f"(?:{_alternation(data.get(name, []), mode, clitics)})" for name in _TRIGGERS if data.get(name))
    words = words or "(?!)"
    return Pattern(words if mode == "substring" else rf"(?<!\w)(?:{words})")


@cache
def tables() -> dict[str, Table]:
    """Every language's table in lexicon/, by ISO code, compiled once per process."""
    found: dict[str, Table] = {}
    for entry in sorted(resources.files("santa_core.checks").joinpath("lexicon").iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".toml"):
            iso = entry.name.removesuffix(".toml")
            found[iso] = _compile(iso, tomllib.loads(entry.read_text(encoding="utf-8")))
    return found
