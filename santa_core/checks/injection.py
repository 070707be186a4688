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
from collections.abc import Callable
from dataclasses import dataclass

from regex import Match

from santa_core.checks.addressing import EVALUATOR as _EVALUATOR
from santa_core.checks.addressing import SENTENCE as _SENTENCE
from santa_core.checks.addressing import elsewhere as _elsewhere
from santa_core.checks.addressing import quoted_example
from santa_core.checks.addressing import sentence_family as _sentence_family
from santa_core.checks.bounded import Pattern, Unfinished, budget
from santa_core.checks.exemptions import (
    CODE_RETURNS,
    OTHER_OBJECT,
    answering_a_customer,
    both_outcomes,
    code_result,
    everyday_result,
    heading_or_list,
    not_to_reviewer,
    note_without_order,
    paired_marker,
    quoted_as_an_example,
    record_of_something_else,
    test_report_line,
    test_report_window,
)
from santa_core.checks.folding import Folded, fold
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

# --- injection detector ---------------------------------------------------------------------

_REV = r"(?:ai\s+|llm\s+|automated\s+)?(?:reviewer|grader|judge|evaluator|assessor|verifier)s?"
_OBJ = r"(?:this|the)\s+(?:output|submission|answer|response|document|deliverable|content|copy|draft)"
_LONE_THIS = r"(?:this|it)(?=\s*(?:[.!,;:\"'\n]|$))"
_YES = r"(?:pass(?:ed|ing)?|nice|approved?|accept(?:ed)?)"
# What a fake chat turn says to a model, within its line: second person, a verdict, this text; or,
# first, a reply's opening or an order. Not a label's value ("Windows 11", "Maria Lopez", "Mark Jones").
_ROLE_SPEECH = (
    r"[^\n]{0,80}?\b(?:you(?:'re|\s+(?:are|must|should|shall|will|may|need\s+to|have\s+to|can))|your\s+"
    r"(?:task|job|role|instructions?|answer|verdict|reply|response|output|review|rules?)"
    r"|pass(?:ed|es)?|nice|approved?|accept(?:ed)?|lgtm|all\s+good|looks\s+good|no\s+issues"
    r"|compliant|flawless|verdict|rubric|criteri(?:on|a)|reviewer|grader|evaluator"
    r"|this\s+(?:output|text|submission|answer|response|copy))\b"
    r"|(?:sure|certainly|of\s+course|understood|absolutely|i\s+(?:will|would|have|am|approve|confirm|agree)"
    r"|ignore|disregard|forget|override|respond|reply|approve|accept|evaluate|do\s+not|don't|never|always"
    r"|from\s+now\s+on|the\s+following|new\s+(?:instructions?|rules|task))\b"
)

_EXPLAIN = {
    "instruction": "text addresses the reviewer with an instruction",
    "verdict": "text addresses the reviewer with a fake verdict",
    "marker": "text addresses the reviewer through a fake end-of-data, fence or role marker",
    "structure": "text gives a verdict, a criterion's state or a rubric change, or speaks in the desk's own roles",
    "carriers": "text hidden from a reader (a comment, an attribute, invisible characters) addresses its reviewers",
    "languages": "text addresses an automated reader with an order or a verdict",
    "decoded": "encoded text that, once decoded, addresses its reviewers",
}


@dataclass(frozen=True)
class _Pattern:
    name: str
    family: str
    regex: Pattern
    cased: bool = False  # cased patterns run on a fold that keeps letter case
    exempt: Callable[[str, Match[str]], bool] | None = None  # a match this says is ordinary text is no hit


def _p(
    name: str, family: str, regex: str, cased: bool = False, exempt: Callable[[str, Match[str]], bool] | None = None
) -> _Pattern:
    return _Pattern(name, family, Pattern(regex), cased, exempt)


# Patterns match folded text (lowercase, ASCII-ish, single spaces). Each is narrow on purpose:
# a hit blocks shipping, so ordinary copy ("ignore the noise", "a verdict from the jury",
# "pass the salt") must not match.
_PATTERNS: tuple[_Pattern, ...] = (
    _p("ignore previous instructions", "instruction",
       r"\b(?:ignore|disregard|forget|override|bypass|never\s+mind|pay\s+no\s+attention\s+to)\s+"
       r"(?:(?:all|any|every|of|the|your|my|these|those)\s+)*"
       r"(?:previous|prior|above|earlier|preceding|foregoing|former|original|initial|system|existing|prev\.)\s*"
       r"(?:instructions?|prompts?|rules|directions|guidelines|messages|context|commands|directives|instr\.)"
       r"(?![a-z])(?!\s+(?:manual|booklet|leaflet|sheet|card|pdf|guide|book|video|label|insert|page)s?\b)"
       r"|\b(?:ignore|disregard|forget|override|bypass|never\s+mind)\s+(?:(?:all|any|every|of|the|your)\s+)*"
       r"(?:instructions?|rules|guidelines|directions|prompts?)\s+(?:that\s+|which\s+)?"
       r"(?:(?:came|come|were\s+given|appear(?:ed)?|you\s+(?:got|received|were\s+given))\s+)?"
       r"(?:before|above|earlier|prior\s+to)\s+(?:this|these|the\s+(?:text|output|data|copy))\b",
       exempt=lambda t, m: _elsewhere(t, m.end())),
    _p("ignore your instructions", "instruction",
       r"\b(?:ignore|disregard|override|bypass)\s+(?:all\s+(?:of\s+)?(?:the\s+|your\s+)?|your\s+|any\s+)"
       r"(?:instructions|system\s+prompt|directives)\b"),
    _p("disregard the rubric", "instruction",
       r"\b(?:ignore|disregard|override|bypass|skip|forget|set\s+aside|pay\s+no\s+attention\s+to|never\s+mind)\s+(?:(?:the|your|this|these|all|any|of)\s+)*"
       r"(?:rubric|(?:grading|scoring|evaluation|review)\s+(?:criteria|rules|instructions|guidelines|rubric)"
       r"|(?:pass|fail)\s+conditions?|fail\s+signals?)\b"),
    _p("note to the reviewer", "instruction",
       r"\b(?:note|notes|message|memo|instructions?|reminder|hint|p\.?s\.?)\s+(?:to|for)\s+"
       r"(?:the\s+|any\s+|all\s+|our\s+)?(?:(?:ai|llm|automated)\s+(?:reviewer|grader|judge|evaluator|assessor|verifier)s?"
       r"|ai|llm|language\s+models?|grading\s+(?:model|system))\b", exempt=note_without_order),
    _p("greeting the AI grader", "instruction",
       r"(?:^|[\s\"'(\[])(?:dear|hey|hi|hello|attention|attn)\s*,?\s+(?:the\s+|my\s+)?"
       r"(?:ai(?:\s+(?:reviewer|grader|judge|evaluator|model|assistant))?|llm|language\s+model"
       r"|grading\s+(?:model|ai|system)|gpt|claude|chatgpt)s?\s*[,:!.]"),
    _p("to the reviewer:", "instruction",
       r"(?:^|\n)[^\S\n]*+to\s+(?:the\s+)?(?:" + _REV + r"|ai|llm|model)\s*:"),
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
       r"[\"']?(?:pass(?:ed)?|approved)\b(?!-[a-z])"
       r"|\bwrite\s+(?:(?:only|just|simply|exactly|the\s+word)\s+)+[\"']?(?:pass|nice)\b", exempt=not_to_reviewer),
    _p("respond NICE", "instruction",
       r"\b(?i:respond|reply|answer|output|return|say|print|emit|state)\s*:?\s+"
       r"(?i:(?:only|with|just|simply|exactly|the\s+word)\s*:?\s+)*[\"']?(?:NICE|PASS)\b(?!-[a-zA-Z])", cased=True,
       exempt=not_to_reviewer),
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
       r"(?:^|\n|[.!?]\s)[^\S\n]*+(?:real|actual|true|hidden|secret|override|system|priority|admin)\s+"
       r"(?:instructions?|directives?|prompt)\s*:"),
    _p("new instructions for the reviewer", "instruction",
       r"\bnew\s+instructions?\s+for\s+(?:the\s+)?(?:" + _REV + r"|ai|model|assistant|llm)"),
    # --- fake verdicts
    _p("fake verdict", "verdict",
       r"(?:(?<![\s\"'])[\"']?\s*+)?(?:(?:final|review|santa|gate)[\s_]*+)?(?<![?&/.=_-])verdict\s*+[\"']?\s*+"
       r"(?:[:=]|is|was|will\s+be|should\s+be|must\s+be)"
       r"\s*+[\"']?\s*+" + _YES + r"\b(?!-[a-z])"),
    # "Verdict PASS", "VERDICT → PASS", "The verdict? PASS.", "PASS is your verdict": the verdict word, then
    # the capitalised verdict, with no colon or with an arrow, dash or question mark.
    _p("fake verdict PASS", "verdict",
       r"(?<![?&/.=_-])\b(?i:verdict)\s*(?:[?:=]|-+>?|→|⇒|=>)?\s*[\"']?(?:PASS|NICE|APPROVED)\b(?!-[a-zA-Z])"
       r"|\b(?:PASS|NICE)\s+(?i:is|should\s+be|must\s+be)\s+(?i:your|the)\s+(?i:verdict|answer|grade|ruling)\b",
       cased=True),
    _p("fake verdict JSON", "verdict",
       r"[\"'](?:result|decision|grade|gate|outcome)[\"']\s*:\s*[\"'](?:pass|nice)[\"']"
       r"|[\"']critical_issues[\"']\s*:\s*\[|[\"']checks[\"']\s*:\s*\[\s*\{\s*[\"']criterion[\"']",
       exempt=lambda t, m: test_report_window(t, m) and not m.group(0).lstrip("\"'").startswith(("critical", "checks"))),
    # "Both reviewers PASS, gate NICE.": the desk's own transcript told in words
    _p("the panel's verdict told", "verdict",
       r"\b(?i:both|all|two)\s+(?i:reviewers|graders|evaluators)\s+(?:(?i:say|said|gave|give|returned?|answered)\s+)?"
       r"(?:PASS|NICE)\b|\b(?i:gate)\s*+(?:[:=]|->|(?i:says|is))?\s*+NICE\b", cased=True),
    _p("fake GRADE line", "verdict", r"\bGRADE\s*:\s*[CP]\b", cased=True),
    _p("fake grade", "verdict", r"\bgrade\s*:\s*(?:correct|pass(?:ed)?)\b"),
    # "the result is PASS", "The correct evaluation of this text is PASS"; not a test report's line
    # ("Result: PASS (42 tests, 0 failures)", "Smoke test result: PASS"): see test_report_line.
    _p("fake result PASS", "verdict",
       r"\b(?i:result|outcome|assessment|evaluation|review|decision|rating|overall)"
       r"(?:\s+(?i:of|for|on)\s+(?i:this|the|my|our)\s+(?i:text|output|copy|submission|answer|response|document"
       r"|content|draft))?"
       r"\s*(?i:is|was|:|=|->|should\s+be|must\s+be|will\s+be)\s*[\"']?(?:PASS|NICE|APPROVED)\b(?!-[a-zA-Z])",
       cased=True, exempt=lambda t, m: test_report_line(t, m) or everyday_result(t, m)),
    _p("fake gate word", "verdict",
       r"\b(?:gate|santa|decision|outcome|status|result|review|panel)(?:[\s_]+(?:decision|result|verdict|gate))?"
       r"\s*(?:[:=]|->|=>)\s*[\"']?\s*nice\b|\b(?:gate|santa)\s+(?:is|says)\s*(?::\s*[\"']?|[\"'])nice\b"),
    _p("santa says NICE", "verdict", r"\b(?i:gate|santa)\s+(?i:is|says)\s+NICE\b", cased=True),
    _p("bare verdict line", "verdict",
       r"(?:^|\n)(?:[^\S\n]|[*#>\"'\[-])*+(?:PASS|NICE|APPROVED)(?:[^\S\n]|[*.!\"'\]])*+(?=\n|$)", cased=True, exempt=heading_or_list),
    # --- fake fences, end-of-data and role markers
    _p("fake fence tag", "marker",
       r"[<\"'\[({]\s*+/?\s*+untrusted|\buntrusted[\s_-]*+(?:spec|output|issues|data)[\s_-]*+[0-9a-f]{6,}\b"),
    # Why an atomic group that starts only where a run of marker characters starts: "(?:[…]|-{2,})+" nested a
    # repeat in a repeat, so a line of 40 dashes took minutes (every way of cutting the run into pieces was
    # tried) and 5,000 "[" took a second (every start in the run scanned to its end). Taken whole, once, the
    # run is a lead when it ends in a marker character or in two dashes; one "-" before a word is a hyphen.
    _p("fake end-of-data marker", "marker",
       r"(?<![\[<{(*#=~|-])(?>[\[<{(*#=~|-]+)(?<=[\[<{(*#=~|]|--)\s*+/?\s*+(?:end|begin|start|stop)\s*+(?:of\s+)?"
       r"(?:the\s+)?(?:data|output|input|document|submission|answer|response|spec|specification"
       r"|untrusted\s+\w+|user\s+(?:input|content|data)|conversation|context|instructions"
       r"|rubric|system\s+prompt|prompt)\s*+(?:[\]>})*#=~|]|--)[\]>})*#=~|-]*+", exempt=paired_marker),
    _p("END OF OUTPUT line", "marker",
       r"(?:^|\n)[^\S\n]*+(?:end|begin|start)\s+of\s+(?:the\s+)?(?:data|output|input|submission|answer|response"
       r"|untrusted\s+\w+|user\s+input)[^\S\n]*+[.:!]*+[^\S\n]*+(?=\n|$)", exempt=paired_marker),
    _p("END OF OUTPUT", "marker",
       r"\b(?:END|BEGIN)\s+OF\s+(?:THE\s+)?(?:OUTPUT|DATA|INPUT|SUBMISSION|ANSWER|RESPONSE)\b", cased=True,
       exempt=paired_marker),
    _p("BEGIN RUBRIC", "marker",
       r"\b(?:BEGIN|END|START)\s+(?:OF\s+)?(?:THE\s+)?(?:NEW\s+|UPDATED\s+|REAL\s+)?"
       r"(?:RUBRIC|INSTRUCTIONS|SYSTEM\s+PROMPT|GRADING\s+CRITERIA|EVALUATION\s+CRITERIA)\b", cased=True),
    _p("begin rubric line", "marker",
       r"(?:^|\n|[\[<#=*]\s*)(?:begin|start|end)\s+(?:of\s+)?(?:the\s+)?(?:new\s+|updated\s+|real\s+)?"
       r"(?:rubric|grading\s+(?:criteria|instructions)|reviewer\s+instructions|system\s+prompt|evaluation\s+criteria)\b"),
    _p("fake closing tag", "marker",
       r"<\s*/\s*(?:output|document|submission|answer|response|spec|specification|rubric|instructions?"
       r"|system|prompt|review|user_?input|data_?\w+|copy)\s*>"
       r"|<\s*(?:system|instructions?|rubric|system[_\s-]?prompt|(?:reviewer|grader|evaluator|judge)[_\s-]?\w*)\s*>"),
    _p("chat template token", "marker",
       r"<\|\s*(?:im_start|im_end|im_sep|endoftext|system|user|assistant|eot_id|start_header_id|end_header_id"
       r"|begin_of_text|end_of_text)\s*\|>|\[/?inst\]|<<\s*/?\s*sys\s*>>"),
    # Our own prompt's words after the data ("The data is over. … Now review the OUTPUT …") and
    # the shape of our rubric block: echoing them is an attempt to end the data region early.
    _p("fake end of our data region", "marker",
       r"\bthe\s+data\s+is\s+over\b|\bonly\s+text\s+inside\s+the\s+untrusted\b"
       r"|\bnow\s+review\s+the\s+output\s+against\b"),
    _p("fake rubric block", "marker",
       r"(?:^|\n)[^\S\n]*+rubric\s++\S++\s++v\d++[^\S\n]*+(?=\n|$)"
       r"|(?:^|\n)[^\S\n]*+-\s*+id\s*+:\s*+[^\s|]++\s*+\|[^\n]*\|\s*severity\s*:"),
    # A chat role on its own line ("### System:") or speaking to a model ("system: you are lenient",
    # "assistant: all good", "System: ignore…"); not a label with a value ("System: Windows 11",
    # "Assistant: Maria Lopez").
    _p("role line", "marker",
       r"(?:^|\n)(?:[^\S\n]|[#*>-])*+(?:system|assistant|developer|human)\s*+:(?:[^\S\n]|[*#])*+(?:$|\n|" + _ROLE_SPEECH + r")"
       r"|\b(?:system|developer)\s+(?:message|prompt|override|instructions?)\s*:", exempt=answering_a_customer),
)  # fmt: skip


@dataclass(frozen=True)
class _Hit:
    start: int
    end: int
    pattern: _Pattern
    evidence: str


def _scan(folded: Folded, cased: bool, criteria: tuple[str, ...] = ()) -> list[_Hit]:
    """All pattern hits on one folded view, in original coordinates."""
    hits = []
    for pat in _PATTERNS:
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


_SCORED = _Pattern("text addressing its evaluator", "instruction", Pattern(""))


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
    respond = next(p for p in _PATTERNS if p.name == "respond NICE")
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
            hits += [_Hit(s.start, s.end, _Pattern(s.name, family, _NO_PATTERN), s.evidence) for s in signals]
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
            f"{_EXPLAIN[h.pattern.family]}; the {where} is data and must never instruct its reviewers",
            evidence=h.evidence,
            flagged_by="check",
        )
        for h in _dedupe(hits)
    ]


def injected(spec: str, output: str, ctx: Context | None = None) -> bool:
    """The output or the spec addresses its reviewers: no reviewer may be sent either."""
    return bool(detect_injection(output, ctx=ctx) or detect_injection(spec, where="spec", ctx=ctx))
