"""Lint a rubric draft before it is saved: errors block the save, warnings advise the author.

The method asks for objective criteria ("make a list"): each one must say what a passing
output does and what a failure looks like, in terms two independent reviewers would apply
the same way. Errors are what would make the rubric unusable or ambiguous to store (missing
fields, clashing ids, checks that cannot run); warnings are what would make reviewers
disagree (subjective wording, two criteria testing the same thing) or a check that cannot
block shipping.

Retired criteria are stored too, so the field, check and id rules cover them (a retired id stays
reserved); the wording and overlap rules and the active-criterion count skip them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Literal

from santa_core.checks import check_config_errors
from santa_core.models import RUBRIC_NAME_PATTERN, Criterion, CriterionDraft, RubricDraft

Level = Literal["error", "warning"]

CRITERION_ID_PATTERN = re.compile(r"^[a-z0-9_\-]+$")
MAX_ID_CHARS = 64
MAX_DOMAIN_CHARS = 64
SEVERITIES = ("critical", "suggestion")


@dataclass(frozen=True)
class LintFinding:
    """One problem of a draft: where it is (criterion index and field) and what to do."""

    level: Level
    index: int | None
    criterion_id: str
    field: str | None
    message: str


def errors(findings: Iterable[LintFinding]) -> list[LintFinding]:
    """Findings that block the save."""
    return [f for f in findings if f.level == "error"]


def warnings(findings: Iterable[LintFinding]) -> list[LintFinding]:
    """Findings that advise but do not block."""
    return [f for f in findings if f.level == "warning"]


def for_criterion(findings: Iterable[LintFinding], index: int | None) -> list[LintFinding]:
    """Findings of the criterion at `index` (None: the rubric-level findings)."""
    return [f for f in findings if f.index == index]


def blocks_save(findings: Iterable[LintFinding]) -> bool:
    """True when any finding is an error."""
    return any(f.level == "error" for f in findings)


def lint(draft: RubricDraft, inherited: Sequence[Criterion] = ()) -> list[LintFinding]:
    """All findings for a draft; `inherited` are the resolved criteria of the rubrics it extends."""
    findings = [*_header_findings(draft), *_id_findings(draft, inherited), *_empty_findings(draft, inherited)]
    for index, c in enumerate(draft.criteria):
        # A retired criterion is still stored in the version, so it must still be well formed.
        findings += _field_findings(index, c)
        findings += _check_findings(index, c)
        findings += _third_reviewer_findings(index, c)
        if not c.retired:
            findings += _vague_findings(index, c)
    findings += _overlap_findings(draft, inherited)
    return sorted(findings, key=lambda f: (f.index is not None, f.index or 0, f.level != "error"))


# --- rubric level ---------------------------------------------------------------------------


def _rubric(level: Level, field: str | None, message: str) -> LintFinding:
    return LintFinding(level, None, "", field, message)


def _header_findings(draft: RubricDraft) -> list[LintFinding]:
    out = []
    if not draft.name.strip():
        out.append(_rubric("error", "name", "no rubric name: give it a short name such as 'support-replies'"))
    elif not re.match(RUBRIC_NAME_PATTERN, draft.name):
        out.append(
            _rubric(
                "error",
                "name",
                f"rubric name {draft.name!r} is not allowed: use 1-64 lower-case letters, digits, '-' or '_', "
                "starting with a letter or digit (it appears in commands and URLs)",
            )
        )
    if draft.name.strip() == "base":
        out.append(_rubric("error", "name", "'base' is reserved (in extends it means general): pick another name"))
    if not draft.domain.strip():
        out.append(_rubric("error", "domain", "no domain: name the kind of output this rubric reviews, e.g. 'content'"))
    elif len(draft.domain) > MAX_DOMAIN_CHARS:
        out.append(_rubric("error", "domain", f"domain is longer than {MAX_DOMAIN_CHARS} characters: shorten it"))
    return out


def _empty_findings(draft: RubricDraft, inherited: Sequence[Criterion]) -> list[LintFinding]:
    own = sum(1 for c in draft.criteria if not c.retired)
    parents = sum(1 for c in inherited if not c.retired)
    if own + parents:
        return []
    return [
        _rubric(
            "error",
            "criteria",
            "no active criterion: add at least one criterion (or extend a rubric that has some); "
            "a rubric with nothing to check would pass every output",
        )
    ]


# --- ids (these rules also cover retired criteria: a retired id stays reserved) ------------


def _label(index: int, c: CriterionDraft) -> str:
    """How a message names an own criterion: its 1-based position, id and name."""
    name = f" ({c.name.strip()})" if c.name.strip() else ""
    return f"criterion #{index + 1} {c.id!r}{name}"


def _id_format_error(c: CriterionDraft) -> str | None:
    if not c.id:
        return "no id: give the criterion a short id such as 'cta_present' (reviews cite it)"
    if len(c.id) > MAX_ID_CHARS:
        return f"id {c.id!r} is longer than {MAX_ID_CHARS} characters: shorten it"
    if not CRITERION_ID_PATTERN.match(c.id):
        return f"id {c.id!r} is not allowed: use only lower-case letters, digits, '_' and '-'"
    return None


def _id_findings(draft: RubricDraft, inherited: Sequence[Criterion]) -> list[LintFinding]:
    out = []
    first_at: dict[str, int] = {}
    parent_by_id = {p.id: p for p in inherited}
    for index, c in enumerate(draft.criteria):
        problem = _id_format_error(c)
        if problem is None and c.id in first_at:
            other = first_at[c.id]
            problem = (
                f"id {c.id!r} is already used by {_label(other, draft.criteria[other])}: give each criterion its own id"
            )
        elif problem is None and c.id in parent_by_id:
            parent = parent_by_id[c.id]
            problem = (
                f"id {c.id!r} is already used by inherited criterion {parent.id!r} ({parent.name}) "
                "from an extended rubric: pick another id"
            )
        if problem:
            out.append(LintFinding("error", index, c.id, "id", problem))
        first_at.setdefault(c.id, index)
    return out


# --- required fields and checks -------------------------------------------------------------


def _field_findings(index: int, c: CriterionDraft) -> list[LintFinding]:
    messages = {
        "name": "no name: give the criterion a short name a reviewer can cite",
        "category": "no category: pick one of the method's categories or type a custom one",
        "pass_condition": "no pass condition: state what a passing output does, objectively",
        "fail_signal": "no fail signal: state what in the output shows this criterion failed",
    }
    out = [
        LintFinding("error", index, c.id, field, message)
        for field, message in messages.items()
        if not str(getattr(c, field)).strip()
    ]
    if c.severity not in SEVERITIES:
        out.append(
            LintFinding(
                "error", index, c.id, "severity", f"severity {c.severity!r} is unknown: use 'critical' or 'suggestion'"
            )
        )
    return out


def _check_findings(index: int, c: CriterionDraft) -> list[LintFinding]:
    if c.check is None:
        return []
    out = []
    for loc, msg in check_config_errors(c.check):
        path = ".".join(str(part) for part in loc)
        field = f"check.{path}" if path else "check"
        where = f"check {path}" if path else "check"
        out.append(
            LintFinding("error", index, c.id, field, f"{where}: {msg} — fix the check or remove it (it cannot run)")
        )
    if not out and c.severity == "suggestion":
        out.append(
            LintFinding(
                "warning",
                index,
                c.id,
                "check",
                "this suggestion carries a deterministic check, but a suggestion's failure does not block "
                "shipping: make the criterion critical if the check must hold",
            )
        )
    return out


def _third_reviewer_findings(index: int, c: CriterionDraft) -> list[LintFinding]:
    """A third reviewer marked where it buys nothing: on a suggestion (its failure never blocks) or a retired
    criterion (not judged at all). A warning: the mark is harmless, but the author meant something else."""
    if not c.third_reviewer:
        return []
    if c.retired:
        why = "this criterion is retired, so no reviewer judges it: the third reviewer mark does nothing"
    elif c.severity == "suggestion":
        why = (
            "a third reviewer is paid on every run for this suggestion, whose failure never blocks shipping: "
            "make it critical, or leave the third reviewer off"
        )
    else:
        return []
    return [LintFinding("warning", index, c.id, "third_reviewer", why)]


# --- subjective wording ---------------------------------------------------------------------

VAGUE_WORDS = (
    "engaging", "high quality", "appropriate", "professional", "compelling", "good", "great", "clear",
    "well written", "polished", "reasonable", "adequate", "sufficient", "nice", "interesting", "effective",
    "strong", "friendly", "natural", "suitable", "proper", "attractive", "persuasive", "catchy", "on brand",
    "fluent", "readable", "appealing", "impactful", "concise", "excellent", "bad", "poor", "weak",
    "acceptable", "okay", "problematic", "sloppy", "unclear", "confusing", "awkward", "inappropriate",
)  # fmt: skip
"""Words that two reviewers read differently unless the text also says how to measure them."""

HEDGES = (
    "maybe", "perhaps", "where possible", "if possible", "when possible", "as far as possible",
    "as appropriate", "where appropriate", "if appropriate", "as needed", "where needed", "if needed",
    "where necessary", "if necessary", "as necessary", "ideally", "preferably", "if relevant", "where relevant",
    "try to", "tries to", "should try", "generally", "usually", "mostly", "somewhat", "more or less",
)  # fmt: skip
"""Words that make a criterion optional: a number in the sentence does not help ("at least 3 links where
possible" leaves each reviewer to decide when it is possible). Not "possibly": "a possibly null value" names a
thing to check, not a hedge."""

# Why [\s-]+ between parts: "high quality", "high-quality" and "high  quality" are the same claim.


def _words_pattern(words: Sequence[str]) -> re.Pattern[str]:
    """Whole words or phrases, any spacing or hyphens between a phrase's words (one bounded run each: linear)."""
    return re.compile(
        r"\b(?:" + "|".join(r"[\s-]+".join(map(re.escape, w.split())) for w in words) + r")\b", re.IGNORECASE
    )


_VAGUE = _words_pattern(VAGUE_WORDS)
_HEDGE = _words_pattern(HEDGES)
_NUMBER_WORDS = r"one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twice|once|half"
_COUNT = rf"(?:\d++(?:[.,]\d++)?|{_NUMBER_WORDS})"
_UNITS = (
    r"%|percent|words?|characters?|chars?|sentences?|paragraphs?|items?|bullets?|links?|urls?|seconds?|minutes?"
    r"|hours?|days?|times?|points?|lines?|questions?|examples?|steps?|sections?|headings?|mentions?|grade|errors?"
)
_COMPARE = r"at\s+least|at\s+most|no\s+more\s+than|no\s+fewer\s+than|fewer\s+than|more\s+than|less\s+than|under|over|up\s+to|exactly|between|maximum(?:\s+of)?|minimum(?:\s+of)?|max|min|within|[<>]=?|≤|≥"
_ANCHORS = re.compile(
    "|".join(
        [
            # a measure: a count with a unit ("3 questions", "20 %") or a comparison ("at most 8")
            # (a "%" count starts only where a number starts: from every digit of "111…" it scanned to the end)
            rf"\b{_COUNT}\s*(?:{_UNITS})\b|(?<![\d.,]){_COUNT}\s*%",
            rf"(?:\b|(?<=\s))(?:{_COMPARE})\s*{_COUNT}\b",
            # quoted text (no opening mark inside: a run of "“" with no "”" would search its line from each one)
            r"\"[^\"\n]+\"|“[^“”\n]+”|‘[^‘’\n]+’|(?<!\w)'[^'\n]+'(?!\w)",
            r"\b(?:the|this|that)\s+spec(?:ification)?(?![\w-])|\bspec(?:ification)?['’]s\b",  # not "spec-less"
            r"\blisted\b|\bthe\s+(?:\w+\s+)?(?:list|checklist|check)\b|\bnone\s+of\s+the\b",
        ]
    ),
    re.IGNORECASE,
)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def _found(pattern: re.Pattern[str], text: str) -> list[str]:
    """What `pattern` finds in `text`, lower-case with single spaces, each once, in order of appearance."""
    found = [" ".join(re.split(r"[\s-]+", m.group(0).lower())) for m in pattern.finditer(text)]
    return list(dict.fromkeys(found))


def vague_words(text: str) -> list[str]:
    """Subjective words in `text` (lower-case, each once, in order of appearance)."""
    return _found(_VAGUE, text)


def hedges(text: str) -> list[str]:
    """Words in `text` that make a condition optional ("maybe", "where possible"), as `vague_words` lists them."""
    return _found(_HEDGE, text)


def _defined_after_colon(sentence: str) -> bool:
    """ "Tone is professional: no slang, no emoji" — the author defines the word right after it."""
    head, sep, tail = sentence.partition(":")
    return bool(sep) and bool(vague_words(head)) and len(tail.split()) >= 3 and not vague_words(tail)


def has_measurable_anchor(text: str) -> bool:
    """True when `text` names something countable or checkable: a count with a unit or a limit,
    quoted text, the spec, or a list. A bare year ("the 2024 campaign") or "every section" is not:
    "each section is engaging" is as subjective as "the copy is engaging"."""
    return bool(_ANCHORS.search(text))


def unanchored_vague_words(text: str) -> list[str]:
    """Vague words in sentences that give no measure (another sentence's number does not help)."""
    found: list[str] = []
    for sentence in _SENTENCE_END.split(text):
        if not has_measurable_anchor(sentence) and not _defined_after_colon(sentence):
            found += vague_words(sentence)
    return list(dict.fromkeys(found))


def _vague_message(field: str, words: list[str]) -> str:
    quoted = ", ".join(f"'{w}'" for w in words)
    return (
        f"subjective wording in the {field.replace('_', ' ')}: {quoted} with nothing measurable — reviewers will "
        "disagree on it. Say what to count or compare: a number or limit, quoted text, a rule or list in the spec, "
        "or 'at least …'/'at most …' with a number"
    )


def _hedge_message(field: str, words: list[str]) -> str:
    quoted = ", ".join(f"'{w}'" for w in words)
    return (
        f"hedged wording in the {field.replace('_', ' ')}: {quoted} leaves each reviewer to decide whether it "
        "applies — reviewers will disagree on it. Say exactly when it applies, or drop the hedge"
    )


def _vague_findings(index: int, c: CriterionDraft) -> list[LintFinding]:
    out = []
    for field in ("pass_condition", "fail_signal"):
        text = getattr(c, field)
        words = unanchored_vague_words(text)
        if words:
            out.append(LintFinding("warning", index, c.id, field, _vague_message(field, words)))
        if found := hedges(text):  # no anchor or definition makes a hedge objective
            out.append(LintFinding("warning", index, c.id, field, _hedge_message(field, found)))
    # Why the name is judged by the pass condition: a name is a short label with no room for a
    # measure; it is harmless when the pass condition says how to measure it.
    words = vague_words(c.name)
    if words and not has_measurable_anchor(c.pass_condition):
        out.append(LintFinding("warning", index, c.id, "name", _vague_message("name", words)))
    return out


# --- overlapping criteria -------------------------------------------------------------------

SIMILARITY_RATIO = 0.85
JACCARD_THRESHOLD = 0.7
MIN_CONTENT_TOKENS = 6
_STOPWORDS = frozenset(
    "a an the and or of to in on at for by with from is are be been was were it its this that these those "
    "as if no not any every each all output spec".split()
)


def _normalise(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


def _content_tokens(text: str) -> set[str]:
    return {t for t in _normalise(text).split() if t not in _STOPWORDS}


def near_duplicate(a: str, b: str) -> bool:
    """True when two pass conditions say nearly the same thing."""
    na, nb = _normalise(a), _normalise(b)
    if not na or not nb:
        return False
    if SequenceMatcher(None, na, nb).ratio() >= SIMILARITY_RATIO:
        return True
    ta, tb = _content_tokens(a), _content_tokens(b)
    if min(len(ta), len(tb)) < MIN_CONTENT_TOKENS:
        return False
    return len(ta & tb) / len(ta | tb) >= JACCARD_THRESHOLD


def _overlap(index: int, c: CriterionDraft, other: CriterionDraft | Criterion, other_label: str) -> list[LintFinding]:
    same_name = bool(c.name.strip()) and c.name.strip().casefold() == other.name.strip().casefold()
    similar = near_duplicate(c.pass_condition, other.pass_condition)
    if not (same_name or similar):
        return []
    reasons = " and ".join(
        r for r, hit in (("the same name", same_name), ("a nearly identical pass condition", similar)) if hit
    )
    message = (
        f"overlaps with {other_label}: {reasons}. Reviewers would judge the same thing twice; "
        "merge the two criteria or make each test something different"
    )
    return [LintFinding("warning", index, c.id, "name" if same_name else "pass_condition", message)]


def _overlap_findings(draft: RubricDraft, inherited: Sequence[Criterion]) -> list[LintFinding]:
    active = [(i, c) for i, c in enumerate(draft.criteria) if not c.retired]
    parents = [p for p in inherited if not p.retired]
    out = []
    for pos, (index, c) in enumerate(active):
        # Own pairs are reported once, on the later criterion (usually the one just added).
        for other_index, other in active[:pos]:
            out += _overlap(index, c, other, _label(other_index, other))
        for parent in parents:
            out += _overlap(index, c, parent, f"inherited criterion {parent.id!r} ({parent.name})")
    return out
