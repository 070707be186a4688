"""Patterns: a sample's failures grouped by criterion and by what the issues say, then one
approved fix applied to every item of the batch that shows the pattern.

Three steps, all pure:
1. `group_patterns` groups the merged issues of the sample's NAUGHTY items into patterns.
2. `matching_items` finds the items of the *whole* batch that show a pattern, by its quotes.
3. `item_fix.apply_pattern_fix` applies the edits a person approved on the pattern's representative
   item to another item: the same exact spans, inside that item's own sentences that show the
   pattern (the single run's scope rule), or nothing at all.

Matching is lenient (case, spacing and punctuation do not matter) so that every item showing
the defect is found; fixing is strict (`santa_core.batch.item_fix`).
"""

from __future__ import annotations

import hashlib
import json
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Literal

from pydantic import BaseModel, Field

from santa_core.batch.defect import defects_of, one_defect
from santa_core.batch.signature import SignatureCheck
from santa_core.models import MergedIssue
from santa_core.run.fixer import occurrences
from santa_core.run.gate import descriptions_agree, normalise, same_issue

MIN_QUOTE_CHARS = 8
"""Fewest non-space characters (after normalising) a quote needs to group or match items on.

Shorter quotes ("2019", "free", "$0") occur in unrelated items: matching on them would put
items into a pattern they do not show."""
EXAMPLES = 3
"""How many example items a pattern lists."""

PatternKind = Literal["issue", "review_failed", "unexplained"]
"""`issue`: a group of issues. The two buckets keep items no issue explains from being dropped:
`review_failed` (a reviewer errored: the item's defects are not fully known) and `unexplained`
(NAUGHTY without any issue listed)."""

# Scripts written without spaces between words: a quote in them may start or end mid-"word".
_UNSPACED_SCRIPTS = ("CJK", "HIRAGANA", "KATAKANA", "THAI", "LAO", "KHMER", "MYANMAR", "TIBETAN")


class SampledFailure(BaseModel):
    """One NAUGHTY sampled item: its strata, its output and the gate's merged issues."""

    item_key: str = Field(min_length=1)
    strata: dict[str, str] = Field(default_factory=dict)
    output: str
    issues: list[MergedIssue] = Field(default_factory=list)
    error: str | None = None
    """Set when a review of this item failed (error, timeout, invalid answer)."""


class PatternMember(BaseModel):
    """One merged issue of one sampled item, as part of a pattern."""

    item_key: str
    index: int
    """Position of the issue in that item's `SampledFailure.issues`."""
    issue: MergedIssue
    quoted: bool
    """The issue's evidence is long enough and found in the item's own output."""


class Pattern(BaseModel):
    """Issues of the sample that say the same thing, with where they occur."""

    key: str
    """Stable: the same failures give the same key, whatever their order."""
    kind: PatternKind = "issue"
    criterion: str
    title: str
    """The most common description (for a bucket: what happened)."""
    evidence: list[str] = Field(default_factory=list)
    """Distinct quotes (up to case, spacing and punctuation), most common first."""
    match_on: list[str] = Field(default_factory=list)
    """The quotes batch items are matched on: long enough and found in their sampled item."""
    items: list[str]
    """Sampled item keys that show the pattern, sorted."""
    count: int
    strata: dict[str, dict[str, int]] = Field(default_factory=dict)
    """Stratum column → value → number of the pattern's sampled items."""
    examples: list[str] = Field(default_factory=list)
    representative: str
    """The item whose issue is most typical: the fix is proposed and approved on it."""
    members: list[PatternMember] = Field(default_factory=list)
    signature: list[str] = Field(default_factory=list)
    """Phrases that recognise the defect in unsampled items (`santa_core.batch.signature`), validated
    against the sample; empty when none could be (then only exact quotes and sampled items are reached)."""
    signature_check: SignatureCheck | None = None
    """How the signature fared on the sample it was derived from (None: not derived)."""

    @property
    def matchable(self) -> bool:
        """Whether batch items can be matched automatically (else: fix the items by hand)."""
        return self.kind == "issue" and (bool(self.signature) or any(usable_quote(q) for q in self.match_on))

    def quoted_in(self, key: str) -> list[str]:
        """The quotes of this pattern the desk found in one sampled item's own text."""
        return [m.issue.evidence for m in self.members if m.item_key == key and m.quoted]


# --- grouping ----------------------------------------------------------------------------


def usable_quote(quote: str) -> bool:
    """Long enough to say something specific about the text."""
    return len(normalise(quote).replace(" ", "")) >= MIN_QUOTE_CHARS


def _unspaced(char: str) -> bool:
    """Whether the character belongs to a script written without spaces between words."""
    return unicodedata.name(char, "").startswith(_UNSPACED_SCRIPTS)


def _edge_ok(hay: str, i: int, edge: str) -> bool:
    """A match may not start or end inside a word ('all orders' is not in 'small orders')."""
    return i < 0 or i >= len(hay) or hay[i] == " " or _unspaced(edge) or _unspaced(hay[i])


def found_in(hay: str, quote: str) -> bool:
    """Whether the normalised quote occurs in the normalised text on word boundaries."""
    for start in occurrences(hay, quote):
        if _edge_ok(hay, start - 1, quote[0]) and _edge_ok(hay, start + len(quote), quote[-1]):
            return True
    return False


def _linked(a: PatternMember, b: PatternMember, qa: str, qb: str) -> bool:
    """Two issues on one criterion are one pattern: the same quote, or the same complaint.

    qa and qb are the normalised quotes, computed once per issue by the caller.
    """
    if qa and qb and set(qa.split()).isdisjoint(qb.split()):
        return False  # every rule below needs the quotes to share a word: the common case, made cheap
    if usable_quote(qa) and qa == qb:
        # The very same text flagged on one criterion is one defect of the batch, however the
        # reviewers worded their complaint.
        return True
    if same_issue(a.issue, b.issue):  # its quote check and its ratio's bounds come first: both cheap
        return True
    # Across items a reviewer often quotes part of the sentence another quoted whole. Unlike in
    # the gate, a quote inside another groups them, but only when the complaints agree.
    inside = usable_quote(qa) and usable_quote(qb) and (found_in(qa, qb) or found_in(qb, qa))
    return inside and descriptions_agree(a.issue, b.issue)


def _components(members: list[PatternMember]) -> list[list[PatternMember]]:
    """Groups of linked issues, criterion by criterion (union-find: A~B and B~C put A, B, C together)."""
    by_criterion: dict[str, list[PatternMember]] = {}
    for member in members:
        by_criterion.setdefault(normalise(member.issue.criterion), []).append(member)
    return [group for same in by_criterion.values() for group in _union(same)]


def _union(members: list[PatternMember]) -> list[list[PatternMember]]:
    """Connected components of `_linked` among issues of one criterion."""
    parent = list(range(len(members)))
    quotes = [normalise(m.issue.evidence) for m in members]

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    # What each group flags (`defect`): two issues flagging different words are two defects however alike their
    # sentences, and a group is never joined through an issue that flags nothing to one flagging other words.
    flags = [defects_of([m.issue]) for m in members]
    for i in range(len(members)):
        for j in range(i):
            ri, rj = root(i), root(j)
            if ri != rj and one_defect(flags[ri], flags[rj]) and _linked(members[i], members[j], quotes[i], quotes[j]):
                parent[ri] = rj
                flags[rj] = flags[rj] | flags[ri]
    groups: dict[int, list[PatternMember]] = {}
    for i, member in enumerate(members):
        groups.setdefault(root(i), []).append(member)
    return list(groups.values())


def _top(values: Iterable[str]) -> list[str]:
    """Distinct values, most common first; ties shortest first, then alphabetical."""
    counts = Counter(values)
    return sorted(counts, key=lambda v: (-counts[v], len(v), v))


def _key(kind: str, criterion: str, evidence: Iterable[str], descriptions: Iterable[str]) -> str:
    """A short hash of what the pattern is about, independent of item order."""
    signature = [
        kind,
        normalise(criterion),
        sorted({normalise(e) for e in evidence}),
        sorted({normalise(d) for d in descriptions}),
    ]
    return "p-" + hashlib.sha256(json.dumps(signature).encode()).hexdigest()[:12]


def _strata(items: list[str], strata: dict[str, dict[str, str]]) -> dict[str, dict[str, int]]:
    """Column → value → count over the items, sorted for stable output."""
    counts: dict[str, Counter[str]] = {}
    for item in items:
        for column, value in strata[item].items():
            counts.setdefault(column, Counter())[value] += 1
    return {c: dict(sorted(counts[c].items())) for c in sorted(counts)}


def _representative(members: list[PatternMember]) -> PatternMember:
    """The member with a verified quote shared by most members, flagged by both reviewers if possible."""
    quotes = Counter(normalise(m.issue.evidence) for m in members if m.issue.evidence.strip())
    words = Counter(normalise(m.issue.description) for m in members)
    return min(
        members,
        key=lambda m: (
            not m.quoted,
            -quotes[normalise(m.issue.evidence)],
            m.issue.flagged_by != "both",
            -words[normalise(m.issue.description)],
            m.item_key,
            m.index,
        ),
    )


def _evidence(members: list[PatternMember]) -> tuple[list[str], list[str]]:
    """(distinct quotes most common first, the quotes usable for matching) of one pattern."""
    spellings: dict[str, list[str]] = {}
    for m in members:
        if normalise(m.issue.evidence):
            spellings.setdefault(normalise(m.issue.evidence), []).append(m.issue.evidence)
    order = sorted(spellings, key=lambda n: (-len(spellings[n]), n))
    # Of a quote's spellings show the most common; on a tie the longest, which keeps its punctuation.
    shown = {n: min(Counter(spellings[n]).items(), key=lambda sc: (-sc[1], -len(sc[0]), sc[0]))[0] for n in order}
    verified = {normalise(m.issue.evidence) for m in members if m.quoted}
    return [shown[n] for n in order], [shown[n] for n in order if n in verified]


def _examples(representative: str, items: list[str]) -> list[str]:
    return [representative, *[i for i in items if i != representative]][:EXAMPLES]


def _pattern(members: list[PatternMember], strata: dict[str, dict[str, str]]) -> Pattern:
    """One pattern from one connected group of issues."""
    members = sorted(members, key=lambda m: (m.item_key, m.index))
    items = sorted({m.item_key for m in members})
    evidence, match_on = _evidence(members)
    criterion = _top(m.issue.criterion for m in members)[0]
    representative = _representative(members).item_key
    return Pattern(
        key=_key("issue", criterion, evidence, (m.issue.description for m in members)),
        criterion=criterion,
        title=_top(m.issue.description for m in members)[0],
        evidence=evidence,
        match_on=match_on,
        items=items,
        count=len(items),
        strata=_strata(items, strata),
        examples=_examples(representative, items),
        representative=representative,
        members=members,
    )


def rebuild(members: Iterable[PatternMember], strata: Mapping[str, dict[str, str]]) -> Pattern:
    """One pattern from the members of several (patterns found to be one defect, `generalise`)."""
    return _pattern(list(members), dict(strata))


def _bucket(kind: PatternKind, failures: list[SampledFailure], title: Callable[[list[SampledFailure]], str]) -> Pattern:
    """Items no issue pattern explains, kept together so none is silently dropped."""
    items = sorted(f.item_key for f in failures)
    strata = {f.item_key: f.strata for f in failures}
    return Pattern(
        key=kind.replace("_", "-"),
        kind=kind,
        criterion="",
        title=title(failures),
        items=items,
        count=len(items),
        strata=_strata(items, strata),
        examples=items[:EXAMPLES],
        representative=items[0],
    )


def _buckets(failures: list[SampledFailure]) -> list[Pattern]:
    """The review-failed and unexplained buckets, when they are not empty."""
    errored = [f for f in failures if f.error is not None]
    bare = [f for f in failures if f.error is None and not f.issues]
    buckets = []
    if errored:
        buckets.append(
            _bucket("review_failed", errored, lambda fs: f"review failed: {_top(f.error or '' for f in fs)[0]}")
        )
    if bare:
        buckets.append(_bucket("unexplained", bare, lambda fs: "NAUGHTY without any issue listed"))
    return buckets


def _checked(failures: Iterable[SampledFailure]) -> list[SampledFailure]:
    """The failures as a list; an item given twice would be counted twice, so it is refused."""
    seen: set[str] = set()
    result = list(failures)
    for failure in result:
        if failure.item_key in seen:
            raise ValueError(f"item {failure.item_key!r} appears twice in the sample's failures; pass each item once")
        seen.add(failure.item_key)
    return result


def group_patterns(failures: Iterable[SampledFailure]) -> list[Pattern]:
    """Group the sample's failures into patterns: by count (desc) then key; the buckets come last.

    Two issues are one pattern when they share the criterion and either the same quote (at least
    MIN_QUOTE_CHARS, up to case, spacing and punctuation), the gate's `same_issue`, or one quote
    inside the other with agreeing descriptions. Grouping is transitive. An item can be in several
    patterns. Items whose review failed, or that are NAUGHTY with no issue, go to their buckets.
    """
    failures = _checked(failures)
    members = [
        PatternMember(
            item_key=f.item_key,
            index=i,
            issue=issue,
            quoted=usable_quote(issue.evidence) and found_in(normalise(f.output), normalise(issue.evidence)),
        )
        for f in failures
        for i, issue in enumerate(f.issues)
    ]
    strata = {f.item_key: f.strata for f in failures}
    patterns = sorted((_pattern(g, strata) for g in _components(members)), key=lambda p: (-p.count, p.key))
    return _distinct_keys(patterns) + _buckets(failures)


def _distinct_keys(patterns: list[Pattern]) -> list[Pattern]:
    """Suffix a repeated key (two groups with the same signature), so keys stay unique."""
    seen: Counter[str] = Counter()
    for pattern in patterns:
        seen[pattern.key] += 1
        if seen[pattern.key] > 1:
            pattern.key = f"{pattern.key}-{seen[pattern.key]}"
    return patterns


def pattern_fix_issues(pattern: Pattern, item_key: str | None = None) -> list[MergedIssue]:
    """The issues of one item (default: the representative) that belong to the pattern: what the fix agent fixes."""
    key = pattern.representative if item_key is None else item_key
    found = [m.issue for m in pattern.members if m.item_key == key]
    if not found:
        raise ValueError(f"item {key!r} has no issue in pattern {pattern.key}; pick one of {pattern.items}")
    return found


# --- matching the whole batch ------------------------------------------------------------


def matches(pattern: Pattern, output: str) -> bool:
    """Whether the output contains one of the pattern's quotes (case, spacing, punctuation ignored)."""
    return _shows(normalise(output), _quotes(pattern))


def _quotes(pattern: Pattern) -> list[str]:
    # Usable again here: a stored or hand-built pattern must not match on a generic quote either.
    return [normalise(q) for q in pattern.match_on if usable_quote(q)] if pattern.kind == "issue" else []


def _shows(hay: str, quotes: Sequence[str]) -> bool:
    return any(found_in(hay, q) for q in quotes)


def matching_items(pattern: Pattern, items: Iterable[tuple[str, str]]) -> list[str]:
    """Keys of the batch items (key, output) that show the pattern, in the order given.

    An item shows it when its output contains a quote of `match_on`, or when it is one of the
    pattern's sampled items (reviewers saw the defect there, even if their quote was inexact).
    The review-failed and unexplained buckets match nothing: there is no defect to look for.
    """
    if pattern.kind != "issue":
        return []
    quotes, sampled = _quotes(pattern), set(pattern.items)
    return [key for key, output in items if key in sampled or _shows(normalise(output), quotes)]
