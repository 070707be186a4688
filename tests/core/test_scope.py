"""The fix scope: where sentences end, and which evidence may anchor an automatic edit."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from santa_core.models import FixEdit, FixPlan, MergedIssue
from santa_core.reviewers.doubles import FunctionFixer
from santa_core.run.fixer import anchored, apply_plan, issue_fixes, propose_fix
from santa_core.scope import AMBIGUOUS, NOT_FOUND, TOO_SHORT, anchor, scope_of, sentence_spans

SPACES = " \t\u00a0\u2009\u202f\u3000"


def units(text: str) -> list[str]:
    return [text[s:e].rstrip(SPACES) for s, e in sentence_spans(text)]


# --- where a sentence ends ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("Refunds in 30 days.No refunds after.", ["Refunds in 30 days.", "No refunds after."], id="glued"),
        pytest.param(
            "Refunds in 30 days.Nothing else. Ok",
            ["Refunds in 30 days.", "Nothing else.", "Ok"],
            id="glued-one-word-sentence",
        ),
        pytest.param("Great!Now what?Yes, today.", ["Great!", "Now what?", "Yes, today."], id="glued-bang-question"),
        pytest.param(
            "Refunds in 30 days.\u00a0No refunds after.", ["Refunds in 30 days.", "No refunds after."], id="nbsp"
        ),
        pytest.param(
            "Refunds in 30 days.\u2009No refunds.\u3000Call us.",
            ["Refunds in 30 days.", "No refunds.", "Call us."],
            id="thin-and-ideographic-space",
        ),
        pytest.param(
            "Refunds in 30 days.\u200bNo refunds after.",
            ["Refunds in 30 days.\u200b", "No refunds after."],
            id="zero-width-space",
        ),
        pytest.param(
            "退款期限为30天。之后不退款！真的吗？是的。",
            ["退款期限为30天。", "之后不退款！", "真的吗？", "是的。"],
            id="cjk-stops",
        ),
        pytest.param("「30日以内。」その後は不可。", ["「30日以内。」", "その後は不可。"], id="cjk-closing-bracket"),
        pytest.param(
            "Ｆｒｅｅ ｓｈｉｐｐｉｎｇ．Ｎｏ ｒｅｆｕｎｄｓ．",
            ["Ｆｒｅｅ ｓｈｉｐｐｉｎｇ．", "Ｎｏ ｒｅｆｕｎｄｓ．"],
            id="full-width-stop",
        ),
        pytest.param("Refunds in 30 days.\rNo refunds.", ["Refunds in 30 days.", "No refunds."], id="lone-cr"),
        pytest.param(
            "Refunds in 30 days\rno refunds after", ["Refunds in 30 days", "no refunds after"], id="cr-no-stop"
        ),
        pytest.param(
            "One line\u2028two lines\u2029three\x85four\x0bfive\x0csix",
            ["One line", "two lines", "three", "four", "five", "six"],
            id="unicode-line-separators",
        ),
        pytest.param(
            "**Free shipping.** Returns in 30 days.", ["**Free shipping.**", "Returns in 30 days."], id="markdown-bold"
        ),
        pytest.param(
            "_Free shipping._ Returns in 30 days.", ["_Free shipping._", "Returns in 30 days."], id="markdown-italics"
        ),
        pytest.param(
            "**Free shipping.**Returns in 30 days.",
            ["**Free shipping.**", "Returns in 30 days."],
            id="markdown-bold-glued",
        ),
        pytest.param(
            'He wrote "Refunds in 30 days." Then he left.',
            ['He wrote "Refunds in 30 days."', "Then he left."],
            id="closing-quote",
        ),
        pytest.param(
            "(Refunds in 30 days.) Then call us.", ["(Refunds in 30 days.)", "Then call us."], id="closing-bracket"
        ),
        pytest.param(
            "Refunds in 30 days.[1] Next sentence.", ["Refunds in 30 days.[1]", "Next sentence."], id="footnote"
        ),
        pytest.param(
            "Refunds in 30 days.[^note] Next sentence.",
            ["Refunds in 30 days.[^note]", "Next sentence."],
            id="markdown-footnote",
        ),
        pytest.param(
            "Refunds in 30 days.² Next sentence.", ["Refunds in 30 days.²", "Next sentence."], id="superscript-footnote"
        ),
        pytest.param(
            "Made in the U.S. Refunds apply.",
            ["Made in the U.S.", "Refunds apply."],
            id="abbreviation-before-a-capital-still-ends",
        ),
        # when unsure the splitter cuts: a smaller scope can only refuse an edit
        pytest.param("Made by Acme.Order today.", ["Made by Acme.", "Order today."], id="proper-noun-glued"),
        pytest.param("Use the Acme.Kettle API.", ["Use the Acme.", "Kettle API."], id="dotted-name-cut"),
        # not boundaries
        pytest.param("It costs 3.5 euros and 1,000.50 dollars.", None, id="decimals"),
        pytest.param("Update to v1.2.3 or 2.0.1-beta today.", None, id="versions"),
        pytest.param("See e.g. the manual, i.e. page 5.", None, id="e.g.-i.e."),
        pytest.param("Made in the U.S. by Acme.", None, id="u.s.-lowercase"),
        pytest.param("Dr. Smith and Mrs. Jones agree.", ["Dr.", "Smith and Mrs.", "Jones agree."], id="titles-cut"),
        pytest.param(
            "Delivery within 1 hr. Refunds within 30 days.",
            ["Delivery within 1 hr.", "Refunds within 30 days."],
            id="abbreviation-before-a-capital",
        ),
        pytest.param("Fast order!🚚 Refunds within 30 days.", ["Fast order!🚚", "Refunds within 30 days."], id="emoji"),
        pytest.param("तेज़ डिलीवरी। रिफंड 30 दिन।", ["तेज़ डिलीवरी।", "रिफंड 30 दिन।"], id="devanagari"),
        pytest.param("توصيل سريع؟ استرداد", ["توصيل سريع؟", "استرداد"], id="arabic"),
        pytest.param(
            "timeout = 30; retries = 3; verify_tls = True",
            ["timeout = 30;", "retries = 3;", "verify_tls = True"],
            id="semicolons",
        ),
        pytest.param("| Fast | Refunds in 30 days |", ["|", "Fast |", "Refunds in 30 days |"], id="table-row"),
        pytest.param(
            "Κοστίζει 10 ευρώ\u037e Επιστροφές σε 30 ημέρες.",
            ["Κοστίζει 10 ευρώ\u037e", "Επιστροφές σε 30 ημέρες."],
            id="greek-question-mark",
        ),
        pytest.param(
            "Costs 10 dollars<br>Refunds within 30 days",
            ["Costs 10 dollars<br>", "Refunds within 30 days"],
            id="html-br",
        ),
        pytest.param(
            "<p>Costs 10 dollars</p>Refunds within 30 days",
            ["<p>Costs 10 dollars</p>", "Refunds within 30 days"],
            id="html-block-end",
        ),
        pytest.param("Costs 10&nbsp;dollars at AT&amp;T today.", None, id="html-entities-are-no-boundary"),
        pytest.param(
            "Only 10 dollars 🔥 Refunds within 30 days ⭐ Free delivery",
            ["Only 10 dollars 🔥", "Refunds within 30 days ⭐", "Free delivery"],
            id="emoji-without-a-stop",
        ),
        pytest.param(
            "Only 10 dollars • Refunds within 30 days",
            ["Only 10 dollars •", "Refunds within 30 days"],
            id="bullet-separator",
        ),
        pytest.param(
            "<li>Fast</li><li>Refunds in 30 days</li>",
            ["<li>Fast</li>", "<li>Refunds in 30 days</li>"],
            id="html-one-line",
        ),
        pytest.param("Approx. 5 minutes, see No. 7 and Fig. 2.", None, id="before-a-number"),
        pytest.param("Kettles, pans etc. are on sale.", None, id="etc"),
        pytest.param("Visit https://acme.example/Docs.Html or www.Acme.com today.", None, id="urls"),
        pytest.param("Mail jane.Doe@acme.example today.", None, id="email"),
        pytest.param(
            "Use node.js with System.Collections.Generic, not java.util.List, see /usr/share/doc.Index here.",
            None,
            id="dotted-names-and-paths",
        ),
        pytest.param("Price ３．５ euros.", None, id="full-width-decimal"),
    ],
)
def test_sentence_boundaries(text: str, expected: list[str] | None) -> None:
    assert units(text) == (expected or [text])


FIRST = st.sampled_from(["Refunds", "No", "Acme", "Support", "We", "Returns", "Free"])
WORD = st.sampled_from(["ships", "rockets", "in", "30", "days", "free", "now", "a", "kettle", "the"])
LAST = st.sampled_from(["days", "refunds", "shipping", "now", "today", "rockets", "here"])
STOP = st.sampled_from([".", "!", "?", "…", "...", "?!"])
CLOSER = st.sampled_from(["", "**", "*", "_", '"', "”", "’", ")", "]", "»", "[1]", "[^2]", "³", "**[1]"])
GAP = st.sampled_from(
    [" ", "  ", "\t", "\u00a0", "\u2009", "\u202f", "\u3000", "\r", "\n", "\r\n", "\u2028", "\u2029", " \n", ""]
)
LATIN = st.tuples(FIRST, st.lists(WORD, max_size=4), LAST, STOP, CLOSER).map(
    lambda p: f"{p[0]} {' '.join([*p[1], p[2]])}{p[3]}{p[4]}"
)
CJK = st.tuples(
    st.text(alphabet="退款天之后不可以是的三十", min_size=1, max_size=8),
    st.sampled_from("。！？．｡"),
    st.sampled_from(["", "」", "）", "』"]),
).map("".join)


@settings(max_examples=400, deadline=None)
@given(parts=st.lists(st.tuples(st.one_of(LATIN, CJK), GAP), min_size=1, max_size=8))
def test_every_sentence_is_its_own_unit(parts: list[tuple[str, str]]) -> None:
    """However sentences are glued together, each one is a unit: a scope never grows into the next."""
    text = "".join(s + gap for s, gap in parts)
    assert units(text) == [s for s, _ in parts]


# --- which evidence anchors an automatic edit ----------------------------------------------------

TEXT = "Our plan costs 10 dollars. Refunds within 30 days. Support answers in one hour, the same day.\nCall us."


@pytest.mark.parametrize(
    ("evidence", "why"),
    [
        pytest.param(".", TOO_SHORT, id="punctuation"),
        pytest.param("   ", "quotes no text", id="whitespace"),
        pytest.param("—!?", TOO_SHORT, id="punctuation-run"),
        pytest.param("10", TOO_SHORT, id="two-digits"),
        pytest.param("in", TOO_SHORT, id="two-letters"),
        pytest.param("the", TOO_SHORT, id="common-word"),
        pytest.param(" The. ", TOO_SHORT, id="common-word-with-punctuation"),
        pytest.param("and", TOO_SHORT, id="common-word-and"),
        pytest.param("days", AMBIGUOUS, id="found-twice"),  # "30 days" and "all days"
        pytest.param("Refunds within 60 days", NOT_FOUND, id="not-found"),
    ],
)
def test_evidence_that_points_at_no_one_place_anchors_nothing(evidence: str, why: str) -> None:
    text = TEXT.replace("the same day", "all days")
    place, reason = anchor(text, evidence)
    assert place is None and why in reason
    assert scope_of(text, evidence) == []


def test_evidence_found_twice_only_once_folded_is_ambiguous() -> None:
    text = 'We promise “fast” delivery. We promise "fast" delivery at night.'
    assert anchor(text, 'We promise "fast" delivery')[1] == AMBIGUOUS


def test_evidence_found_once_anchors_its_sentence_only() -> None:
    assert anchor(TEXT, "30 days") == ((TEXT.index("30 days"), TEXT.index("30 days") + 7), "")
    start = TEXT.index("Refunds")
    assert scope_of(TEXT, "30 days") == [(start, TEXT.index("Support"))]
    assert scope_of(TEXT, "Acme") == []


def test_an_ambiguous_quote_gets_no_automatic_edit_even_in_a_flagged_looking_sentence() -> None:
    """A quote found in two sentences does not say which one was flagged: no edit may reach either."""
    text = "Refunds within 30 days. Shipping within 30 days."
    issue = MergedIssue(criterion="facts", description="wrong period", evidence="within 30 days", flagged_by="B")
    plan = FixPlan(edits=[FixEdit(issue=0, before="Shipping within 30 days", after="Shipping within 3 days")])
    new, applied, rejected = apply_plan(text, plan, [issue])
    assert new == text and applied == []
    assert "unanchored" in rejected[0].reason and "more than once" in rejected[0].reason
    proposal = propose_fix(FunctionFixer("f", lambda r: plan), "spec", text, [issue])
    [fix] = issue_fixes(proposal)
    assert fix.state == "unanchored" and "more than once" in fix.reason
    assert anchored(text, [issue]) == []


@pytest.mark.parametrize("evidence", ["!", "l", "the", "$5"])
def test_a_short_quote_gets_no_automatic_edit(evidence: str) -> None:
    """Each quote stands once, in the sentence edited, yet names no place a person could check."""
    text = "Pay now. Get the kettle for $5!"
    issue = MergedIssue(criterion="facts", description="price", evidence=evidence, flagged_by="B")
    plan = FixPlan(edits=[FixEdit(issue=0, before="Get the kettle for $5!", after="Get nothing!")])
    new, applied, rejected = apply_plan(text, plan, [issue])
    assert new == text and applied == []
    assert "too short" in rejected[0].reason
