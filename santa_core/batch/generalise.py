"""One defect in varied sentences is one pattern, with a signature that finds it in unsampled items.

`patterns.group_patterns` joins two issues when their quotes share most of their words. When a
batch says the same wrong thing in sentences that vary more than that ("Your savings are
guaranteed within 4 days for every plan", "Results are guaranteed within 6 days"), the sample's
failures split into several patterns, and each pattern's signature is refused because the
others' items show it too. `generalise` joins such patterns first:

- a *family* is the issue patterns of one criterion whose descriptions agree (`gate.descriptions_agree`);
- two patterns of a family are one defect when their verified quotes share a specific phrase
  (`signature.phrases`) that no sampled item outside the family shows: the sample itself says
  the phrase tells the defect apart;
- the joined patterns are rebuilt from all their members, then every issue pattern gets its
  signature, derived from its quotes and checked against every other sampled item.

Pure. A family's patterns that share no clean phrase stay apart (when unsure, two patterns stay
two decisions: a person can approve both, but a wrong merge would fix the wrong items).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from santa_core.batch import signature as sig
from santa_core.batch.defect import defects_of, one_defect, title
from santa_core.batch.patterns import Pattern, PatternMember, rebuild
from santa_core.models import Criterion
from santa_core.run.gate import descriptions_agree, normalise


def generalise(
    found: Sequence[Pattern], reviewed: Mapping[str, str], strata: Mapping[str, dict[str, str]]
) -> list[Pattern]:
    """The sample's patterns with one defect's patterns joined, each issue pattern with its signature.

    `reviewed`: every reviewed sampled item's key → the text its reviewers saw; `strata`: key → its
    strata (for the rebuilt patterns' counts).
    """
    issue = [p for p in found if p.kind == "issue"]
    parent = list(range(len(issue)))
    flags = [defects_of(m.issue for m in p.members) for p in issue]

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for family in _families(issue):
        inside = {k for i in family for k in issue[i].items}
        outside = [normalise(t) for k, t in reviewed.items() if k not in inside]
        candidates = {i: _phrases(issue[i]) for i in family}
        index = sig.grams(set().union(*candidates.values()))
        clean = {p for t in outside for p in sig.shown_in(t, index)}  # each text read once, not once a phrase
        phrases = {i: candidates[i] - clean for i in family}
        for a in family:
            for b in family:
                ra, rb = root(a), root(b)
                # A shared phrase may be the context (a product name both defects' sentences mention), not the
                # defect: patterns flagging different words stay two (`defect`).
                if a < b and ra != rb and one_defect(flags[ra], flags[rb]) and phrases[a] & phrases[b]:
                    parent[rb] = ra
                    flags[ra] = flags[ra] | flags[rb]
    groups: dict[int, list[int]] = {}
    for i in range(len(issue)):
        groups.setdefault(root(i), []).append(i)
    joined = [
        issue[g[0]] if len(g) == 1 else rebuild([m for i in g for m in issue[i].members], strata)
        for g in groups.values()
    ]
    joined.sort(key=lambda p: (-p.count, p.key))
    return [signed(p, reviewed) for p in joined] + [p for p in found if p.kind != "issue"]


def signed(pattern: Pattern, reviewed: Mapping[str, str]) -> Pattern:
    """The pattern with its signature derived from its verified quotes and checked against the sample."""
    if pattern.kind != "issue":
        return pattern
    members = set(pattern.items)
    found = {k: t for k, t in reviewed.items() if k in members}
    others = {k: t for k, t in reviewed.items() if k not in members}
    derived = sig.derive({k: (t, pattern.quoted_in(k)) for k, t in found.items()}, others)
    check = sig.check(derived, found, others)
    return pattern.model_copy(update={"signature": derived if check.valid else [], "signature_check": check})


def _families(issue: Sequence[Pattern]) -> list[list[int]]:
    """Indexes of the patterns of one criterion whose descriptions agree (transitively), two or more a family."""
    family = list(range(len(issue)))

    def root(i: int) -> int:
        while family[i] != i:
            i = family[i]
        return i

    for a in range(len(issue)):
        for b in range(a + 1, len(issue)):
            if root(a) != root(b) and _agree(issue[a], issue[b]):
                family[root(b)] = root(a)
    groups: dict[int, list[int]] = {}
    for i in range(len(issue)):
        groups.setdefault(root(i), []).append(i)
    return [g for g in groups.values() if len(g) > 1]


def _agree(a: Pattern, b: Pattern) -> bool:
    if normalise(a.criterion) != normalise(b.criterion):
        return False
    return any(descriptions_agree(x.issue, y.issue) for x in _heads(a) for y in _heads(b))


def _heads(pattern: Pattern) -> list[PatternMember]:
    return pattern.members[:3]


def _phrases(pattern: Pattern) -> set[str]:
    return {p for m in pattern.members if m.quoted for p in sig.phrases(m.issue.evidence)}


def named(found: Sequence[Pattern], criteria: Iterable[Criterion]) -> list[Pattern]:
    """Each issue pattern titled for people (`defect.title`): its criterion's name (the id when the rubric has no
    such criterion) and the phrase its items share; the review-failed and unexplained buckets keep their titles."""
    names = {normalise(c.id): c.name for c in criteria}
    return [
        p
        if p.kind != "issue"
        else p.model_copy(
            update={
                "title": title(
                    names.get(normalise(p.criterion), p.criterion),
                    (m.issue for m in p.members),
                    p.signature,
                    p.evidence,
                )
            }
        )
        for p in found
    ]
