"""The injection detector's pattern table: each pattern names one way text addresses its reviewer (an instruction, a
fake verdict, a fake end-of-data, fence or role marker), with the exemption that says when a match is ordinary text.
`santa_core.checks.injection` scans the folded views of a text with it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from regex import Match

from santa_core.checks.addressing import described as _described
from santa_core.checks.addressing import elsewhere as _elsewhere
from santa_core.checks.bounded import Pattern
from santa_core.checks.exemptions import (
    answering_a_customer,
    everyday_result,
    heading_or_list,
    not_to_reviewer,
    note_without_order,
    paired_marker,
    test_report_line,
    test_report_window,
)

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

EXPLAIN = {
    "instruction": "text addresses the reviewer with an instruction",
    "verdict": "text addresses the reviewer with a fake verdict",
    "marker": "text addresses the reviewer through a fake end-of-data, fence or role marker",
    "structure": "text gives a verdict, a criterion's state or a rubric change, or speaks in the desk's own roles",
    "carriers": "text hidden from a reader (a comment, an attribute, invisible characters) addresses its reviewers",
    "languages": "text addresses an automated reader with an order or a verdict",
    "decoded": "encoded text that, once decoded, addresses its reviewers",
}


@dataclass(frozen=True)
class InjectionPattern:
    """One pattern of the table: its name, its family (what it is, worded by `EXPLAIN`), and how it matches."""

    name: str
    family: str
    regex: Pattern
    cased: bool = False  # cased patterns run on a fold that keeps letter case
    exempt: Callable[[str, Match[str]], bool] | None = None  # a match this says is ordinary text is no hit


def _p(
    name: str, family: str, regex: str, cased: bool = False, exempt: Callable[[str, Match[str]], bool] | None = None
) -> InjectionPattern:
    return InjectionPattern(name, family, Pattern(regex), cased, exempt)


# Patterns match folded text (lowercase, ASCII-ish, single spaces). Each is narrow on purpose:
# a hit blocks shipping, so ordinary copy ("ignore the noise", "a verdict from the jury",
# "pass the salt") must not match.
PATTERNS: tuple[InjectionPattern, ...] = (
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
       exempt=lambda t, m: _elsewhere(t, m.end()) or _described(t, m.start(), m.end())),
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
