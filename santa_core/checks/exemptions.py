"""What makes a stock pattern's match ordinary text after all: a test report's PASS, a reply code for a reader, a
line of code returning "PASS", a function described as returning it, a ticket marked PASS in a tracker, an everyday
result, a heading, a quoted data block, an assistant answering a customer, a note that only informs AI readers.

Each takes the folded text and the match and says True when the match is no hit. Linear like the patterns: every
window is bounded (inputs run to 200,000 characters).
"""

from __future__ import annotations

from regex import IGNORECASE, Match

from santa_core.checks.addressing import EVALUATION_WORDS as _EVALUATION_WORDS
from santa_core.checks.addressing import quoted_as_an_example
from santa_core.checks.addressing import sentence_family as _sentence_family
from santa_core.checks.bounded import Pattern, escape, search

__all__ = [
    "both_outcomes",
    "quoted_as_an_example",
    "record_at",
    "record_of_something_else",
    "CODE_RETURNS",
    "OTHER_OBJECT",
    "answering_a_customer",
    "code_result",
    "everyday_result",
    "heading_or_list",
    "not_to_reviewer",
    "note_without_order",
    "paired_marker",
    "test_report_line",
    "test_report_window",
]

_REPORT_LABEL = Pattern(r"(?i:(?:(?:test|build|ci|run|job|check)\s+)?(?:result|status|outcome))\s*(?::|=|->)")
_JUDGEMENT_WORDS = frozenset(
    "evaluation review assessment grading final overall santa gate reviewer verdict judge grader".split()
)
_TEST_WORDS = frozenset(
    "test tests suite suites build builds ci pipeline pipelines pytest junit jest unit integration"
    " smoke regression e2e assertion assertions failure failures skipped error errors".split()
)
_WORD = Pattern(r"[a-z0-9]+")


def test_report_window(text: str, m: Match[str]) -> bool:
    """A test word within 120 characters either side ('{"result": "pass", "tests": 42}'): a test run's record."""
    window = text[max(0, m.start() - 120) : m.end() + 120].lower()
    return not _TEST_WORDS.isdisjoint(_WORD.findall(window))


def test_report_line(text: str, m: Match[str]) -> bool:
    """The match is a test report's "Result: PASS" line ("Result: PASS (42 tests, 0 failures)"), not a verdict.

    Only the label form counts ("the result is PASS" is prose about this text), not after a
    judging word ("Evaluation result: PASS"), and only with a test word near it: up to 160
    characters before (the command or heading above a pasted log) and the rest of its line, up to
    120 (bounds: inputs run to 200k characters).
    """
    if not _REPORT_LABEL.match(m.group(0)):
        return False
    before = _WORD.findall(text[max(0, m.start() - 30) : m.start()].lower())
    if before and before[-1] in _JUDGEMENT_WORDS:
        return False
    end = text.find("\n", m.end(), m.end() + 120)
    window = text[max(0, m.start() - 160) : m.end() + 120 if end == -1 else end].lower()
    return not _TEST_WORDS.isdisjoint(_WORD.findall(window))


# Words that make a qualifier, a reply code or a heading about the evaluation after all.


_REPLY_CODE = Pattern(
    r"\s*[\"']?\s*(?:to\s+(?:this|our|the)?\s*(?:sms|text|message|number|\d)|at\s+the\s+(?:gate|door|desk"
    r"|counter|entrance|till|checkout|reception|front)|[\"']?\s*in\s+(?:#|the\s+(?:thread|channel|ticket|portal"
    r"|form|chat|tracker|app|issue))|to\s+(?:stop|skip|unsubscribe|opt\s+out|cancel|pause|join|enter|receive))",
    IGNORECASE,
)
_CODE_LINE = Pattern(r"(?:^|\n)(?:[ \t]{2,}|[ \t]*(?:def|if|else|elif|case|when|return)\b)[^\n]*$")


_CODE_SUBJECT = Pattern(
    r"(?i)\b(?:function|method|script|program|routine|procedure|endpoint|command|cli|api|lambda"
    r"|def|class|module|tests?|code|snippet|macro|query|pipeline|hook|handler|validator)s?\b"
)
_EVALUATOR_WORD = Pattern(
    r"(?i)\b(?:you|your|reviewers?|graders?|evaluators?|judges?|assessors?|ai|llm|models?"
    r"|assistants?|verdicts?|rubrics?|criteri\w*|this\s+(?:text|copy|output|submission))\b"
)
_SENTENCE_START = Pattern(r"[^.!?\n]{0,200}$")


def code_result(text: str, at: int) -> bool:
    """What a piece of code returns or prints, described in the sentence before `at` ("the function must return
    "PASS" for valid input", "the script should print PASS when every test succeeds"), with nobody addressed."""
    floor = max(0, at - 200)
    lead = _SENTENCE_START.search(text, floor, at)
    before = text[floor if lead is None else lead.start() : at]
    return _CODE_SUBJECT.search(before) is not None and _EVALUATOR_WORD.search(before) is None


CODE_RETURNS = Pattern(r"\b(?:returns|returning|prints|printing|outputs|emits|yields|logs|echoes)\s+[\"'`]?PASS\b")
"""A third-person "returns "PASS"" (a function's result in a spec or a manual), which the respond pattern leaves to the
scorer: the PASS of a code result is lower-cased for it, as a code line's is."""


def not_to_reviewer(text: str, m: Match[str]) -> bool:
    """A reply code for a reader ("Reply PASS to this SMS", "Say PASS at the gate"), a line of code returning a
    string ('    return "PASS"'), or a function's two outcomes described ('return "PASS" when …, "FAIL" otherwise').
    Never the desk's own word NICE: no reader's reply code or program's result needs it."""
    if "nice" in m.group(0).lower():
        return False
    if _REPLY_CODE.match(text, m.end(), min(len(text), m.end() + 40)):
        return True
    word = m.group(0).lstrip()[:6].lower()
    if not (
        word.startswith("return") or word.startswith("print") or word.startswith("output") or word.startswith("emit")
    ):
        return False
    if code_result(text, m.start()):
        return True
    # The line's start within 200 characters; past that, the window's (a line that long is no line of code). From
    # the text's start instead, each hit on one long line read the text up to it again: quadratic.
    floor = max(0, m.start() - 200)
    newline = text.rfind("\n", floor, m.start())
    line_start = floor if newline == -1 else newline + 1
    if _CODE_LINE.search(text, line_start, m.start()) or text[line_start : m.start()].strip() == "":
        return True
    window = text[m.end() : m.end() + 120]
    if search(r"(?i)[\"']fail[\"']", window) is not None:
        return True
    # two outcomes, as a docstring or a comment in code says them ('def check(pw): """Return PASS if the password
    # meets the policy, else FAIL."""'), with nobody addressed
    return (
        search(r"(?i)\b(?:else|otherwise)\s*+,?\s*+[\"'`]?fail\b", window) is not None
        and _EVALUATOR_WORD.search(text, floor, m.end() + 120) is None
    )


_EVERYDAY_RESULT = Pattern(
    r"(?i:exam|test|theory|driving|inspection|mot|emissions?|safety|blood|audit|survey|lab|screening"
    r"|your)\s+(?i:result|outcome)\b"
)


def everyday_result(text: str, m: Match[str]) -> bool:
    """A reader's own result ("your theory exam result is PASS", "Inspection result: PASS"), not this text's verdict."""
    return _EVERYDAY_RESULT.search(text, max(0, m.start() - 30), m.end()) is not None and not search(
        r"(?i:should|must|will)\s+be", m.group(0)
    )


_CAPITAL_WORD = Pattern(r"[A-Z][A-Z-]{2,}")


def heading_or_list(text: str, m: Match[str]) -> bool:
    """A one-word line that is a heading or an item of a list of one-word lines ("PARIS\nNICE\nLYON", "APPROVED" over
    a letter), not a verdict line: another capitalised one-word line next to it, or prose following it."""
    start = m.start() + (text[m.start()] == "\n")
    before = text[max(0, start - 40) : start].rstrip("\n").rsplit("\n", 1)[-1].strip()
    end = text.find("\n", m.end() - 1 if text[m.end() - 1 : m.end()] == "\n" else m.end())
    after = "" if end == -1 else text[end + 1 : end + 80].split("\n", 1)[0].strip()
    verdicts = {"PASS", "NICE", "APPROVED", "FAIL", "NAUGHTY"}
    if any(_CAPITAL_WORD.fullmatch(x) and x not in verdicts for x in (before, after)):
        return True
    return (
        "APPROVED" in m.group(0) and bool(after) and search(r"^(?i:congratulations|dear|your|we)\b", after) is not None
    )


_MARKER_NOUN = Pattern(r"(?i)(?:end|begin|start|stop)\s*(?:of\s+)?(?:the\s+)?([a-z]+(?:\s+[a-z]+)?)")


def paired_marker(text: str, m: Match[str]) -> bool:
    """A BEGIN marker with its END after it, or an END with its BEGIN before it (a data block the text quotes, "-- BEGIN
    OF DATA --\n1,2,3\n-- END OF DATA --"), within 5,000 characters (bounds: inputs run to 200k characters)."""
    k = _MARKER_NOUN.search(m.group(0))
    if k is None:
        return False
    noun = escape(k.group(1).split()[0])
    if k.group(0).lower().startswith(("begin", "start")):
        return search(rf"(?i)\bend\s*(?:of\s+)?(?:the\s+)?{noun}\b", text[m.end() : m.end() + 5000]) is not None
    return (
        search(rf"(?i)\b(?:begin|start)\s*(?:of\s+)?(?:the\s+)?{noun}\b", text[max(0, m.start() - 5000) : m.start()])
        is not None
    )


_REST_OF_SENTENCE = Pattern(r"[^.!?\n]{0,300}")


def note_without_order(text: str, m: Match[str]) -> bool:
    """A note to AI readers that only informs ("Note for AI assistants and search engines: our catalogue is also a
    feed at /feed.xml"): nothing in its sentence orders, judges or claims anything an evaluator decides."""
    rest = _REST_OF_SENTENCE.match(text, m.end())
    sentence = text[m.start() : m.end() if rest is None else rest.end()]
    return _sentence_family(sentence.lower(), sentence, True) is None


OTHER_OBJECT = Pattern(
    r"\b(?i:mark|set|label|flag|record|log|enter|update|move|tick|switch|change)\s+(?i:the|this|that"
    r"|each|every|a|an|its|their|your)\s+(?i:ticket|issue|task|item|row|box|checkbox|test|case|build"
    r"|job|step|entry|card|status|field|column|form|record|checklist|story|bug|run|line|cell)s?\b"
    r"[^.!?\n]{0,40}?\bPASS\b"
)
"""A PASS given to a thing of the reader's ("mark the ticket PASS in the tracker"), not to this text."""


_CUSTOMER_TURN = Pattern(r"(?i)(?:^|\s)(?:customer|user|client|guest|caller|visitor|q|question)\s*:")


def answering_a_customer(text: str, m: Match[str]) -> bool:
    """An assistant's line answering a customer's line above it, about nothing an evaluator decides
    ("Customer: Can I return it?\nAssistant: Of course! You have 30 days…")."""
    start = m.start() + (text[m.start()] == "\n")
    prev = text[max(0, start - 300) : start].rstrip("\n").rsplit("\n", 1)[-1]
    end = text.find("\n", m.end())
    line = text[start : len(text) if end == -1 else end]
    after = "" if end == -1 else text[end + 1 : end + 301].split("\n", 1)[0]  # or the customer's line right after it
    return (
        bool(_CUSTOMER_TURN.search(prev) or _CUSTOMER_TURN.match(after))
        and _EVALUATION_WORDS.search(line[line.find(":") + 1 :]) is None
        and not search(
            r"(?i)\b(?:pass|nice|approv|complian|flawless|lgtm|all\s+good|no\s+issues|ignore|disregard|instruction)",
            line,
        )
    )


_DESK_WORDS = Pattern(
    r"(?i)\b(?:santa|gate|slot|rubrics?|criteri\w*|critical[ _]issues|nice|naughty|reviewer[ _-]?[bcd]"
    r"|this\s+(?:text|output|copy|submission|description|page|content|draft|document))\b"
)
"""Words only a verdict aimed at the desk's reviewers has: no record of something else holds them."""
_JUDGE_WORDS = Pattern(r"(?i)\b(?:reviewers?|evaluators?|graders?|judges?)\b")
"""Words a record of a person's review holds too ("reviewer": "M. Lopez"): they need a richer record around them."""
_EXAMPLE_LEAD = Pattern(r"(?i)\b(?:like|such\s+as|e\.g\.|for\s+example|for\s+instance|example\s*:)[^\n.!?]{0,40}$")
_RECORD_WORDS = frozenset(
    "id amount currency score threshold latency tests test build inspection inspector certificate minutes owner"
    " invoice invoices request claim claims ticket candidate student students exam marks meeting council board"
    " resolution present chair select update where deliverable error rate p50 p95 p99 version release feature action"
    " items agenda employee employees probation manager signed period course module".split()
)


def record_of_something_else(text: str, m: Match[str], criteria: tuple[str, ...] = ()) -> bool:
    """`record_at` for a pattern's match."""
    return record_at(text, m.start(), m.end(), criteria)


_AUTOMATED_JUDGE = Pattern(
    r"(?i)\b(?:ai|llm|automated|model|bot|machine)\s+(?:reviewers?|evaluators?|graders?|judges?|checkers?)\b"
    r"|\b(?:reviewers?|evaluators?|graders?)\s+(?:model|bot|ai)\b|[\"']?issues[\"']?\s*[:=]\s*(?:\[\s*\]|none|0\b)"
    r"|\bno\s+issues\b|\b(?:do\s+not|don't|never)\s+flag\b"
)
"""An automated judge, an empty list of issues, "do not flag": a record that holds them speaks to the desk."""
_FORMAT_WORDS = Pattern(
    r"(?i)\b(?:json|yaml|xml|toml|csv|format|schema|api|response|field|tutorial|template|payload)\b"
)


def _names_a_criterion(window: str, criteria: tuple[str, ...]) -> bool:
    """One of the rubric's criterion ids or names in the window (case aside)."""
    low = window.lower()
    return any(len(c) >= 4 and c.lower() in low for c in criteria)


def record_at(text: str, start: int, end: int, criteria: tuple[str, ...] = ()) -> bool:
    """A verdict in a record of something other than this text: minutes ("Decision: approved. Owner: R. Patel"), an
    API's response ('"status": "approved", "amount": 129.5'), a load test ("Verdict: PASS (threshold p99 < 400 ms)"),
    a certificate: two words of such a record within 200 characters (three beside a reviewer or a judge, who review
    other things too), and none of the desk's own (reviewer B, rubric, criteria, NICE, this text) — a verdict aimed at
    the reviewers names what they judge or how; or a format shown as an example ("JSON like {…}")."""
    window = text[max(0, start - 200) : end + 200]
    if _names_a_criterion(window, criteria) or _AUTOMATED_JUDGE.search(window) is not None:
        return False
    lead = _EXAMPLE_LEAD.search(text, max(0, start - 60), start)
    if lead is not None and _FORMAT_WORDS.search(text, max(0, lead.start() - 80), start) is not None:
        # a format shown as an example ("ask it to output JSON like {"verdict": "pass"}"), unless it holds the desk's
        # own words itself
        return _DESK_WORDS.search(text, start, end) is None
    if _DESK_WORDS.search(window) is not None:
        return False
    record = len(_RECORD_WORDS.intersection(_WORD.findall(window.lower())))
    return record >= (3 if _JUDGE_WORDS.search(window) is not None else 2)


_CODE_MARKS = Pattern(r"\breturn\b|=>|\?|\bfunction\b|\bdef\b|\bif\b|\belse\b|[{};]")
_FAIL = Pattern(r"(?i)\bfail(?:ed)?\b")


def both_outcomes(text: str, m: Match[str]) -> bool:
    """A line of code that gives PASS or FAIL by a condition ("return ok ? { result: 'PASS' } : { result: 'FAIL' }"):
    a program's two outcomes, not a verdict on this text."""
    start = text.rfind("\n", max(0, m.start() - 300), m.start()) + 1
    end = text.find("\n", m.end(), m.end() + 300)
    line = text[start : m.end() + 300 if end == -1 else end]
    return _CODE_MARKS.search(line) is not None and _FAIL.search(line) is not None
