"""Every text check of the desk as one callable over one untrusted text, for the linear-time fuzz test and the bench.

A *text check* is any code that reads a spec, an output, a reviewer's or fix agent's answer, a batch file or a
rubric author's words with patterns. Each entry feeds the whole text through one check's public door, the way the
desk does, so a pattern that backtracks anywhere behind it shows up as time that grows faster than the text.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable

import pytest

from santa_core import scope
from santa_core.batch import reach, signature
from santa_core.batch.defect import flagged
from santa_core.batch.file import read_batch
from santa_core.batch.formats import BatchFileError
from santa_core.batch.generalise import generalise
from santa_core.batch.item_fix import apply_pattern_fix, apply_to_batch, quote_spans
from santa_core.batch.patterns import (
    Pattern,
    PatternMember,
    SampledFailure,
    group_patterns,
    matches,
)
from santa_core.checks import bounded, carriers, decoded, injection, injection_patterns, languages, structure
from santa_core.checks.criteria import run_criterion_checks
from santa_core.checks.echo import echo_of
from santa_core.checks.extraction import found_quotes
from santa_core.checks.folding import fold
from santa_core.checks.injection import detect_injection
from santa_core.checks.screen import answered_key
from santa_core.checks.signals import Context
from santa_core.models import (
    CheckResult,
    Criterion,
    CriterionDraft,
    FixEdit,
    FixPlan,
    MergedIssue,
    Review,
    ReviewIssue,
    Rubric,
    RubricDraft,
)
from santa_core.reviewers.prompts import build_fix_prompt, build_review_prompt, neutralise
from santa_core.rubrics.lint import lint
from santa_core.run.fixer import apply_plan
from santa_core.run.gate import descriptions_agree, normalise, same_issue
from santa_core.scope import sentence_spans, stands_in
from santa_core.sentence_diff import sentence_diff
from santa_core.text import text_problem
from ui.safe import escape_markdown

TextCheck = Callable[[str], object]

_CHECKS = [
    {"type": "forbidden_terms", "terms": ["risk-free", "guaranteed returns", "[x]"]},
    {"type": "required_phrases", "phrases": ["terms apply", "..."]},
    {"type": "regex_forbidden", "pattern": r"\bfree\s+money\b", "ignore_case": True},
    {"type": "no_secrets"},
    {"type": "links_allowed", "domains": ["example.com"]},
    {"type": "max_words", "max": 10},
    {"type": "max_chars", "max": 10},
    {"type": "reading_grade", "max": 8},
    {"type": "valid_json"},
    {"type": "valid_yaml"},
    {"type": "python_parses"},
]
RUBRIC = Rubric(
    name="every-check",
    version=1,
    criteria=[
        Criterion(
            id=f"c{i}",
            name=f"check {i}",
            category="compliance",
            pass_condition="passes its check",
            fail_signal="its check fails",
            check=check,
        )
        for i, check in enumerate(_CHECKS)
    ],
)


def _review(text: str) -> Review:
    return Review(
        verdict="PASS",
        checks=[CheckResult(criterion="c0", result="PASS", detail=text)],
        critical_issues=[],
        suggestions=[text],
    )


def _issue(text: str) -> ReviewIssue:
    return ReviewIssue(criterion="c0", description=text, evidence=text[:2000])


def _pattern(text: str) -> Pattern:
    quote = text[:60] or "x"
    issue = MergedIssue(criterion="c0", description=text[:200], evidence=quote, flagged_by="B")
    member = PatternMember(item_key="i1", index=0, issue=issue, quoted=True)
    return Pattern(
        key="p",
        criterion="c0",
        title="t",
        evidence=[quote],
        match_on=[quote],
        items=["i1"],
        count=1,
        representative="i1",
        members=[member],
        signature=[quote, "guaranteed returns"],
    )


def _half(text: str) -> str:
    return text[: len(text) // 2] or "x"


def _long_quotes(text: str) -> list[str]:
    """Quotes as long as the text: all of it, all of it and a word it does not hold (read to the end of the text from
    every start before it fails: the old quote pattern's worst case), and its first 1,000 words."""
    return [text, f"{text} zq", " ".join(text.split()[:1000])]


def _long_pattern(text: str) -> Pattern:
    """A pattern whose quotes, description and signature are as long as the text (a reviewer's answer has no limit)."""
    quotes = _long_quotes(text)
    issue = MergedIssue(criterion="c0", description=text, evidence=text, flagged_by="B")
    member = PatternMember(item_key="i1", index=0, issue=issue, quoted=True)
    return Pattern(
        key="p",
        criterion="c0",
        title=text[:200],
        evidence=quotes,
        match_on=quotes,
        items=["i1"],
        count=1,
        representative="i1",
        members=[member],
        signature=[_half(text), "guaranteed returns"],
    )


def _long_batch(text: str) -> object:
    """A sample whose issues quote and describe at the text's length, grouped, joined and signed (`generalise`): the
    whole text quoted, half of it quoted (inside the other quote, found at every place the text repeats it) with the
    description reversed, and no quote with a description as long as the text."""
    failures = [
        SampledFailure(
            item_key=key,
            output=output,
            issues=[MergedIssue(criterion="c0", description=description, evidence=evidence, flagged_by="B")],
        )
        for key, output, description, evidence in [
            ("a", text, text, text),
            ("b", text, text[::-1], _half(text)),
            ("c", f"{text} zq", f"{text} x", ""),
        ]
    ]
    patterns = group_patterns(failures)
    return generalise(
        patterns,
        {f.item_key: f.output for f in failures} | {"n": text[len(text) // 2 :]},
        {f.item_key: {} for f in failures} | {"n": {}},
    )


def _unquoted(text: str) -> ReviewIssue:
    return ReviewIssue(criterion="c0", description=text)


def _draft(text: str) -> RubricDraft:
    return RubricDraft(
        name="r",
        description=text,
        criteria=[
            CriterionDraft(id="c1", name=text[:80], category="compliance", pass_condition=text, fail_signal=text),
            CriterionDraft(id="c2", name="other", category="compliance", pass_condition=text[::-1], fail_signal="x"),
        ],
    )


def _signature_typed(text: str) -> object:
    """A person's signature, one phrase a line: the text's lines, each made distinct and long enough to be usable."""
    try:
        return signature.parse(
            "\n".join(f"guaranteed {i} {line} returns" for i, line in enumerate(text.splitlines() or [text]))
        )
    except ValueError as exc:
        return exc


def _csv(text: str) -> object:
    body = text.replace('"', '""')
    try:
        return read_batch(f'id,output\n1,"{body}"\n2,"x{body[::-1]}"\n'.encode(), "batch.csv")
    except BatchFileError as exc:  # a whitespace-only output is refused: the time to say so counts too
        return exc


def _long_reach(text: str) -> object:
    """The batch reach path with a long pattern: which texts it reaches, and the text rule and the unfixed check of
    a fix whose 'before' is half the text, both told the signature's issues (worked out once, as the desk does: the
    same call twice timed nothing more)."""
    pattern = _long_pattern(text)
    edits = [FixEdit(issue=0, before=_half(text), after="y")]
    issues = reach.signature_issues(pattern, text)
    return (
        reach.reached(pattern, [("u", text)], {"u"}),
        reach.text_rule(text, edits, issues),
        reach.unfixed(text, text, edits, issues),
    )


_STRUCTURE_CONTEXT = Context(criteria=("no_outcome_guarantees", "No outcome guarantees", "Completeness", "security"))

TEXT_CHECKS: dict[str, TextCheck] = {
    "injection detector (output)": lambda t: (injection._answers.clear(), detect_injection(t)),  # not its memory
    "fold (case kept)": lambda t: fold(t, casefold=False),
    # The hidden carriers, and each one's inner text as the detector will read it; the decoded views, read again.
    "hidden carriers": lambda t: (carriers.find(t), carriers.hidden_texts(t)),
    # the views as made (each view's text is read by the layers the detector's own entry fuzzes)
    "decoded views": decoded.views_read,
    "languages (lexicon of every language)": languages.find,
    "criterion checks (every type)": lambda t: run_criterion_checks(RUBRIC, t),
    "sentence splitter": lambda t: (sentence_spans.cache_clear(), sentence_spans(t)),
    # A quote found once, so the scope is the sentence around it: the splitter and the anchor both read the text.
    "fix scope": lambda t: (
        sentence_spans.cache_clear(),
        scope._folded.cache_clear(),
        scope.scope_of(f"{t} Unique claim here. {t}", "Unique claim here"),
    ),
    # a short quote, and a reviewer's quote of a third of the text (a quote has no length limit)
    "evidence search": lambda t: (
        scope._folded.cache_clear(),
        stands_in(t, t[len(t) // 3 : len(t) // 3 + 12]),
        stands_in(t, t[len(t) // 3 : 2 * len(t) // 3]),
    ),
    "fix plan": lambda t: apply_plan(
        t,
        FixPlan(edits=[FixEdit(issue=0, before=t[:30] or "x", after="y")]),
        [MergedIssue(criterion="c0", description="d", evidence=t[:30], flagged_by="B")],
    ),
    # The output gives a verdict about its review, so the check reads every word of the answer's prose.
    "echo check": lambda t: echo_of(_review(t), t + " The reviewers approved this text."),
    "issue merging": lambda t: same_issue(_issue(t), _issue(t[::-1])),
    "fence neutraliser": neutralise,
    "review prompt": lambda t: build_review_prompt(RUBRIC, t, t),
    "fix prompt": lambda t: build_fix_prompt(
        t, t, [MergedIssue(criterion="c0", description=t[:500], evidence=t[:200], flagged_by="B")]
    ),
    "screen answer": lambda t: answered_key(t, "k3y-0123456789abcdef"),
    # The extraction check's judge: a quote of the text's middle third (found), quotes it does not hold, and an answer
    # as long as the text read against a short text (every line a quote to look for, up to its bound).
    "extraction check quotes": lambda t: (
        found_quotes(t, f"{t[len(t) // 3 : 2 * len(t) // 3]}\n{t[:200]} zq\n{t[::-1][:200]}"),
        found_quotes(t[:1000], t),
    ),
    "text size rule": lambda t: text_problem(t, "output", limit=10**7),
    "batch signature": lambda t: (
        signature.recognises([t[:40] or "x", "guaranteed returns"], t),
        signature.raw_spans(t, ["risk free returns", t[:20] or "x"]),
    ),
    "batch signature phrases": lambda t: signature.phrases(t[:2000]),
    "batch signature (a person's)": lambda t: _signature_typed(t),
    "batch pattern reach": lambda t: (matches(_pattern(t), t), quote_spans(t, [t[:30] or "x"])),
    "batch pattern fix": lambda t: apply_pattern_fix(t, [FixEdit(issue=0, before=t[:30] or "x", after="y")]),
    # The batch reach path with quotes, phrases, descriptions and a fix's 'before' as long as the text.
    "batch quote spans (long quotes)": lambda t: quote_spans(t, _long_quotes(t)),
    "batch signature spans (long phrases)": lambda t: signature.raw_spans(t, _long_quotes(t)),
    "batch signature (long phrase)": lambda t: (
        signature.recognises([_half(t)], t),
        signature.shows(normalise(t), normalise(_half(t))),
    ),
    "batch signature derivation (long quotes)": lambda t: signature.derive(
        {"i1": (t, [t]), "i2": (t[::-1], [" ".join(t[::-1].split()[:1000])])}, {"o1": t[len(t) // 2 :]}
    ),
    "batch reach (long quotes)": _long_reach,
    # Quotes that do not stand in the text, so its words are compared run by run with each of theirs.
    "batch defect in a sentence (long quotes)": lambda t: reach.defect_in(t, [f"{t} qzx", f"qzx {t[::-1]}"], [t[:40]]),
    "batch fix reach (long quotes)": lambda t: apply_to_batch(
        _long_pattern(t), [FixEdit(issue=0, before=_half(t), after="y")], [("i1", t), ("u", t), ("v", t[::-1])]
    ),
    "batch pattern fix (long before)": lambda t: apply_pattern_fix(t, [FixEdit(issue=0, before=_half(t), after="y")]),
    "batch patterns (long quotes and descriptions)": _long_batch,
    "issue merging (long descriptions)": lambda t: (
        same_issue(_unquoted(t), _unquoted(t[::-1])),
        descriptions_agree(_unquoted(t), _unquoted(t[::-1])),
    ),
    "batch file (CSV)": _csv,
    "rubric lint": lambda t: lint(_draft(t)),
    "markdown escape (pages)": escape_markdown,
    "sentence diff (pages)": lambda t: sentence_diff(t, t[: len(t) // 2] + "Changed here. " + t[len(t) // 2 :]),
    # The structural signals with a rubric's criteria told (ids, names, a common word), so (a) reads the text too.
    "structural signals": lambda t: structure.find(t, _STRUCTURE_CONTEXT),
    "batch defect phrase (quoted)": lambda t: flagged(
        MergedIssue(criterion="c0", description=t, evidence=t[::-1], flagged_by="both")
    ),
}
"""Each text check's door, by name."""


STALLING = "-" * 60
"""A run of dashes on which `stall_the_detector`'s extra pattern would take about 2**60 steps."""


def stall_the_detector(monkeypatch: pytest.MonkeyPatch, budget_s: float) -> None:
    """The injection detector with one more pattern that backtracks exponentially on a run of dashes (a pattern gone
    wrong, as the end-of-data marker was), and a budget of `budget_s` CPU seconds: only the budget stops it."""
    slow = injection_patterns.InjectionPattern("slow", "marker", bounded.Pattern(r"(?:-|--)+x"))
    monkeypatch.setattr(injection_patterns, "PATTERNS", (*injection_patterns.PATTERNS, slow))
    monkeypatch.setattr(injection, "DETECTOR_BUDGET_S", budget_s)
    monkeypatch.setattr(injection, "_answers", OrderedDict())  # answers of this test only, forgotten after it
