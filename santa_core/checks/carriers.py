"""Hidden carriers: text a reader of the rendered page does not see, but a model reading the raw text does.

An HTML comment, an image's alt text, a title, aria-label or data-* attribute, a hidden input's value, a meta
element's content, a Markdown link reference definition or link title, text an inline style, the `hidden` attribute
or an "sr-only" class hides, a run of zero-width characters that spells bits, words that invisible characters split,
text behind a right-to-left override (shown reversed, read in order) and Unicode tag characters are all read by a
reviewer model and skipped by a person (or by a matcher). So
what a hidden carrier says is judged on a much lower bar than visible text: a carrier that names an automated
reader and tells it something, that directs the text's evaluation, or that assigns a verdict is an injection; one
that carries tag characters at all is ASCII smuggling, and a run of zero-width characters that spells text in bits
is the same (no person writes text nobody can see). Ordinary carriers
("<!-- hero banner -->", alt="Team photo at the 2024 summit", "<!-- TODO: update price -->") say nothing of the
kind and stay clean.

A title="Approved by the FDA" stays clean too: it states a third party's approval to a person hovering over it,
names no automated reader, assigns no verdict to this text and directs nobody (the verdict words count only with an
addressee, a directive, "this text" or a verdict's label).

`hidden_texts` gives every carrier's span and inner text (what `find` judges; the detector itself calls `find`).
"""

from __future__ import annotations

from dataclasses import dataclass

from regex import IGNORECASE, MULTILINE

from santa_core.checks.bounded import Pattern
from santa_core.checks.folding import fold
from santa_core.checks.signals import NO_CONTEXT, Context, Signal

__all__ = ["find", "hidden_texts"]

"""A text told nothing besides its words (a frozen dataclass: one default shared by every call is safe)."""
INNER_CAP = 4000
"""Characters of a carrier's inner text that are read (an unclosed comment hides the rest of the text)."""


@dataclass(frozen=True)
class _Carrier:
    """One carrier: its kind in the method's words, its span in the original text and the text it carries."""

    kind: str
    start: int
    end: int
    inner: str
    split: tuple[str, ...] = ()
    """For a line whose words invisible characters split: those words, joined again."""


def _html_comments(text: str) -> list[_Carrier]:
    """HTML comments, and an unclosed "<!--" (a browser hides the rest of the page): a find per comment, linear."""
    found = []
    i = text.find("<!--")
    while i != -1:
        j = text.find("-->", i + 4)
        end = len(text) if j == -1 else j + 3
        found.append(_Carrier("an HTML comment", i, end, text[i + 4 : end if j == -1 else j][:INNER_CAP]))
        i = text.find("<!--", end)
    return found


# A tag's body cannot hold "<" or ">", so a candidate stops at the next one: every character is read once.
_TAG = Pattern(r"<([A-Za-z][A-Za-z0-9-]{0,30}+)([^<>]{0,4000}+)>")
_ATTRIBUTE = Pattern(
    r"(?<![\w-])(alt|title|aria-label|aria-description|placeholder|summary|data-[a-z0-9_.:-]{1,40}+)"
    r"\s{0,5}+=\s{0,5}+(?:\"([^\"]{0,4000}+)\"|'([^']{0,4000}+)')",
    IGNORECASE,
)
_STYLE = Pattern(r"(?<![\w-])style\s{0,5}+=\s{0,5}+(?:\"([^\"]{0,4000}+)\"|'([^']{0,4000}+)')", IGNORECASE)
# The `hidden` attribute (an attribute's name follows a space), or a class that hides text visually but keeps it for
# screen readers and models ("sr-only", "visually-hidden"): no sighted reader sees it.
_HIDDEN_ATTRIBUTE = Pattern(
    r"(?<=\s)hidden(?![\w-])(?!\s*+=\s*+[\"']?false)|(?<![\w-])class\s*+=\s*+[\"'][^\"'<>]{0,400}?(?<![\w-])"
    r"(?:sr-only|visually-hidden|screen-reader-text|d-none|invisible|hidden|offscreen|hide)(?![\w-])",
    IGNORECASE,
)
# What a page keeps but never shows: a hidden input's value, a meta element's content.
_UNSHOWN_VALUE = Pattern(
    r"(?<![\w-])(?:value|content)\s{0,5}+=\s{0,5}+(?:\"([^\"]{0,4000}+)\"|'([^']{0,4000}+)')", IGNORECASE
)
_UNSHOWN_TAG = Pattern(r"meta(?![\w-])|input(?![\w-])(?=[^<>]{0,400}?type\s*+=\s*+[\"']?hidden)", IGNORECASE)
_VOID = frozenset("area base br col embed hr img input link meta source track wbr".split())
# What an inline style hides text with: not displayed, invisible, no size, no opacity, pushed off the screen.
_HIDING_STYLE = Pattern(
    r"display\s*+:\s*+none|visibility\s*+:\s*+(?:hidden|collapse)|font-size\s*+:\s*+(?:0(?:\.0+)?+(?:px|pt|em|rem|%)?+"
    r"|(?:0?\.\d+|1(?:\.0+)?+)(?:px|pt))(?![\d.])|opacity\s*+:\s*+0(?:\.0+)?+(?![\d.])"
    r"|(?:left|top|text-indent)\s*+:\s*+-\d{3,}+|color\s*+:\s*+transparent"
    r"|(?:max-)?height\s*+:\s*+0(?:px)?+\s*+;[^\"']{0,200}?overflow\s*+:\s*+hidden|clip\s*+:\s*+rect\(\s*+0",
    IGNORECASE,
)
_COLOR = Pattern(r"(?<![\w-])(color|background(?:-color)?)\s*+:\s*+([#\w(),.\s%]{1,40}?)\s*+(?:;|$)", IGNORECASE)


def _same_colour(style: str) -> bool:
    """The text's colour is its background's ("color:#fff;background:#fff"): text drawn invisibly."""
    colours: dict[str, str] = {}
    for m in _COLOR.finditer(style):
        colours["color" if m.group(1).lower() == "color" else "background"] = m.group(2).lower().replace(" ", "")
    return len(colours) == 2 and colours["color"] == colours["background"]


def _element_text(text: str, name: str, start: int) -> tuple[int, str]:
    """The end and the text of the element whose opening tag ends at `start`: up to its closing tag (the first one,
    within INNER_CAP characters), or to the end of the line when none is found."""
    close = Pattern(rf"</{name}\s*+>", IGNORECASE).search(text, start, min(len(text), start + INNER_CAP))
    if close is not None:
        return close.end(), text[start : close.start()]
    line_end = text.find("\n", start, start + INNER_CAP)
    end = min(len(text), start + INNER_CAP) if line_end == -1 else line_end
    return end, text[start:end]


def _tags(text: str) -> list[_Carrier]:
    """Attributes a reader does not see (alt, title, aria-label, data-*, a hidden input's value, a meta element's
    content) and elements an inline style, the `hidden` attribute or a hiding class ("sr-only") hides."""
    found = []
    covered = 0  # the end of the last hidden element: a tag inside it is carried already (and not read again)
    for tag in _TAG.finditer(text):
        if tag.start() < covered:
            continue
        body = tag.group(2)
        base = tag.start(2)
        for m in _ATTRIBUTE.finditer(body):
            value = m.group(2) if m.group(2) is not None else m.group(3)
            group = 2 if m.group(2) is not None else 3
            found.append(
                _Carrier(f"the {m.group(1).lower()} attribute", base + m.start(group), base + m.end(group), value)
            )
        if _UNSHOWN_TAG.match(text, tag.start(1), tag.end()) is not None:
            kind = "a meta element's content" if tag.group(1).lower() == "meta" else "a hidden input's value"
            for m in _UNSHOWN_VALUE.finditer(body):
                group = 1 if m.group(1) is not None else 2
                found.append(_Carrier(kind, base + m.start(group), base + m.end(group), m.group(group)))
        if tag.group(1).lower() in _VOID:
            continue
        style = _STYLE.search(body)
        css = "" if style is None else (style.group(1) or style.group(2) or "")
        if _HIDING_STYLE.search(css) is not None or _same_colour(css) or _HIDDEN_ATTRIBUTE.search(body) is not None:
            end, inner = _element_text(text, tag.group(1), tag.end())
            covered = end
            found.append(_Carrier("text hidden by its style", tag.start(), end, inner))
    return found


# "[label]: url 'title'" at a line's start, "[//]: # (a comment)" among them: not rendered at all.
_LINK_REFERENCE = Pattern(
    r"^[ ]{0,3}+\[([^\[\]\n]{1,500}+)\]:[ \t]{0,20}+(?:<[^<>\n]{0,2000}+>|[^\s<>]{1,2000}+)"
    r"(?:[ \t]{1,20}+(?:\"([^\"\n]{0,2000}+)\"|'([^'\n]{0,2000}+)'|\(([^()\n]{0,2000}+)\)))?+",
    MULTILINE,
)
_IMAGE = Pattern(r"!\[([^\[\]\n]{1,1000}+)\]\(")
_LINK_TITLE = Pattern(
    r"\]\((?:<[^<>\n]{0,2000}+>|[^()\s]{0,2000}+)[ \t]{1,20}+(?:\"([^\"\n]{1,1000}+)\"|'([^'\n]{1,1000}+)')\)"
)


def _markdown(text: str) -> list[_Carrier]:
    """Markdown's unrendered text: link reference definitions and comments, image alt text, link titles."""
    found = []
    for m in _LINK_REFERENCE.finditer(text):
        title = next((g for g in m.groups()[1:] if g is not None), "")
        found.append(_Carrier("a Markdown link reference", m.start(), m.end(), f"{m.group(1)} {title}".strip()))
    for m in _IMAGE.finditer(text):
        found.append(_Carrier("an image's alt text", m.start(), m.end(1) + 1, m.group(1)))
    for m in _LINK_TITLE.finditer(text):
        group = 1 if m.group(1) is not None else 2
        found.append(_Carrier("a link's title", m.start(), m.end(), m.group(group)))
    return found


_TAG_RUN = Pattern(r"[\U000E0000-\U000E007F]++")
_FLAG_BASE = "\U0001f3f4"  # 🏴: an emoji subdivision flag is 🏴, tag letters or digits, then CANCEL TAG
_FLAG_TAGS = frozenset(chr(c) for c in [*range(0xE0030, 0xE003A), *range(0xE0061, 0xE007B)])


def _emoji_flag(text: str, start: int, run: str) -> bool:
    """The run is the tail of a subdivision flag (🏴 + "gbsct" in tags + U+E007F, Scotland's), which is legitimate: a
    region's code and a subdivision's (ISO 3166-2) are three to six letters or digits, not a sentence behind a flag."""
    flag = start > 0 and text[start - 1] == _FLAG_BASE and run[-1] == "\U000e007f"
    return flag and 3 <= len(run) - 1 <= 6 and set(run[:-1]) <= _FLAG_TAGS


def _tag_characters(text: str) -> list[_Carrier]:
    """Runs of Unicode tag characters, read as the ASCII they copy ("ASCII smuggling"); emoji flags are no carrier."""
    found = []
    for m in _TAG_RUN.finditer(text):
        run = m.group(0)
        if _emoji_flag(text, m.start(), run):
            continue
        inner = "".join(chr(ord(c) - 0xE0000) for c in run[:INNER_CAP] if 0xE0020 <= ord(c) <= 0xE007E)
        found.append(_Carrier("Unicode tag characters", m.start(), m.end(), inner))
    return found


_ZERO_WIDTH_RUN = Pattern(r"[\u200b\u200c\u200d\u2060\u2062\u2063\u2064\ufeff\u180e]{16,}+")


def _bits(run: str, zero: str) -> str | None:
    """The run read as bits (`zero` is 0, the other symbol 1), eight to a byte, when that spells printable UTF-8."""
    bits = "".join("0" if c == zero else "1" for c in run)
    if len(bits) % 8:
        return None
    try:
        decoded = bytes(int(bits[i : i + 8], 2) for i in range(0, len(bits), 8)).decode("utf-8")
    except UnicodeDecodeError:
        return None
    return decoded if decoded.isprintable() else None


def _zero_width(text: str) -> list[_Carrier]:
    """Runs of zero-width characters that spell text in two symbols (zero-width steganography), read both ways."""
    found = []
    for m in _ZERO_WIDTH_RUN.finditer(text):
        run = m.group(0)[: INNER_CAP * 8]
        counts = sorted(((run.count(c), c) for c in set(run)), reverse=True)
        if len(counts) < 2 or sum(n for n, _ in counts[2:]) > 4:  # two symbols, and a few delimiters at most
            continue
        one, other = counts[0][1], counts[1][1]
        bits = "".join(c for c in run if c in (one, other))
        inner = _bits(bits, one) or _bits(bits, other)
        if inner:
            found.append(_Carrier("a run of zero-width characters", m.start(), m.end(), inner))
    return found


# A word that invisible characters split ("ig\u200bnore", "Re\u00adview\u00aders"): a person reads the word, a pattern
# reads two. Only between Latin letters: the zero-width non-joiner inside a Persian word is its spelling.
_INVISIBLE = "\u00ad\u200b\u200c\u200d\u2060\ufeff\u180e"
_SPLIT_WORD = Pattern(rf"(?<=[A-Za-z\u00c0-\u024f])[{_INVISIBLE}]++(?=[A-Za-z\u00c0-\u024f])")
_WORD_OF_LINE = Pattern(rf"[A-Za-z\u00c0-\u024f{_INVISIBLE}]{{1,100}}+")
LINE_CAP = 2000
"""Characters of a line a split word's carrier holds at most (a text without line breaks is read in such pieces)."""


def _split_words(text: str) -> list[_Carrier]:
    """Lines (pieces of LINE_CAP at most) with a word split by invisible characters, read with them removed."""
    found: list[_Carrier] = []
    for m in _SPLIT_WORD.finditer(text):
        if found and m.start() < found[-1].end:
            continue
        start = max(text.rfind("\n", max(0, m.start() - LINE_CAP // 2), m.start()) + 1, m.start() - LINE_CAP // 2, 0)
        end = text.find("\n", m.end(), m.end() + LINE_CAP // 2)
        end = min(len(text), m.end() + LINE_CAP // 2) if end == -1 else end
        drop = {ord(c): None for c in _INVISIBLE}
        split = tuple(w.translate(drop) for w in _WORD_OF_LINE.findall(text[start:end]) if not w.isalpha())
        found.append(
            _Carrier(
                "a line whose words invisible characters split", start, end, text[start:end].translate(drop), split
            )
        )
    return found


# A right-to-left override shows the text after it reversed until a pop (PDF, PDI) or the line's end: a person sees
# it backwards, a model reads it in order. Embeddings, isolates and marks (Arabic, Hebrew) reorder nothing Latin.
_OVERRIDE = Pattern(r"[\u202d\u202e]([^\u202a-\u202e\u2066-\u2069\n]{1,4000}+)")


def _overrides(text: str) -> list[_Carrier]:
    """Text behind a bidi override, as a model reads it (its reversed view is `decoded`'s)."""
    return [_Carrier("text behind a bidi override", m.start(), m.end(), m.group(1)) for m in _OVERRIDE.finditer(text)]


def _carriers(text: str) -> list[_Carrier]:
    """Every carrier of the text, in order of its start."""
    found = [*_html_comments(text), *_tags(text), *_markdown(text), *_tag_characters(text), *_zero_width(text)]
    found += _overrides(text) + _split_words(text)
    return sorted(found, key=lambda c: (c.start, c.end))


def hidden_texts(text: str) -> list[tuple[int, int, str]]:
    """Each carrier's span in the original text and the text it carries (the carriers `find` judges)."""
    return [(c.start, c.end, c.inner) for c in _carriers(text)]


# --- what a carrier says ---------------------------------------------------------------------------------------
# Matched on the folded inner text (lowercase, look-alikes read as letters). Latin words are bounded by
# lookarounds, not \b, so "AIレビュアー" still names an AI.
_W0, _W1 = r"(?<![a-z0-9])", r"(?![a-z0-9])"
_ADDRESSEE = Pattern(
    _W0 + r"(?:(?:ai|llm|automated|automatic|model|machine)[ -]?(?:reviewers?|graders?|judges?|evaluators?|assessors?"
    r"|scorers?|checkers?|agents?|assistants?|screeners?)|reviewers?|graders?|evaluators?|assessors?|verifiers?"
    r"|scorers?|screeners?|ai|a\.i\.|llms?|gpt[\w.-]{0,10}|chatgpt|claude|gemini|copilot|language\s+models?"
    r"|(?:ai|ml)\s+models?|(?:ai|virtual)\s+assistants?|assistant\s*[:,]|(?:chat)?bots?|fix(?:ing)?[ -]agents?|fixers?"
    r"|ai\s+agents?|dear\s+(?:model|agent|judge|system)|santa\s+gate|ki|ia|ии|нейросет\w{0,4}"
    # the reviewers in the languages of the EU and beyond (folded: no diacritics), a low bar for a hidden carrier
    r"|revisor(?:es|as|i|e)?|evaluador(?:es|as?)?|avaliador(?:es|as?)?|valutator(?:e|i)|prufer(?:in|innen)?|gutachter"
    r"|bewerter|korrektor(?:en|er)?|evaluateurs?|evaluatrices?|correcteurs?|relecteurs?|recenzen(?:t|ci|ta)"
    r"|beoordelaars?|granskare|bedomare|degerlendirici|penilai|danh\s+gia\s+vien)"
    + _W1
    + r"|审核员|评审|审稿人|评估者|人工智能|レビュアー|評価者|審査員|ＡＩ|심사위원|평가자|리뷰어|المراجع|المقيّ?م|الذكاء الاصطناعي"
    r"|рецензент|проверяющ|оценщик"
)
_VERDICT = Pattern(
    _W0
    + r"(?:pass(?:ed|es|ing)?|nice|naughty|approved?|approval|accept(?:ed|able)?|compliant|complies|conform(?:s|ing)?"
    r"|verdict|lgtm|flawless|perfect\s+score|full\s+marks|(?:all\s+)?criteria\s+(?:are\s+)?(?:met|satisfied|passed)"
    r"|no\s+(?:issues|problems|defects|violations)|fail(?:ed|s)?)"
    + _W1
    + r"|"
    + _W0
    + r"(?:aprob|aprov|approuv|approvat|genehmig|bestanden|freigegeben|goedgekeurd|godkand|onayl"
    r"|zatwierdz|zaliczon|cumple|erfullt|conforme)" + r"|通过|合格|批准|承認|통과|승인|одобр|зач[её]т|اجتياز|موافقة"
)
# Directives toward an evaluation: verbs that order a verdict or set instructions aside, the rubric's own words, and
# second person only as an order ("you must", "your verdict"): "showing you the settings" orders nobody; and a fix
# agent's orders ("do not add disclaimers", "replace it with the original").
_DIRECTIVE = Pattern(
    _W0 + r"(?:ignore|disregard|forget|override|overlook|mark|approve|accept|respond|reply|classify|instruct\w{0,6}"
    r"|rubric|criteri(?:on|a)|prompt|system\s+message|must|(?:do\s+not|don't|never)\s+[a-z]{2,20}+"
    r"|replace\s+(?:it|them|this|that|the\s+\w+)\s+with"
    r"|(?:keep|leave|restore)\s+(?:it|this|them|the\s+(?:text|claim|original))"
    r"|you\s+(?:must|should|shall|will|are|need|have\s+to)|your\s+(?:task|job|verdict|instructions?|review"
    r"|rating|score|role|answer|output)|(?:rate|grade|score|treat|consider|return|output|answer|say|report|give)\s+"
    r"(?:this|it|the\s+(?:text|output|submission|claim|content|document)|as|with|only|pass|nice|everything|all))" + _W1
)
_THIS_TEXT = Pattern(
    _W0 + r"(?:this|the|above|following)\s+(?:text|output|submission|document|response|answer|content|copy|draft"
    r"|deliverable)" + _W1
)
_ASSIGNED = Pattern(
    _W0 + r"(?:verdict|result|status|decision|outcome|grade|score|rating|review)\s*+(?:[:=]|is|->)\s*+[\"'`]?+\s*+"
    r"(?:pass|nice|approved?|compliant|accept(?:ed)?|lgtm)" + _W1
)
_OVERRIDE_INSTRUCTIONS = Pattern(
    _W0 + r"(?:ignore|disregard|forget|override)\s+(?:(?:all|any|the|your|my|of)\s+){0,3}"
    r"(?:previous|prior|above|earlier|system|original)?\s*(?:instructions?|rules|prompts?|guidelines)" + _W1
)


# A model named as the text's author or as an adjective ("Generated by ChatGPT; do not edit", "AI-generated image") is
# no reader spoken to: the 40 characters before an addressee, and the word right after it, say so.
_AUTHOR_BEFORE = Pattern(
    r"(?:generated|written|created|produced|drafted|made|powered|built|translated|assisted|edited|summari[sz]ed"
    r"|trained)\s(?:by|with|using|via|from)\s(?:an?\s|the\s|our\s)?(?:[a-z0-9.-]{1,20}\s)?$"
)
_ADJECTIVE_AFTER = Pattern(
    r"[\s-]?(?:generated|powered|assisted|based|driven|written|created|made|enabled|native)(?![a-z])"
)


def _addressed(folded: str) -> bool:
    """An automated reader is named, and not only as an author or an adjective."""
    for m in _ADDRESSEE.finditer(folded):
        before = folded[max(0, m.start() - 40) : m.start()]
        if _AUTHOR_BEFORE.search(before) is None and _ADJECTIVE_AFTER.match(folded, m.end(), m.end() + 12) is None:
            return True
    return False


def addresses_a_reader(inner: str) -> bool:
    """What a hidden carrier says makes it an injection: it names an automated reader and directs it or gives a
    verdict, gives "this text" a verdict or an order, labels a verdict ("status: PASS"), or overrides instructions."""
    if not any(ch.isalpha() for ch in inner):
        return False
    folded = fold(inner[:INNER_CAP], casefold=True).text
    # A verdict word followed by "by" is a third party's ("Approved by the FDA", "Passed by 3 reviewers"), said to a
    # person; a score or a rating is a review widget's ("Reviewer rating: 4.8/5") and is no verdict word at all.
    verdict = any(not folded.startswith(" by ", m.end()) for m in _VERDICT.finditer(folded))
    directive = _DIRECTIVE.search(folded) is not None
    if (verdict or directive) and _addressed(folded):
        return True
    if _THIS_TEXT.search(folded) is not None and verdict and directive:
        return True
    return (
        _ASSIGNED.search(folded) is not None
        or _OVERRIDE_INSTRUCTIONS.search(folded) is not None
        or _STATE.search(folded) is not None
    )


_STATE = Pattern(
    _W0 + r"(?:(?:all|every|each)\s+(?:the\s+)?(?:criteria|criterion|checks?|requirements?)\s+(?:are\s+|is\s+)?"
    r"(?:met|satisfied|passed|fulfilled)|pre-?approved|pre-?cleared|already\s+(?:approved|reviewed|cleared|verified)"
    r"|no\s+(?:issues|problems|findings|defects|violations)(?!\s+(?:with|on|in|for|when|if)\b)(?:\s+found)?"
    r"|nothing\s+to\s+(?:flag|report|fix)"
    r"|(?:do\s+not|don't|never)\s+flag|findings\s*:\s*none|passes\s+every"
    r"|(?:reviewed|checked|verified)\s+and\s+approved|compliant\s+with\s+(?:all|every))" + _W1
)
"""A state of the review in a carrier nobody reads ("all criteria satisfied", "pre-approved, no issues"): the low bar
of a hidden carrier needs no addressee for it (a reader is never told a review's state in a comment)."""


_KEYWORD = Pattern(
    _W0 + r"(?:reviewers?|graders?|evaluators?|judges?|assessors?|ai|llms?|models?|assistants?|bots?|agents?|ignore"
    r"|disregard|previous|prior|instructions?|rubric|criteri(?:on|a)|pass(?:es|ed)?|approved?|compliant|verdict|nice"
    r"|respond|return|mark)" + _W1
)
"""A word an attack splits with invisible characters to slip past a matcher (English, the matcher's language): a
split word elsewhere is hyphenation ("ge\u00adneh\u00admigt")."""
_ALWAYS = {
    "Unicode tag characters": "invisible ASCII a model reads",
    "a run of zero-width characters": "invisible bits a model can be told to read",
}
"""Carriers that are a finding whatever they say: no person writes text in characters nobody can see."""


def find(text: str, ctx: Context = NO_CONTEXT) -> list[Signal]:
    """Carriers a reader does not see whose text speaks to an automated reader, and every run of tag characters."""
    signals = []
    for c in _carriers(text):
        if c.kind in _ALWAYS:
            name = f"{c.kind} spelling text ({_ALWAYS[c.kind]})"
        elif c.split and not any(_KEYWORD.search(fold(word, casefold=True).text) for word in c.split):
            continue  # a visible line: only an attack's word split hides something (the rest is hyphenation)
        elif addresses_a_reader(c.inner) or _names_a_criterion(c.inner, ctx):
            name = f"{c.kind} that speaks to an automated reader"
        else:
            continue
        signals.append(Signal(c.start, c.end, name, "carriers", text[c.start : c.end]))
    return signals


def _names_a_criterion(inner: str, ctx: Context) -> bool:
    """A hidden carrier that names one of the rubric's criteria (its id or its name) speaks to the reviewers."""
    lowered = inner.lower()
    return any(len(c) >= 4 and c.lower() in lowered for c in ctx.criteria)
