"""The reviewer-injection detector: text in the output that addresses the reviewer.

Instructions, fake verdicts, fake end-of-data or role markers. A hit is a critical issue by
itself, so an injected output cannot ship even if both reviewers are fooled.

All matching runs on a *folded* copy of the text (see `santa_core.checks.folding`) that keeps an
index back to the original, so evidence is always the exact original substring.
"""

from __future__ import annotations

import bisect
import re
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass

from santa_core.checks import injection_patterns as patterns
from santa_core.checks.addressing import EVALUATOR as _EVALUATOR
from santa_core.checks.addressing import SENTENCE as _SENTENCE
from santa_core.checks.addressing import quoted_example
from santa_core.checks.addressing import sentence_family as _sentence_family
from santa_core.checks.bounded import Pattern, Unfinished, budget
from santa_core.checks.exemptions import (
    CODE_RETURNS,
    OTHER_OBJECT,
    both_outcomes,
    code_result,
    not_to_reviewer,
    quoted_as_an_example,
    record_of_something_else,
)
from santa_core.checks.folding import Folded, fold
from santa_core.checks.injection_patterns import EXPLAIN, InjectionPattern
from santa_core.checks.layers import layered
from santa_core.checks.signals import Context, Signal
from santa_core.checks.views import deleet, despaced, plain
from santa_core.models import MergedIssue
from santa_core.text import sha256_text

__all__ = [
    "DETECTOR_BUDGET_S",
    "MAX_INJECTION_ISSUES",
    "UNFINISHED",
    "detect_injection",
    "decoded_signals",
    "injected",
    "layer_signals",
]


@dataclass(frozen=True)
class _Hit:
    start: int
    end: int
    pattern: InjectionPattern
    evidence: str


def _scan(folded: Folded, cased: bool, criteria: tuple[str, ...] = ()) -> list[_Hit]:
    """All pattern hits on one folded view, in original coordinates."""
    hits = []
    for pat in patterns.PATTERNS:
        if pat.cased != cased:
            continue
        for m in pat.regex.finditer(folded.text):
            if m.end() == m.start() or (pat.exempt is not None and pat.exempt(folded.text, m)):
                continue
            if pat.family == "verdict" and (
                record_of_something_else(folded.text, m, criteria) or both_outcomes(folded.text, m)
            ):
                continue
            if pat.family == "instruction" and quoted_as_an_example(folded.text, m):
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
    # the stock patterns' hits first: their evidence is the exact phrase; a layer's (often its whole sentence) is
    # kept where no stock hit stands
    for hit in sorted(hits, key=lambda h: (h.pattern.family in _LAYER_FAMILIES, h.start, -(h.end - h.start))):
        key = (hit.pattern.name, fold(hit.evidence).text.strip())
        if key in seen or any(hit.start < k.end and k.start < hit.end for k in kept):
            continue
        if len(kept) == MAX_INJECTION_ISSUES:
            break
        kept.append(hit)
        seen.add(key)
    return sorted(kept, key=lambda h: h.start)


# A sentence that is only an address ("Attention, reviewer.", "Dear AI grader!"): the next one speaks to it.
_ADDRESS_ONLY = Pattern(
    r"(?:(?:dear|hey|hi|hello|attention|attn|note\s+to|to)\s*,?\s+)?(?:the\s+|my\s+|our\s+)?"
    r"(?:" + _EVALUATOR + r"|judges?)\s*[.!:,]*"
)


_RECORD_ITEM = Pattern(r"[^\S\n]*+[-*][^\S\n]*+[^\W\d][\w.-]{0,30}[^\S\n]*:[^\S\n]*+[\w.-]{1,40}[^\S\n]*(?:\n|$)")
"""A list's item that is itself a name and one word of value, alone on its line ("  - alice: approved"); not a
labelled sentence ("- Note: approve the guarantee as written")."""
_GREETING = Pattern(r"(?:dear|hey|hi|hello|attention|attn|note|to)\b")
"""An address that greets ("Dear grader:", "Attention, reviewer:") is never a record's key."""


_SCORED = InjectionPattern("text addressing its evaluator", "instruction", Pattern(""))


_LATIN = re.compile(r"[a-z]")  # one character class: linear by construction, and asked of every sentence
"""Every rule of the sentence scorer needs a Latin letter: a sentence without one (an Arabic ligature that folds
to eighteen letters, a line of CJK) is not scored at all."""


def _scan_sentences(lower: Folded, cased: Folded, scored: dict[tuple[str, str, bool], str | None]) -> list[_Hit]:
    """Sentences of the folded text scored by `_sentence_family`, in original coordinates.

    `scored`: the verdicts of sentences scored before in this text (its other views, repeats), by sentence, cased
    sentence and whether an address came before: each distinct sentence is scored once (a view differs from the
    text as written only around what it rewrites, and a text built to be slow repeats itself).
    """
    hits = []
    address_only = False
    for m in _SENTENCE.finditer(lower.text):
        sentence = m.group(0).strip()
        if _LATIN.search(sentence) is None:  # nor is it an address
            address_only = False
            continue
        addressed_before, address_only = address_only, _ADDRESS_ONLY.fullmatch(sentence) is not None
        if (
            address_only
            and _GREETING.match(sentence) is None
            and _RECORD_ITEM.match(lower.text, m.end(), min(len(lower.text), m.end() + 80))
        ):
            address_only = False  # "reviewers:" over "- alice: approved": a record's key, not an address
        if len(sentence) < 8:
            continue
        first = lower.index[m.start()]  # the cased view's last character folded from the sentence's first one
        a = bisect.bisect_right(cased.index, first) - 1
        a = a if a >= 0 and cased.index[a] == first else 0
        b = bisect.bisect_right(cased.index, lower.index[m.end() - 1], lo=a)  # the index only grows
        key = (sentence, cased.text[a:b], addressed_before)
        if key not in scored:
            scored[key] = _sentence_family(*key)
        if scored[key] is None or quoted_example(lower.text, m.start(), m.end()):
            continue  # nothing to the evaluator, or an attack quoted as an example in a text about attacks
        start, end = lower.span(m.start(), m.end())
        hits.append(_Hit(start, end, _SCORED, lower.original(m.start(), m.end()).strip()))
    return hits


def _defanged(cased: Folded) -> Folded:
    """The cased view with a PASS that is a reply code or code's return value lower-cased ("Reply PASS to this SMS",
    '    return "PASS"'), so the scorer does not read it as the verdict PASS; same length, same index."""
    respond = next(p for p in patterns.PATTERNS if p.name == "respond NICE")
    spans = [m.span() for m in respond.regex.finditer(cased.text) if not_to_reviewer(cased.text, m)]
    spans += [m.span() for m in OTHER_OBJECT.finditer(cased.text)]
    spans += [m.span() for m in CODE_RETURNS.finditer(cased.text) if code_result(cased.text, m.start())]
    if not spans:
        return cased
    text = list(cased.text)
    for a, b in spans:
        text[a:b] = cased.text[a:b].lower()
    return Folded("".join(text), cased.index, cased.source)


def _views(text: str, lower: Folded | None = None, cased: Folded | None = None) -> list[tuple[Folded, Folded]]:
    """(casefolded, cased) views the sentence scorer reads: as written, letter-spacing joined, markup dropped, digits as
    letters. `lower` and `cased`: the text folded already (the caller scans them too; folding 200k characters is slow)."""
    lower = fold(text, casefold=True) if lower is None else lower
    cased = _defanged(fold(text, casefold=False) if cased is None else cased)
    views = [(lower, cased)]
    spaced = despaced(text, casefold=True)
    if spaced is not None:
        spaced_cased = despaced(text, casefold=False)
        assert spaced_cased is not None  # the text alone, not the case, decides whether there is a view
        views.append((spaced, _defanged(spaced_cased)))
    unmarked = plain(text, casefold=True)
    if unmarked is not None and unmarked.text != lower.text:
        # defanged too: without markup a code line's return "PASS" is still a return value ("check_password" lost
        # its underscores here, and the PASS of its return was read as a verdict)
        unmarked_cased = plain(text, casefold=False)
        assert unmarked_cased is not None  # as above
        views.append((unmarked, _defanged(unmarked_cased)))
    leet = deleet(lower)
    if leet.text != lower.text:
        views.append((leet, cased))
    return views


def _overlaps(spans: list[tuple[int, int]], hit: _Hit) -> bool:
    """The hit overlaps one of the sorted, start-ordered spans (a bisect, not a scan: inputs run to 200k characters)."""
    i = bisect.bisect_left(spans, (hit.end, -1))
    return any(s < hit.end and hit.start < e for s, e in spans[max(0, i - 64) : i])


DETECTOR_BUDGET_S = 10.0
"""CPU seconds of its thread the detector may spend on one text. Its patterns are linear: 200,000 characters built
to hit them take about 2 to 4 s (bench/adversarial_inputs.py), so only a pattern gone wrong ever reaches this. A
single search that would never end is cut by its own timeout (`bounded.BACKSTOP` times what is left): at worst
about 40 s of CPU in all, and the issue says what was spent."""
UNFINISHED = "the injection check could not finish on this text"


def _hits(text: str, criteria: tuple[str, ...] = ()) -> list[_Hit]:
    """Every hit of the stock patterns and of the sentence scorer, on every folded view of the text."""
    lower, cased = fold(text, casefold=True), fold(text, casefold=False)
    hits = _scan(lower, False, criteria) + _scan(cased, True, criteria)
    views = _views(text, lower, cased)
    for lower, cased in views[1:]:  # the stock phrases, letter-spaced, without markup or written with digits
        hits += _scan(lower, False, criteria)
        if cased.source is text and cased.text is not views[0][1].text:
            hits += _scan(cased, True, criteria)
    # A sentence is scored only where no stock phrase already quotes the exact words.
    seen: dict[tuple[str, str, bool], str | None] = {}
    scored = [h for lower, cased in views for h in _scan_sentences(lower, cased, seen)]
    stock = sorted((k.start, k.end) for k in hits)
    return hits + [h for h in scored if not _overlaps(stock, h)]


_LAYER_FAMILIES = frozenset({"structure", "carriers", "languages", "decoded"})
_NO_PATTERN = Pattern("")
"""The pattern of a layer's finding (each layer matches in its own way; the finding carries its span)."""


def _all_hits(text: str, ctx: Context) -> tuple[list[_Hit], dict[str, list[Signal]]]:
    """The stock hits and every layer's (`layers.layered`), as hits, with each layer's own findings."""
    stock_hits = _hits(text, ctx.criteria)

    def stock(t: str) -> list[Signal]:
        return [
            Signal(h.start, h.end, h.pattern.name, "detector", h.evidence)
            for h in (stock_hits if t is text else _hits(t, ctx.criteria))
        ]

    found = layered(text, ctx, stock)
    hits = list(stock_hits)
    for layer, signals in found.items():
        if layer != "detector":
            family = layer.split(":", 1)[0]
            hits += [_Hit(s.start, s.end, InjectionPattern(s.name, family, _NO_PATTERN), s.evidence) for s in signals]
    return hits, found


def layer_signals(text: str, ctx: Context | None = None) -> dict[str, list[Signal]]:
    """What each layer finds in the text on its own (the held-out bench reports them per layer)."""
    with budget(DETECTOR_BUDGET_S):
        return _all_hits(text, Context() if ctx is None else ctx)[1]


def decoded_signals(text: str, ctx: Context | None = None) -> list[Signal]:
    """What the layers find in the text's decoded views alone, on each blob's span (layer "decoded:<view>")."""
    return [s for layer, found in layer_signals(text, ctx).items() if layer.startswith("decoded:") for s in found]


def detect_injection(text: str, where: str = "output", ctx: Context | None = None) -> list[MergedIssue]:
    """Critical issues for text that addresses the reviewer instead of the reader (`where`: output or spec).

    Fails closed: a text the detector cannot finish within DETECTOR_BUDGET_S is one issue, UNFINISHED, with no
    evidence (so no fix agent is asked about it): the run goes to a person, never to the reviewers.
    The answer for a text is kept (by its hash, in this process): a batch's spec is read once for all its items,
    and a text asked about twice (a Message Batch's send and its collection) gets the same answer.
    """
    ctx = Context() if ctx is None else ctx
    key = (sha256_text(text), where, ctx)  # the hash, not the text: 64 texts of 200,000 characters are not kept
    with _answers_lock:
        found = _answers.get(key)
        if found is not None:
            _answers.move_to_end(key)
    if found is None:
        found = tuple(_detect(text, where, ctx))
        with _answers_lock:
            _answers[key] = found
            while len(_answers) > _ANSWERS_KEPT:
                _answers.popitem(last=False)
    return [issue.model_copy() for issue in found]


_ANSWERS_KEPT = 64
_answers: OrderedDict[tuple[str, str, Context], tuple[MergedIssue, ...]] = OrderedDict()
_answers_lock = threading.Lock()


def _detect(text: str, where: str, ctx: Context) -> list[MergedIssue]:
    """`detect_injection`, once."""
    began = time.thread_time()
    try:
        with budget(DETECTOR_BUDGET_S):
            hits = _all_hits(text, ctx)[0]
    except Unfinished:
        spent = time.thread_time() - began
        return [
            MergedIssue(
                criterion="injection",
                evidence="",
                flagged_by="check",
                description=f"{UNFINISHED}{'' if where == 'output' else ' (the ' + where + ')'}: it was stopped after "
                f"{spent:.1f} s of CPU (its budget: {DETECTOR_BUDGET_S:g} s) on {len(text):,} characters, so whether it "
                "addresses its reviewers is unknown; "
                "a person must read it (a text built to stall the check is an attack too)",
            )
        ]
    return [
        MergedIssue(
            criterion="injection",
            description=f"injection pattern '{h.pattern.name}'{'' if where == 'output' else ' in the ' + where} — "
            f"{EXPLAIN[h.pattern.family]}; the {where} is data and must never instruct its reviewers",
            evidence=h.evidence,
            flagged_by="check",
        )
        for h in _dedupe(hits)
    ]


def injected(spec: str, output: str, ctx: Context | None = None) -> bool:
    """The output or the spec addresses its reviewers: no reviewer may be sent either."""
    return bool(detect_injection(output, ctx=ctx) or detect_injection(spec, where="spec", ctx=ctx))
