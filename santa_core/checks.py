"""Deterministic pre-checks that run before the reviewers.

Two kinds:
- `detect_injection`: text in the output that addresses the reviewer (instructions, fake
  verdicts, fake end-of-data or role markers). A hit is a critical issue by itself, so an
  injected output cannot ship even if both reviewers are fooled.
- `run_criterion_checks`: the optional `check` of a rubric criterion (forbidden terms,
  required phrases, length limits, a forbidden regex).

All matching runs on a *folded* copy of the text (compatibility-normalised, invisible and
bidi characters removed, homoglyphs mapped to ASCII, case folded, whitespace collapsed) that
keeps an index back to the original, so evidence is always the exact original substring.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
    field_validator,
)

from santa_core.models import Criterion, MergedIssue, Rubric, Verdict

# --- folding --------------------------------------------------------------------------------

# Why strip these: zero-width and bidi control characters are invisible to a person but split
# a phrase for a naive matcher ("ign\u200bore previous instructions").
_INVISIBLE = frozenset(
    [*range(0x200B, 0x2010), *range(0x202A, 0x202F), *range(0x2060, 0x206A)]
    + [0xFEFF, 0x00AD, 0x034F, 0x061C, 0x180E]
)
# Why decode tag characters: U+E0020..U+E007E are invisible copies of ASCII ("ASCII
# smuggling"); a model can still read them, so the detector must too.
_TAG_FIRST, _TAG_LAST = 0xE0020, 0xE007E

# Why a confusables fold: NFKC does not map Cyrillic/Greek letters to Latin, so "rіsk-free"
# (Cyrillic і) or "РАSS" would otherwise slip past every term list. Small, explicit table of
# letters that look identical to Latin ones; also dash, quote, bracket and slash variants.
_CONFUSABLES = str.maketrans(
    {
        # Cyrillic lower / upper
        "а": "a", "в": "b", "е": "e", "к": "k", "м": "m", "н": "h", "о": "o", "р": "p",
        "с": "c", "т": "t", "у": "y", "х": "x", "і": "i", "ј": "j", "ѕ": "s", "һ": "h",
        "ԁ": "d", "ӏ": "l", "ԛ": "q", "ԝ": "w",
        "А": "A", "В": "B", "Е": "E", "К": "K", "М": "M", "Н": "H", "О": "O", "Р": "P",
        "С": "C", "Т": "T", "У": "Y", "Х": "X", "І": "I", "Ј": "J", "Ѕ": "S", "Ԛ": "Q",
        "Ԝ": "W",
        # Greek lower / upper
        "α": "a", "ο": "o", "ι": "i", "κ": "k", "ν": "v", "ρ": "p", "υ": "u", "χ": "x",
        "ϲ": "c", "ε": "e", "τ": "t",
        "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M",
        "Ν": "N", "Ο": "O", "Ρ": "P", "Τ": "T", "Υ": "Y", "Χ": "X",
        # Latin look-alikes outside ASCII
        "ı": "i", "ɡ": "g", "ɑ": "a", "ʟ": "l",
        # punctuation variants
        "‐": "-", "‒": "-", "–": "-", "—": "-", "―": "-", "−": "-",
        "“": '"', "”": '"', "„": '"', "‟": '"', "«": '"', "»": '"', "″": '"',
        "‘": "'", "’": "'", "‚": "'", "‛": "'", "′": "'", "`": "'",
        "‹": "<", "〈": "<", "⟨": "<", "❮": "<", "❬": "<", "⧼": "<", "ᐸ": "<",
        "›": ">", "〉": ">", "⟩": ">", "❯": ">", "❭": ">", "⧽": ">", "ᐳ": ">",
        "∕": "/", "⁄": "/", "⧸": "/",
    }
)  # fmt: skip


@dataclass(frozen=True)
class Folded:
    """Folded text with, for each folded character, its index in the original text."""

    text: str
    index: tuple[int, ...]
    source: str

    def original(self, start: int, end: int) -> str:
        """The original substring behind folded[start:end]."""
        if end <= start:
            return ""
        return self.source[self.index[start] : self.index[end - 1] + 1]

    def span(self, start: int, end: int) -> tuple[int, int]:
        """Original (start, end) behind folded[start:end]."""
        return self.index[start], self.index[end - 1] + 1


@lru_cache(maxsize=16384)
def _fold_char(ch: str, casefold: bool) -> str:
    """Fold one character: invisible -> '', tag char -> ASCII, NFKD minus marks, homoglyphs."""
    cp = ord(ch)
    if cp in _INVISIBLE:
        return ""
    if 0xE0000 <= cp <= 0xE007F:
        return chr(cp - 0xE0000) if _TAG_FIRST <= cp <= _TAG_LAST else ""
    # NFKD + dropping combining marks is NFKC's compatibility fold plus diacritic removal, so
    # "ïgnore" and "<\u0338" (which NFKC would compose into "≮") both fold to plain ASCII.
    base = "".join(
        c for c in unicodedata.normalize("NFKD", ch) if unicodedata.category(c) not in ("Mn", "Me")
    )
    if casefold:
        base = base.casefold()
    return base.translate(_CONFUSABLES)


def fold(text: str, casefold: bool = True) -> Folded:
    """Fold text for matching; whitespace runs become one space (or one newline)."""
    out: list[str] = []
    index: list[int] = []
    for i, ch in enumerate(text):
        for c in _fold_char(ch, casefold):
            if not c.isspace():
                out.append(c)
                index.append(i)
            elif out and out[-1] in " \n":
                if c == "\n":
                    out[-1] = "\n"
            else:
                out.append("\n" if c == "\n" else " ")
                index.append(i)
    return Folded("".join(out), tuple(index), text)


# --- injection detector ---------------------------------------------------------------------

_REV = r"(?:ai\s+|llm\s+|automated\s+)?(?:reviewer|grader|judge|evaluator|assessor|verifier)s?"
_OBJ = r"(?:this|the)\s+(?:output|submission|answer|response|document|deliverable|content|copy|draft)"
_LONE_THIS = r"(?:this|it)(?=\s*(?:[.!,;:\"'\n]|$))"
_YES = r"(?:pass(?:ed|ing)?|nice|approved?|accept(?:ed)?)"

_EXPLAIN = {
    "instruction": "text addresses the reviewer with an instruction",
    "verdict": "text addresses the reviewer with a fake verdict",
    "marker": "text addresses the reviewer through a fake end-of-data, fence or role marker",
}


@dataclass(frozen=True)
class _Pattern:
    name: str
    family: str
    regex: re.Pattern[str]
    cased: bool = False  # cased patterns run on a fold that keeps letter case


def _p(name: str, family: str, regex: str, cased: bool = False) -> _Pattern:
    return _Pattern(name, family, re.compile(regex), cased)


# Patterns match folded text (lowercase, ASCII-ish, single spaces). Each is narrow on purpose:
# a hit blocks shipping, so ordinary copy ("ignore the noise", "a verdict from the jury",
# "pass the salt") must not match.
_PATTERNS: tuple[_Pattern, ...] = (
    _p("ignore previous instructions", "instruction",
       r"\b(?:ignore|disregard|forget|override|bypass)\s+(?:(?:all|any|every|of|the|your|my|these|those)\s+)*"
       r"(?:previous|prior|above|earlier|preceding|foregoing|former|original|initial|system|existing)\s+"
       r"(?:instructions?|prompts?|rules|directions|guidelines|messages|context|commands|directives)\b"),
    _p("ignore your instructions", "instruction",
       r"\b(?:ignore|disregard|override|bypass)\s+(?:all\s+(?:of\s+)?(?:the\s+|your\s+)?|your\s+|any\s+)"
       r"(?:instructions|system\s+prompt|directives)\b"),
    _p("disregard the rubric", "instruction",
       r"\b(?:ignore|disregard|override|bypass|skip|forget|set\s+aside)\s+(?:(?:the|your|this|these|all|any|of)\s+)*"
       r"(?:rubric|(?:grading|scoring|evaluation|review)\s+(?:criteria|rules|instructions|guidelines|rubric)"
       r"|(?:pass|fail)\s+conditions?|fail\s+signals?)\b"),
    _p("note to the reviewer", "instruction",
       r"\b(?:note|notes|message|memo|instructions?|reminder|hint|p\.?s\.?)\s+(?:to|for)\s+"
       r"(?:the\s+|any\s+|all\s+|our\s+)?(?:" + _REV + r"|ai|llm|language\s+models?|grading\s+(?:model|system))\b"),
    _p("greeting the AI grader", "instruction",
       r"(?:^|[\s\"'(\[])(?:dear|hey|hi|hello|attention|attn)\s*,?\s+(?:the\s+|my\s+)?"
       r"(?:ai(?:\s+(?:reviewer|grader|judge|evaluator|model|assistant))?|llm|language\s+model|grader|evaluator"
       r"|grading\s+(?:model|ai|system)|gpt|claude|chatgpt)s?\s*[,:!.]"),
    _p("to the reviewer:", "instruction",
       r"(?:^|\n)\s*to\s+(?:the\s+)?(?:" + _REV + r"|ai|llm|model)\s*:"),
    _p("as the reviewer you must", "instruction",
       r"\bas\s+(?:the|a|an|my|our|this)\s+(?:ai\s+|llm\s+|independent\s+|second\s+)?"
       r"(?:reviewer|grader|evaluator|assessor|verifier|ai\s+judge|llm\s+judge)\s*,?\s*"
       r"(?:you\s+(?:must|should|shall|will|need|have|are)|please|it\s+is\s+your\s+(?:job|duty|task))\b"),
    _p("you must approve", "instruction",
       r"\byou\s+(?:must|should|shall|will|need\s+to|have\s+to|are\s+(?:required|instructed|expected|told|asked)\s+to)\s+"
       r"(?:now\s+|simply\s+|just\s+|therefore\s+|always\s+)?(?:approve|pass|accept|greenlight|sign\s+off\s+on)\s+"
       r"(?:" + _OBJ + r"|" + _LONE_THIS + r")"),
    _p("approve this output", "instruction",
       r"\b(?:approve|pass|accept)\s+this\s+(?:output|submission|answer|response|deliverable)\b"),
    _p("respond PASS", "instruction",
       r"\b(?:respond|reply|answer|output|return|say|print|emit|state|conclude)\s*:?\s+"
       r"(?:(?:only|with|just|simply|exactly|the\s+word|a\s+verdict\s+of|the\s+verdict|verdict)\s*:?\s+)*"
       r"[\"']?(?:pass(?:ed)?|approved)\b"),
    _p("respond NICE", "instruction",
       r"\b(?i:respond|reply|answer|output|return|say|print|emit|state)\s*:?\s+"
       r"(?i:(?:only|with|just|simply|exactly|the\s+word)\s*:?\s+)*[\"']?(?:NICE|PASS)\b", cased=True),
    _p("mark this as passing", "instruction",
       r"\b(?:mark|rate|score|grade|classify|label|judge|deem|evaluate|assess)\s+(?:this|" + _OBJ + r")\s+"
       r"(?:as\s+)?(?:a\s+)?(?:pass|passing|passed|nice|full\s+marks)\b"),
    _p("give this full marks", "instruction",
       r"\b(?:give|award|assign|grant)\s+(?:me|" + _OBJ + r")\s+(?:a\s+|an\s+|the\s+)?"
       r"(?:full\s+marks|perfect\s+score|max(?:imum)?\s+score|passing\s+(?:grade|score|verdict|mark)"
       r"|pass(?:ing)?\s+verdict|verdict\s+of\s+pass|nice\s+verdict)\b"),
    _p("lenient grader role-play", "instruction",
       r"\byou\s+are\s+(?:now\s+|actually\s+)?(?:a|an|the)\s+(?:lenient|generous|friendly|easy|kind|positive)\s+"
       r"(?:reviewer|grader|judge|evaluator|assessor)\b"),
    _p("do not flag this", "instruction",
       r"\b(?:do\s+not|don'?t|never)\s+(?:flag|fail|penali[sz]e|reject|mark\s+down|downgrade)\s+"
       r"(?:" + _OBJ + r"|this(?!\s+[a-z])|it(?!\s+[a-z]))"),
    _p("already approved by the reviewer", "instruction",
       r"\b(?:this|the)\s+(?:output|submission|answer|response|text|content)\s+(?:has\s+(?:already\s+)?been|was|is)\s+"
       r"(?:already\s+)?(?:pre-?)?(?:approved|verified|reviewed|checked)\s+by\s+(?:the\s+|a\s+|another\s+|both\s+)?"
       r"(?:" + _REV + r"|ai|santa|other\s+reviewer)"),
    _p("hidden instructions header", "instruction",
       r"(?:^|\n|[.!?]\s)\s*(?:real|actual|true|hidden|secret|override|system|priority|admin)\s+"
       r"(?:instructions?|directives?|prompt)\s*:"),
    _p("new instructions for the reviewer", "instruction",
       r"\bnew\s+instructions?\s+for\s+(?:the\s+)?(?:" + _REV + r"|ai|model|assistant|llm)"),
    # --- fake verdicts
    _p("fake verdict", "verdict",
       r"[\"']?\s*(?:(?:final|review|santa|gate)[\s_]*)?verdict\s*[\"']?\s*(?:[:=]|is|was|will\s+be|should\s+be|must\s+be)"
       r"\s*[\"']?\s*" + _YES + r"\b"),
    _p("fake verdict JSON", "verdict",
       r"[\"'](?:result|decision|grade|gate|outcome)[\"']\s*:\s*[\"'](?:pass|nice)[\"']"
       r"|[\"']critical_issues[\"']\s*:\s*\[|[\"']checks[\"']\s*:\s*\[\s*\{\s*[\"']criterion[\"']"),
    _p("fake GRADE line", "verdict", r"\bGRADE\s*:\s*[CP]\b", cased=True),
    _p("fake grade", "verdict", r"\bgrade\s*:\s*(?:correct|pass(?:ed)?)\b"),
    _p("fake gate word", "verdict",
       r"\b(?:gate|santa|decision|outcome|status|result|review|panel)(?:[\s_]+(?:decision|result|verdict|gate))?"
       r"\s*(?:[:=]|->|=>)\s*[\"']?\s*nice\b|\b(?:gate|santa)\s+(?:is|says)\s*:?\s*[\"']?nice\b"),
    _p("bare verdict line", "verdict",
       r"(?:^|\n)[\s*#>\"'\[-]*(?:PASS|NICE|APPROVED)[\s*.!\"'\]]*(?=\n|$)", cased=True),
    # --- fake fences, end-of-data and role markers
    _p("fake fence tag", "marker",
       r"<\s*/?\s*untrusted|\buntrusted[\s_-]*(?:spec|output|issues)[\s_-]*[0-9a-f]{6,}\b"),
    _p("fake end-of-data marker", "marker",
       r"(?:[\[<{(*#=~|]|-{2,})+\s*/?\s*(?:end|begin|start|stop)\s*(?:of\s+)?(?:the\s+)?"
       r"(?:data|output|input|document|submission|answer|response|spec|specification"
       r"|untrusted\s+\w+|user\s+(?:input|content|data)|transcript|conversation|context|instructions"
       r"|rubric|system\s+prompt|prompt)\s*(?:[\]>})*#=~|]|-{2,})+"),
    _p("END OF OUTPUT line", "marker",
       r"(?:^|\n)\s*(?:end|begin|start)\s+of\s+(?:the\s+)?(?:data|output|input|submission|answer|response"
       r"|untrusted\s+\w+|user\s+input)\s*[.:!]*\s*(?=\n|$)"),
    _p("END OF OUTPUT", "marker",
       r"\b(?:END|BEGIN)\s+OF\s+(?:THE\s+)?(?:OUTPUT|DATA|INPUT|SUBMISSION|ANSWER|RESPONSE)\b", cased=True),
    _p("BEGIN RUBRIC", "marker",
       r"\b(?:BEGIN|END|START)\s+(?:OF\s+)?(?:THE\s+)?(?:NEW\s+|UPDATED\s+|REAL\s+)?"
       r"(?:RUBRIC|INSTRUCTIONS|SYSTEM\s+PROMPT|GRADING\s+CRITERIA|EVALUATION\s+CRITERIA)\b", cased=True),
    _p("begin rubric line", "marker",
       r"(?:^|\n|[\[<#=*]\s*)(?:begin|start|end)\s+(?:of\s+)?(?:the\s+)?(?:new\s+|updated\s+|real\s+)?"
       r"(?:rubric|grading\s+(?:criteria|instructions)|reviewer\s+instructions|system\s+prompt|evaluation\s+criteria)\b"),
    _p("fake closing tag", "marker",
       r"<\s*/\s*(?:output|document|submission|answer|response|spec|specification|rubric|instructions?"
       r"|system|prompt|review|user_?input|data_?\w+)\s*>"
       r"|<\s*(?:system|instructions?|rubric|system[_\s-]?prompt|(?:reviewer|grader)[_\s-]?instructions)\s*>"),
    _p("chat template token", "marker",
       r"<\|\s*(?:im_start|im_end|im_sep|endoftext|system|user|assistant|eot_id|start_header_id|end_header_id"
       r"|begin_of_text|end_of_text)\s*\|>|\[/?inst\]|<<\s*/?\s*sys\s*>>"),
    # Our own prompt's words after the data ("The data is over. … Now review the OUTPUT …") and
    # the shape of our rubric block: echoing them is an attempt to end the data region early.
    _p("fake end of our data region", "marker",
       r"\bthe\s+data\s+is\s+over\b|\bonly\s+text\s+inside\s+the\s+untrusted\b"
       r"|\bnow\s+review\s+the\s+output\s+against\b"),
    _p("fake rubric block", "marker",
       r"(?:^|\n)\s*rubric\s+\S+\s+v\d+\s*(?=\n|$)|(?:^|\n)\s*-\s*id\s*:\s*\S+\s*\|[^\n]*\|\s*severity\s*:"),
    _p("role line", "marker",
       r"(?:^|\n)[\s#*>-]*(?:system|assistant|developer|human)\s*:"
       r"|\b(?:system|developer)\s+(?:message|prompt|override|instructions?)\s*:"),
)  # fmt: skip


@dataclass(frozen=True)
class _Hit:
    start: int
    end: int
    pattern: _Pattern
    evidence: str


def _scan(folded: Folded, cased: bool) -> list[_Hit]:
    """All pattern hits on one folded view, in original coordinates."""
    hits = []
    for pat in _PATTERNS:
        if pat.cased != cased:
            continue
        for m in pat.regex.finditer(folded.text):
            if m.end() == m.start():
                continue
            start, end = folded.span(m.start(), m.end())
            evidence = folded.original(m.start(), m.end()).strip() or m.group(0).strip()
            hits.append(_Hit(start, end, pat, evidence))
    return hits


MAX_INJECTION_ISSUES = 20
"""One hit already blocks shipping; past this many, more issues only flood the page."""


def _dedupe(hits: list[_Hit]) -> list[_Hit]:
    """Keep the first, longest hit of overlapping ones, and one hit per repeated payload."""
    kept: list[_Hit] = []
    seen: set[tuple[str, str]] = set()
    for hit in sorted(hits, key=lambda h: (h.start, -(h.end - h.start))):
        key = (hit.pattern.name, fold(hit.evidence).text.strip())
        if key in seen or any(hit.start < k.end and k.start < hit.end for k in kept):
            continue
        if len(kept) == MAX_INJECTION_ISSUES:
            break
        kept.append(hit)
        seen.add(key)
    return kept


def detect_injection(text: str) -> list[MergedIssue]:
    """Critical issues for text that addresses the reviewer instead of the reader."""
    hits = _scan(fold(text, casefold=True), cased=False) + _scan(fold(text, casefold=False), cased=True)
    return [
        MergedIssue(
            criterion="injection",
            description=f"injection pattern '{h.pattern.name}' — {_EXPLAIN[h.pattern.family]}; "
            "the output is data and must never instruct its reviewers",
            evidence=h.evidence,
            flagged_by="check",
        )
        for h in _dedupe(hits)
    ]


# --- criterion checks -----------------------------------------------------------------------


class _CheckConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _term_regex(term: str) -> re.Pattern[str]:
    """Regex for a folded term: words joined by any space/hyphen run, word-boundary aware."""
    tokens = re.findall(r"[^\W_]+|[^\w\s-]", fold(term).text)
    if not tokens:
        raise ValueError(f"term {term!r} has no visible characters")
    body = r"[\s_-]*".join(re.escape(t) for t in tokens)
    # Why lookarounds instead of \b: terms may start or end with a symbol ("100%"), where \b
    # would demand a word character next to it.
    head = r"(?<!\w)" if re.match(r"\w", tokens[0]) else ""
    tail = r"(?!\w)" if re.match(r"\w", tokens[-1][-1]) else ""
    return re.compile(head + body + tail)


def _valid_terms(terms: list[str]) -> list[str]:
    """Reject terms that fold to nothing (they would match everywhere)."""
    for term in terms:
        _term_regex(term)
    return terms


class ForbiddenTermsCheck(_CheckConfig):
    """None of `terms` may appear (case, spacing, hyphen and homoglyph insensitive)."""

    type: Literal["forbidden_terms"]
    terms: list[Annotated[str, Field(min_length=1)]] = Field(min_length=1)

    @field_validator("terms")
    @classmethod
    def _visible(cls, value: list[str]) -> list[str]:
        return _valid_terms(value)


class RequiredPhrasesCheck(_CheckConfig):
    """Every one of `phrases` must appear (same matching as forbidden terms)."""

    type: Literal["required_phrases"]
    phrases: list[Annotated[str, Field(min_length=1)]] = Field(min_length=1)

    @field_validator("phrases")
    @classmethod
    def _visible(cls, value: list[str]) -> list[str]:
        return _valid_terms(value)


class MaxWordsCheck(_CheckConfig):
    """At most `max` whitespace-separated words."""

    type: Literal["max_words"]
    max: int = Field(ge=1)


class MaxCharsCheck(_CheckConfig):
    """At most `max` characters."""

    type: Literal["max_chars"]
    max: int = Field(ge=1)


class RegexForbiddenCheck(_CheckConfig):
    """`pattern` (Python regex, searched on the original text) must not match."""

    type: Literal["regex_forbidden"]
    pattern: str = Field(min_length=1)
    ignore_case: bool = False

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, value: str) -> str:
        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(f"invalid regular expression: {exc}") from exc
        return value


CheckConfig = Annotated[
    ForbiddenTermsCheck | RequiredPhrasesCheck | MaxWordsCheck | MaxCharsCheck | RegexForbiddenCheck,
    Field(discriminator="type"),
]
_CHECK_ADAPTER: TypeAdapter[CheckConfig] = TypeAdapter(CheckConfig)
CHECK_TYPES = ("forbidden_terms", "required_phrases", "max_words", "max_chars", "regex_forbidden")


def error_message(err: Mapping[str, Any]) -> str:
    """A pydantic error in a rubric author's words ("field required", "unknown field")."""
    if err["type"] == "missing":
        return "field required"
    if err["type"] == "extra_forbidden":
        return "unknown field"
    msg = str(err["msg"]).removeprefix("Value error, ")
    return msg[:1].lower() + msg[1:]


def check_config_errors(check: object) -> list[tuple[tuple[str | int, ...], str]]:
    """(location inside the check, message) for each problem of a check dict; [] when valid."""
    if not isinstance(check, dict):
        return [((), "a check must be a mapping with a 'type'")]
    kind = check.get("type")
    if kind not in CHECK_TYPES:
        return [(("type",), f"unknown check type {kind!r} (known: {', '.join(CHECK_TYPES)})")]
    try:
        _CHECK_ADAPTER.validate_python(check)
    except ValidationError as exc:
        return [(tuple(e["loc"][1:]), error_message(e)) for e in exc.errors()]
    return []


class CheckOutcome(BaseModel):
    """Result of one criterion's deterministic check."""

    criterion: str
    check_type: str
    result: Verdict
    detail: str
    evidence: str = ""


def _context(text: str, start: int, end: int, width: int = 30) -> str:
    """The hit with some text either side, on one line."""
    left = ("…" if start > width else "") + text[max(0, start - width) : start]
    right = text[end : end + width] + ("…" if end + width < len(text) else "")
    return " ".join((left + text[start:end] + right).split())


def _forbidden_terms(cfg: ForbiddenTermsCheck, output: str, folded: Folded) -> tuple[bool, str, str]:
    found = []
    for term in cfg.terms:
        m = _term_regex(term).search(folded.text)
        if m:
            start, end = folded.span(m.start(), m.end())
            found.append((start, term, output[start:end], _context(output, start, end)))
    found.sort()
    if not found:
        return True, f"none of {len(cfg.terms)} forbidden terms found", ""
    detail = "; ".join(f'forbidden term "{t}" found: "{ctx}"' for _, t, _, ctx in found)
    return False, detail, found[0][2]


def _required_phrases(cfg: RequiredPhrasesCheck, output: str, folded: Folded) -> tuple[bool, str, str]:
    missing = [p for p in cfg.phrases if not _term_regex(p).search(folded.text)]
    if not missing:
        return True, f"all {len(cfg.phrases)} required phrases present", ""
    return False, "; ".join(f'required phrase "{p}" missing' for p in missing), ""


def _max_words(cfg: MaxWordsCheck, output: str, folded: Folded) -> tuple[bool, str, str]:
    n = len(output.split())
    return n <= cfg.max, f"{n} words (limit {cfg.max})", ""


def _max_chars(cfg: MaxCharsCheck, output: str, folded: Folded) -> tuple[bool, str, str]:
    n = len(output)
    return n <= cfg.max, f"{n} characters (limit {cfg.max})", ""


def _regex_forbidden(cfg: RegexForbiddenCheck, output: str, folded: Folded) -> tuple[bool, str, str]:
    m = re.search(cfg.pattern, output, re.IGNORECASE if cfg.ignore_case else 0)
    if not m:
        return True, f"forbidden pattern /{cfg.pattern}/ not found", ""
    ctx = _context(output, m.start(), m.end())
    return False, f'forbidden pattern /{cfg.pattern}/ matched: "{ctx}"', m.group(0)


_RUNNERS: dict[str, Callable[..., tuple[bool, str, str]]] = {
    "forbidden_terms": _forbidden_terms,
    "required_phrases": _required_phrases,
    "max_words": _max_words,
    "max_chars": _max_chars,
    "regex_forbidden": _regex_forbidden,
}


def _run_check(criterion: Criterion, output: str, folded: Folded) -> CheckOutcome:
    """Run one criterion's check; a misconfigured or unknown check fails closed."""
    check = criterion.check or {}
    kind = str(check.get("type", ""))
    errors = check_config_errors(check)
    if errors:
        # Fail closed: a check we cannot run must not count as passed.
        msg = "; ".join((".".join(map(str, loc)) + ": " if loc else "") + m for loc, m in errors)
        detail = msg if kind not in CHECK_TYPES else f"check misconfigured: {msg}"
        return CheckOutcome(criterion=criterion.id, check_type=kind or "?", result="FAIL", detail=detail)
    cfg = _CHECK_ADAPTER.validate_python(check)
    ok, detail, evidence = _RUNNERS[kind](cfg, output, folded)
    return CheckOutcome(
        criterion=criterion.id, check_type=kind, result="PASS" if ok else "FAIL", detail=detail, evidence=evidence
    )


def run_criterion_checks(rubric: Rubric, output: str) -> list[CheckOutcome]:
    """Outcomes of the deterministic checks of the criteria that carry one, in rubric order."""
    with_check = [c for c in rubric.criteria if c.check is not None]
    if not with_check:
        return []
    folded = fold(output)
    return [_run_check(c, output, folded) for c in with_check]


def precheck_issues(rubric: Rubric, output: str) -> list[MergedIssue]:
    """Injection hits plus failed checks of critical criteria, as issues flagged by "check"."""
    issues = detect_injection(output)
    severity = {c.id: c.severity for c in rubric.criteria}
    for o in run_criterion_checks(rubric, output):
        if o.result == "FAIL" and severity.get(o.criterion) == "critical":
            issues.append(
                MergedIssue(
                    criterion=o.criterion,
                    description=f"deterministic check {o.check_type} failed: {o.detail}",
                    evidence=o.evidence,
                    flagged_by="check",
                )
            )
    return issues
