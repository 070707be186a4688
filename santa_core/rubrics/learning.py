"""Rubric learning: a criterion that keeps failing on the same words becomes a suggestion to its rubric's author.

Over the recent runs of one rubric (the caller picks the window, `WINDOW_DAYS` by default) the merged issues of every
failed round, and the escapes reported on its shipped runs, are grouped exactly as a batch's failures are grouped into
patterns (`santa_core.batch.patterns.group_patterns`, then `generalise.generalise` with the rubric's NICE runs as the
clean side): by criterion, and by the phrase the issues' evidence quotes (`defect.flagged`). A group seen in at least
`MIN_RUNS` distinct runs is a **suggestion** for that criterion:

- a deterministic check when its phrase is a stable literal: specific enough to stand for a defect
  (`signature.usable`), and found by the forbidden-terms check in the text of every run of the group. The criterion
  then forbids the phrase (`{"type": "forbidden_terms", "terms": [...]}`, added to the terms it already forbids);
- else a sharper pass condition: the criterion's own condition with one sentence naming what the runs said, built
  from their words (no model is asked).

Escapes of one criterion seen in `MIN_RUNS` runs that share no phrase still suggest a sharper pass condition for it:
the reviewers passed what people later found, so the condition they judge by needs words for it.

Pure: the storage layer hands in the runs' issues and texts; nothing here reads a clock or a database.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Literal, Protocol

from pydantic import BaseModel, Field

# First: santa_core.batch.defect and the santa_core.run package import each other, and only the run package's side
# resolves the circle when it is imported first (the command line may import this module before anything else).
import santa_core.run  # noqa: F401
from santa_core.batch.defect import most_flagged, stem
from santa_core.batch.generalise import generalise
from santa_core.batch.patterns import Pattern, SampledFailure, group_patterns
from santa_core.batch.signature import usable
from santa_core.checks.criteria import run_criterion_checks
from santa_core.checks.folding import fold
from santa_core.checks.terms import ForbiddenTermsCheck, forbidden_terms
from santa_core.models import Criterion, MergedIssue, Rubric, RubricDocument
from santa_core.run.gate import normalise

MIN_RUNS = 5
"""Distinct runs a failure must be seen in before it is suggested (fewer may be chance)."""
WINDOW_DAYS = 30
"""How far back runs count: an old failure the rubric has since been changed for should not come back."""
MAX_ISSUES = 100
"""Issues grouped at most, from the newest failed rounds and escapes: grouping compares the issues of one criterion
pairwise, so its work grows with their square (a round may hold many issues, so items alone would not bound it)."""
MAX_EVIDENCE_CHARS = 300
"""The longest quote or description of an issue grouping reads, and the text read around each quote: grouping's cost
grows with the texts' length as well as with the items (a spot-check quote may be 4,000 characters)."""
MAX_CLEAN_CHARS = 40_000
"""The NICE text grouping weighs phrases against at most (the newest runs'): each pattern reads all of it, so its
cost is the patterns times this."""
MAX_EXAMPLE_CHARS = 80
"""The longest quote a sharper pass condition cites; a longer one is cut at a word."""
MAX_PHRASE_CHARS = 120
"""The longest phrase a check may forbid: beyond this it is a sentence, not a term."""
SKIPPED_CRITERIA = frozenset({"injection"})
"""Criteria of the desk itself, not of a rubric: the injection detector is not the author's to sharpen."""

SuggestionKind = Literal["forbidden_terms", "pass_condition"]


class LearningItem(BaseModel):
    """One failure the desk holds: a failed round's merged issues, or an escape reported on a shipped run."""

    run_id: int
    source: Literal["review", "escape"] = "review"
    ref: int = 0
    """The round number (a review) or the escape's id: with the run, what tells two items apart."""
    text: str
    """The text the issues were found in: the round's output, or the shipped text an escape was reported on."""
    issues: list[MergedIssue] = Field(default_factory=list)

    @property
    def key(self) -> str:
        """Unique among the items ("12/r2", "12/e7")."""
        return f"{self.run_id}/{self.source[0]}{self.ref}"


class Suggestion(BaseModel):
    """A change to one criterion the runs argue for, with the runs as evidence."""

    key: str
    """Stable: the same rubric, criterion, kind and phrase give the same key however many runs argue for it."""
    rubric: str
    criterion: str
    criterion_name: str
    kind: SuggestionKind
    phrase: str
    """The words the runs share (a forbidden term, or the example a sharper condition cites)."""
    check: dict | None = None
    """The criterion's check after accepting (kind `forbidden_terms`)."""
    pass_condition: str | None = None
    """The criterion's pass condition after accepting (kind `pass_condition`)."""
    runs: list[int]
    """The runs the failure was seen in, ascending."""
    escapes: int = 0
    """How many of its items are escapes (people found it after the reviewers passed it)."""

    @property
    def title(self) -> str:
        """In words, for the page and the command line."""
        what = (
            f"forbid “{self.phrase}”"
            if self.kind == "forbidden_terms"
            else f"sharpen the pass condition (“{self.phrase}”)"
        )
        seen = f"seen in {len(self.runs)} runs" + (f", {self.escapes} of them escapes" if self.escapes else "")
        return f"{self.criterion_name}: {what} — {seen}"


class SuggestionDecided(ValueError):
    """A suggestion accepted or dismissed already: deciding on it again is refused, nothing written."""

    def __init__(self, key: str, action: str | None = None) -> None:
        super().__init__(f"suggestion {key} was {action or 'decided on'} already; reload the page")


class Decision(BaseModel):
    """A rubric author's decision on a suggestion, as stored."""

    key: str
    action: Literal["accepted", "dismissed"]
    criterion: str
    phrase: str
    version: int | None = None
    """The rubric version accepting saved."""
    note: str = ""
    actor: str
    at: datetime


class Log(Protocol):
    """Where rubric learning reads a rubric's recent history and keeps its author's decisions (`storage.suggestions`)."""

    def learning_items(self, rubric: str, days: int = WINDOW_DAYS) -> tuple[list[LearningItem], dict[int, str]]:
        """(failed rounds and escapes of the rubric's runs in the window, run id → text of each NICE run in it)."""
        ...

    def decisions(self, rubric: str) -> list[Decision]:
        """The rubric's suggestion decisions, oldest first."""
        ...

    def decide(
        self, suggestion: Suggestion, action: str, actor: str, note: str = "", version: int | None = None
    ) -> int:
        """Record a decision (PermissionDenied, nothing written, unless the actor may change rubrics)."""
        ...


def suggestions(
    rubric: Rubric, items: Iterable[LearningItem], nice: Mapping[int, str], min_runs: int = MIN_RUNS
) -> list[Suggestion]:
    """The suggestions the items argue for, most runs first (ties by key); none already covered by the rubric.

    `items`: the rubric's failed rounds and escapes in the window; `nice`: run id → the text of each run that shipped
    NICE in it (the clean side a phrase must not show in).
    """
    criteria = {normalise(c.id): c for c in rubric.criteria}
    kept = _items(items, criteria)
    by_key = {i.key: i for i in kept}
    found = group_patterns(SampledFailure(item_key=i.key, output=i.text, issues=i.issues) for i in kept)
    reviewed = {i.key: i.text for i in kept} | {f"{r}/nice": t for r, t in _clean_side(nice).items()}
    grouped = generalise(found, reviewed, {k: {} for k in reviewed})
    out: dict[str, Suggestion] = {}
    for pattern in (p for p in grouped if p.kind == "issue"):
        members = [by_key[k] for k in pattern.items]
        criterion = criteria[normalise(pattern.criterion)]
        if len({m.run_id for m in members}) >= min_runs:
            made = _suggest(rubric.name, criterion, _phrase(pattern), members, [m.issue for m in pattern.members])
            if made is not None:
                out.setdefault(made.key, made)
    for cid, members in _escapes_by_criterion(kept).items():
        criterion = criteria[cid]
        if len({m.run_id for m in members}) >= min_runs and not any(s.criterion == criterion.id for s in out.values()):
            issues = [i for m in members for i in m.issues]
            made = _sharper(rubric.name, criterion, _example(issues), members)
            if made is not None:
                out.setdefault(made.key, made)
    return sorted(out.values(), key=lambda s: (-len(s.runs), s.key))


def _items(items: Iterable[LearningItem], criteria: Mapping[str, Criterion]) -> list[LearningItem]:
    """The newest items, each with only the issues a rubric author could act on (those left without dropped), until
    MAX_ISSUES issues are taken.

    A check's own issue is already deterministic; an issue of a criterion the rubric no longer has (or the desk's
    injection detector) is nobody's to sharpen.
    """
    out: list[LearningItem] = []
    seen: set[str] = set()
    taken = 0
    for item in sorted(items, key=lambda i: (-i.run_id, i.key)):
        issues = [
            i
            for i in item.issues
            if i.flagged_by != "check"
            and normalise(i.criterion) in criteria
            and normalise(i.criterion) not in SKIPPED_CRITERIA
        ][: MAX_ISSUES - taken]
        if issues and item.key not in seen:
            seen.add(item.key)
            out.append(_clipped(item, issues))
            taken += len(issues)
        if taken >= MAX_ISSUES:
            break
    return out


def _clean_side(nice: Mapping[int, str]) -> dict[int, str]:
    """The newest NICE runs' texts, MAX_CLEAN_CHARS of them in all (the last one cut to fit)."""
    out: dict[int, str] = {}
    left = MAX_CLEAN_CHARS
    for run_id in sorted(nice, reverse=True):
        if left <= 0:
            break
        out[run_id] = nice[run_id][:left]
        left -= len(out[run_id])
    return out


def _clipped(item: LearningItem, issues: Sequence[MergedIssue]) -> LearningItem:
    """The item as grouping reads it: each issue's quote and description at most MAX_EVIDENCE_CHARS, and of its text
    only the stretch around each quote (the first MAX_EVIDENCE_CHARS when no quote is found in it)."""
    short = [i.model_copy(update={"evidence": _clip(i.evidence), "description": _clip(i.description)}) for i in issues]
    spans = [span for i in short if i.evidence.strip() and (span := _quote_in(item.text, i.evidence))]
    if not spans:
        return item.model_copy(update={"issues": short, "text": item.text[:MAX_EVIDENCE_CHARS]})
    parts = []
    for start, end in sorted(spans):
        pad = max(0, MAX_EVIDENCE_CHARS - (end - start)) // 2
        parts.append(item.text[max(0, start - pad) : end + pad])
    return item.model_copy(update={"issues": short, "text": "\n".join(parts)})


def _clip(text: str) -> str:
    """At most MAX_EVIDENCE_CHARS, cut at a word when there is one to cut at."""
    if len(text) <= MAX_EVIDENCE_CHARS:
        return text
    head = text[:MAX_EVIDENCE_CHARS]
    return head.rsplit(" ", 1)[0] if " " in head.strip() else head


def _quote_in(text: str, quote: str) -> tuple[int, int] | None:
    """Where the quote stands in the text: as written, else its first words with case and spacing aside (a
    pattern of the whole quote would cost more than the grouping it saves)."""
    if (at := text.find(quote)) >= 0:
        return at, at + len(quote)
    words = quote.split()[:8]
    found = re.search(r"\s+".join(map(re.escape, words)), text, re.IGNORECASE) if words else None
    return found.span() if found else None


def _phrase(pattern: Pattern) -> str:
    """The phrase the pattern's issues flag most (as a reviewer spelt it), else its signature's first phrase."""
    return most_flagged(m.issue for m in pattern.members) or (pattern.signature[0] if pattern.signature else "")


def _suggest(
    rubric: str, criterion: Criterion, phrase: str, members: Sequence[LearningItem], issues: Sequence[MergedIssue]
) -> Suggestion | None:
    """A forbidden term when the phrase is a stable literal the criterion's check can take, else a sharper condition."""
    check = criterion.check
    if phrase and _literal(phrase, members) and (check is None or check.get("type") == "forbidden_terms"):
        terms = list((check or {}).get("terms", []))
        if _forbids(terms, phrase):
            return None  # the criterion forbids it already (a suggestion accepted earlier, or written by hand)
        return Suggestion(
            key=suggestion_key(rubric, criterion.id, "forbidden_terms", phrase),
            rubric=rubric,
            criterion=criterion.id,
            criterion_name=criterion.name,
            kind="forbidden_terms",
            phrase=phrase,
            check={"type": "forbidden_terms", "terms": [*terms, phrase]},
            runs=_runs(members),
            escapes=_escapes(members),
        )
    return _sharper(rubric, criterion, phrase or _example(issues), members)


def _literal(phrase: str, members: Sequence[LearningItem]) -> bool:
    """Specific enough to stand for a defect, short enough to be a term, and found in every member's text."""
    if not usable(phrase) or len(phrase) > MAX_PHRASE_CHARS:
        return False
    try:
        cfg = ForbiddenTermsCheck(type="forbidden_terms", terms=[phrase])
    except ValueError:
        return False
    return all(not forbidden_terms(cfg, m.text, fold(m.text))[0] for m in members)


def _forbids(terms: Sequence[str], phrase: str) -> bool:
    """Whether the terms already catch the phrase (the check run on the phrase itself)."""
    if not terms:
        return False
    cfg = ForbiddenTermsCheck(type="forbidden_terms", terms=list(terms))
    return not forbidden_terms(cfg, phrase, fold(phrase))[0]


def _sharper(rubric: str, criterion: Criterion, example: str, members: Sequence[LearningItem]) -> Suggestion | None:
    """The criterion's pass condition with one sentence naming what the runs said; None when it names it already."""
    example = _cut(example)
    if not example or normalise(example) in normalise(criterion.pass_condition):
        return None
    sharper = _sharpened(criterion.pass_condition, example)
    return Suggestion(
        key=suggestion_key(rubric, criterion.id, "pass_condition", example),
        rubric=rubric,
        criterion=criterion.id,
        criterion_name=criterion.name,
        kind="pass_condition",
        phrase=example,
        pass_condition=sharper,
        runs=_runs(members),
        escapes=_escapes(members),
    )


def _example(issues: Iterable[MergedIssue]) -> str:
    """The quote most issues give (shortest on a tie), else the commonest description: what the condition cites."""
    issues = list(issues)
    quotes = Counter(" ".join(i.evidence.split()) for i in issues if i.evidence.strip())
    if not quotes:
        quotes = Counter(" ".join(i.description.split()) for i in issues if i.description.strip())
    return min(quotes, key=lambda q: (-quotes[q], len(q), q)) if quotes else ""


def _cut(text: str) -> str:
    """One line of at most MAX_EXAMPLE_CHARS, cut at a word (an ellipsis marks the cut); quotes marks dropped."""
    text = " ".join(text.replace("“", "").replace("”", "").split())
    if len(text) <= MAX_EXAMPLE_CHARS:
        return text
    head = text[: MAX_EXAMPLE_CHARS - 1]
    return (head.rsplit(" ", 1)[0] if " " in head else head).rstrip() + "…"


def _escapes_by_criterion(items: Sequence[LearningItem]) -> dict[str, list[LearningItem]]:
    """The escapes, by the (normalised) criterion each names."""
    out: dict[str, list[LearningItem]] = {}
    for item in items:
        if item.source == "escape":
            for issue in item.issues:
                out.setdefault(normalise(issue.criterion), []).append(item)
    return out


def _runs(members: Iterable[LearningItem]) -> list[int]:
    return sorted({m.run_id for m in members})


def _escapes(members: Iterable[LearningItem]) -> int:
    return sum(1 for m in members if m.source == "escape")


def suggestion_key(rubric: str, criterion: str, kind: str, phrase: str) -> str:
    """A short hash of what a suggestion changes (phrases compared by their stems: "guaranteed" is "guarantees")."""
    data = [rubric, normalise(criterion), kind, stem(normalise(phrase))]
    return "s-" + hashlib.sha256(json.dumps(data).encode()).hexdigest()[:12]


def accepted(doc: RubricDocument, suggestion: Suggestion) -> RubricDocument:
    """The document with the suggestion applied to its criterion (ValueError when the document does not own it)."""
    if suggestion.rubric != doc.name:
        raise ValueError(f"the suggestion is for rubric {suggestion.rubric!r}, not {doc.name!r}")
    ids = [c.id for c in doc.criteria]
    if suggestion.criterion not in ids:
        raise ValueError(
            f"criterion {suggestion.criterion!r} is not {doc.name}'s own (it comes from a rubric it "
            f"extends: {', '.join(doc.extends) or 'none'}); add the check there"
        )
    (criterion,) = [c for c in doc.criteria if c.id == suggestion.criterion]
    # Made from the criterion as the latest version has it: an author's edit since the suggestion was drawn up (other
    # terms, a reworded condition) is kept, never overwritten with the suggestion's copy of the older one.
    criteria = [_changed(c, suggestion) if c.id == criterion.id else c for c in doc.criteria]
    return doc.model_copy(update={"criteria": criteria})


def _changed(criterion: Criterion, suggestion: Suggestion) -> Criterion:
    """The criterion with the suggested term added to its check, or the sentence added to its pass condition."""
    if suggestion.kind == "pass_condition":
        if normalise(suggestion.phrase) in normalise(criterion.pass_condition):
            # Accepted already (another tab, another author) or written by hand: a second copy says nothing new.
            raise ValueError(f"criterion {criterion.id!r}'s pass condition names “{suggestion.phrase}” already")
        return criterion.model_copy(update={"pass_condition": _sharpened(criterion.pass_condition, suggestion.phrase)})
    check = criterion.check
    if check is not None and check.get("type") != "forbidden_terms":
        raise ValueError(
            f"criterion {criterion.id!r} now carries a {check.get('type')} check; a criterion has one "
            "check, so add the term by hand or dismiss the suggestion"
        )
    terms = list((check or {}).get("terms", []))
    if _forbids(terms, suggestion.phrase):
        raise ValueError(f"criterion {criterion.id!r} forbids “{suggestion.phrase}” already")
    return criterion.model_copy(
        update={"check": {**(check or {"type": "forbidden_terms"}), "terms": [*terms, suggestion.phrase]}}
    )


def _sharpened(condition: str, example: str) -> str:
    return f"{condition.rstrip()} In particular, it never says “{example}” or anything to that effect."


def acceptance_note(suggestion: Suggestion) -> str:
    """The change note of the version an accepted suggestion saves: where it came from and why."""
    runs = ", ".join(f"#{r}" for r in suggestion.runs[:10]) + (" …" if len(suggestion.runs) > 10 else "")
    return f"from suggestion {suggestion.key}: {suggestion.title} (runs {runs})"


class TryResult(BaseModel):
    """A suggested check run on the runs that argued for it and on the rubric's NICE runs: what it would catch."""

    hits: list[int]
    """Evidence runs whose failing text the check catches."""
    misses: list[int]
    """Evidence runs it does not catch."""
    false_alarms: list[int]
    """NICE runs it would have failed."""
    clean: int
    """NICE runs it passes."""


def try_suggestion(
    suggestion: Suggestion, rubric: Rubric, items: Iterable[LearningItem], nice: Mapping[int, str]
) -> TryResult:
    """Run a forbidden-term suggestion's check (free: deterministic) on each evidence run's texts and each NICE run.

    A run is a hit when the check fails any of its items' texts (a round it failed in, or the text an escape was
    reported on). A sharper pass condition has no free try: only a reviewer judges it (ValueError).
    """
    if suggestion.check is None:
        raise ValueError("a sharper pass condition is judged by the reviewers; only a check can be tried for free")
    criterion = next(c for c in rubric.criteria if c.id == suggestion.criterion)
    probe = Rubric(name=rubric.name, criteria=[criterion.model_copy(update={"check": suggestion.check})])
    evidence = set(suggestion.runs)
    caught: set[int] = set()
    for item in items:
        if item.run_id in evidence and item.run_id not in caught and _fails(probe, item.text):
            caught.add(item.run_id)
    alarms = sorted(r for r, text in nice.items() if _fails(probe, text))
    return TryResult(
        hits=sorted(caught), misses=sorted(evidence - caught), false_alarms=alarms, clean=len(nice) - len(alarms)
    )


def _fails(probe: Rubric, text: str) -> bool:
    return any(o.result == "FAIL" for o in run_criterion_checks(probe, text))


def pending(
    rubric: Rubric, log: Log, days: int = WINDOW_DAYS, min_runs: int = MIN_RUNS
) -> tuple[list[Suggestion], list[LearningItem], dict[int, str]]:
    """The rubric's suggestions nobody has decided on yet, with the items and NICE texts they came from."""
    items, nice = log.learning_items(rubric.name, days)
    decided = {d.key for d in log.decisions(rubric.name)}
    return [s for s in suggestions(rubric, items, nice, min_runs) if s.key not in decided], items, nice
