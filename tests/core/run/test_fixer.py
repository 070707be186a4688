"""The fix agent touches only the sentences that hold flagged evidence; everything else is refused and shown."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from santa_core.models import FixEdit, FixPlan, MergedIssue
from santa_core.reviewers.doubles import FunctionFixer
from santa_core.run.fixer import apply_plan, is_complete, issue_fixes, propose_fix
from santa_core.scope import scope_of, sentence_spans

YEAR = MergedIssue(criterion="facts", description="wrong year", evidence="in 2019", flagged_by="both")
LINK = MergedIssue(criterion="cta", description="no link", evidence="Buy now!", flagged_by="B")
ISSUES = [YEAR, LINK]
TEXT = "Founded in 2019, Acme sells rockets.\nBuy now!\n"


@pytest.mark.parametrize(
    ("edit", "reason"),
    [
        pytest.param(FixEdit(issue=0, before="in 2020", after="in 2018"), "not found", id="before-not-found"),
        pytest.param(FixEdit(issue=0, before="", after="x"), "empty", id="empty-before"),
        pytest.param(FixEdit(issue=0, before="o", after="0"), "occurs", id="ambiguous-before"),
        pytest.param(FixEdit(issue=7, before="2019", after="2018"), "issue 8, which is not one of", id="unknown-issue"),
        pytest.param(FixEdit(issue=0, before="2019", after="2019"), "changes nothing", id="no-op"),
    ],
)
def test_bad_edits_are_rejected_and_text_unchanged(edit: FixEdit, reason: str) -> None:
    new, applied, rejected = apply_plan(TEXT, FixPlan(edits=[edit]), ISSUES)
    assert new == TEXT and applied == []
    assert reason in rejected[0].reason


def test_good_edits_apply_and_overlaps_are_rejected() -> None:
    plan = FixPlan(
        edits=[
            FixEdit(issue=1, before="Buy now!", after="Buy now at https://acme.example!"),
            FixEdit(issue=0, before="in 2019", after="in 2018"),
            FixEdit(issue=0, before="2019, Acme", after="2017, Acme"),
        ]
    )
    new, applied, rejected = apply_plan(TEXT, plan, ISSUES)
    assert new == "Founded in 2018, Acme sells rockets.\nBuy now at https://acme.example!\n"
    assert len(applied) == 2 and "overlaps" in rejected[0].reason


def test_rejections_number_issues_as_the_page_does() -> None:
    _, _, rejected = apply_plan(TEXT, FixPlan(edits=[FixEdit(issue=1, before="rockets", after="cars")]), ISSUES)
    assert rejected[0].reason.startswith("edit for issue 2 ")


REFUNDS = "Our plan costs 10 dollars. Refunds within 30 days. Support answers in one hour.\nCall us."


@pytest.mark.parametrize(
    "edit",
    [
        pytest.param(
            FixEdit(
                issue=0,
                before="Our plan costs 10 dollars. Refunds within 30 days. Support answers in one hour.",
                after="Our plan costs 12 dollars. No refunds. Support answers in a day.",
            ),
            id="evidence-plus-two-unflagged-sentences",
        ),
        pytest.param(FixEdit(issue=0, before="Refunds within 30 days", after="No refunds"), id="another-sentence"),
        pytest.param(
            FixEdit(issue=0, before="10 dollars. Refunds", after="12 dollars. No refunds"),
            id="running-into-the-next-sentence",
        ),
        pytest.param(FixEdit(issue=0, before="hour.\nCall", after="hour. Do not call"), id="across-a-line-break"),
    ],
)
def test_an_edit_outside_the_sentence_that_holds_the_evidence_is_refused(edit: FixEdit) -> None:
    issues = [MergedIssue(criterion="facts", description="wrong price", evidence="10 dollars", flagged_by="B")]
    if edit.before.startswith("hour."):
        issues = [MergedIssue(criterion="facts", description="too slow", evidence="one hour", flagged_by="B")]
    new, applied, rejected = apply_plan(REFUNDS, FixPlan(edits=[edit]), issues)
    assert new == REFUNDS and applied == []
    assert "reaches beyond the sentence" in rejected[0].reason


def test_an_edit_anywhere_inside_the_flagged_sentence_applies() -> None:
    issues = [MergedIssue(criterion="facts", description="wrong price", evidence="10 dollars", flagged_by="B")]
    edit = FixEdit(issue=0, before="Our plan costs 10 dollars.", after="Our plan costs 12 dollars a month.")
    new, applied, _ = apply_plan(REFUNDS, FixPlan(edits=[edit]), issues)
    assert new == REFUNDS.replace("Our plan costs 10 dollars.", "Our plan costs 12 dollars a month.")
    assert applied == [edit]


@pytest.mark.parametrize(
    "issue",
    [
        pytest.param(MergedIssue(criterion="tone", description="too flat", flagged_by="B"), id="no-evidence"),
        pytest.param(
            MergedIssue(
                criterion="facts", description="refund period", evidence="Refunds are within 60 days", flagged_by="C"
            ),
            id="paraphrased-evidence",
        ),
        pytest.param(
            MergedIssue(criterion="secrets", description="key", evidence="sk-…redacted…", flagged_by="check"),
            id="redacted-evidence",
        ),
    ],
)
def test_an_unanchored_issue_gets_no_automatic_edit(issue: MergedIssue) -> None:
    plan = FixPlan(
        edits=[
            FixEdit(issue=0, before="Refunds within 30 days", after="No refunds"),
            FixEdit(issue=0, before=REFUNDS, after="Completely rewritten."),
        ]
    )
    new, applied, rejected = apply_plan(REFUNDS, plan, [issue])
    assert new == REFUNDS and applied == []
    assert all("unanchored" in r.reason for r in rejected)
    proposal = propose_fix(FunctionFixer("f", lambda r: plan), "spec", REFUNDS, [issue])
    assert [(f.number, f.state) for f in issue_fixes(proposal)] == [(1, "unanchored")]
    assert not is_complete(proposal)


def test_evidence_is_found_across_spacing_and_quote_style_but_not_changed_words() -> None:
    text = "We said “fast”   delivery\tin 2019. Other text."
    assert scope_of(text, 'said "fast" delivery in 2019') == [(0, text.index("Other"))]
    assert scope_of(text, "said quick delivery") == []


def test_for_code_the_scope_is_the_line() -> None:
    code = "def total(xs):\n    return sum(xs) + 1\n\nprint(total([1, 2]))\n"
    issue = MergedIssue(criterion="bug", description="off by one", evidence="sum(xs) + 1", flagged_by="B")
    ok = FixEdit(issue=0, before="    return sum(xs) + 1", after="    return sum(xs)")
    too_far = FixEdit(issue=0, before="sum(xs) + 1\n\nprint", after="sum(xs)\nprint")
    new, applied, rejected = apply_plan(code, FixPlan(edits=[ok, too_far]), [issue])
    assert new == code.replace("sum(xs) + 1", "sum(xs)") and applied == [ok]
    assert "reaches beyond" in rejected[0].reason


def test_issue_fixes_say_per_issue_what_the_proposal_did() -> None:
    issues = [
        YEAR,
        LINK,
        MergedIssue(criterion="tone", description="flat", flagged_by="C"),
        MergedIssue(criterion="facts", description="name", evidence="Acme sells", flagged_by="B"),
    ]
    plan = FixPlan(
        edits=[FixEdit(issue=0, before="in 2019", after="in 2018"), FixEdit(issue=1, before="Buy now!\n", after="x")]
    )  # crosses the line break: refused
    proposal = propose_fix(FunctionFixer("f", lambda r: plan), "spec", TEXT, issues)
    fixes = issue_fixes(proposal)
    assert [(f.number, f.state) for f in fixes] == [(1, "fixed"), (2, "failed"), (3, "unanchored"), (4, "not fixed")]
    assert "reaches beyond" in fixes[1].reason
    assert not is_complete(proposal)
    whole = propose_fix(FunctionFixer("f", lambda r: FixPlan(edits=plan.edits[:1])), "spec", TEXT, [YEAR])
    assert is_complete(whole)


def test_a_fix_agent_failure_marks_every_anchored_issue_failed() -> None:
    proposal = propose_fix(FunctionFixer("f", lambda req: 1 / 0), "spec", TEXT, ISSUES)
    assert proposal.error and "ZeroDivisionError" in proposal.error and proposal.edits == []
    assert {f.state for f in issue_fixes(proposal)} == {"failed"}


def test_many_small_edits_cannot_add_up_to_a_rewrite() -> None:
    text = ", ".join(f"filler {i} here" for i in range(10)) + "."  # one sentence
    issue = MergedIssue(criterion="tone", description="too flat", evidence="filler 0 here", flagged_by="B")
    plan = FixPlan(edits=[FixEdit(issue=0, before=f"filler {i} here", after="rewritten") for i in range(10)])
    new, applied, rejected = apply_plan(text, plan, [issue])
    assert len(applied) == 3 and len(rejected) == 7
    assert "more than 3 edits for one issue" in rejected[0].reason


def test_half_the_output_is_the_most_a_plan_may_replace() -> None:
    text = "".join(f"<{i:02d}>" + "x" * 45 + "\n" for i in range(20))  # 1,000 characters
    issues = [
        MergedIssue(criterion=f"c{i}", description=f"problem {i}", evidence=f"<{i:02d}>xxx", flagged_by="B")
        for i in range(20)
    ]
    plan = FixPlan(edits=[FixEdit(issue=i, before=f"<{i:02d}>" + "x" * 45, after="y") for i in range(20)])
    _, applied, rejected = apply_plan(text, plan, issues)
    assert len(applied) == 10 and "over 500 characters" in rejected[0].reason


def test_an_edit_may_not_balloon() -> None:
    edit = FixEdit(issue=0, before="in 2019", after="in 2018" + "!" * 2000)
    _, applied, rejected = apply_plan(TEXT, FixPlan(edits=[edit]), [YEAR])
    assert applied == [] and "a fix may add at most 1,000" in rejected[0].reason


# --- the property: an adversarial fix agent cannot change a byte outside the flagged sentences -----


def sentence_partition_holds(text: str) -> bool:
    spans = sentence_spans(text)
    covered = "".join(text[s:e] for s, e in spans)
    return covered == re.sub(r"\r\n|[\n\r\v\f\x1c-\x1e\x85\u2028\u2029]", "", text) and all(s < e for s, e in spans)


WORDS = st.sampled_from(
    [
        "Acme",
        "ships",
        "rockets",
        "in",
        "2019",
        "refunds",
        "30",
        "days",
        "free",
        "now",
        "we",
        "a",
        "No",
        "3.5",
        "e.g.",
        "U.S.",
        "v1.2.3",
        "退款",
    ]
)
SENTENCE = (
    st.lists(WORDS, min_size=1, max_size=6)
    .map(" ".join)
    .flatmap(lambda body: st.sampled_from([".", "!", "?", "", "。", ".**", ".[1]", '."']).map(lambda end: body + end))
)
TEXTS = st.lists(
    st.tuples(
        SENTENCE, st.sampled_from([" ", "  ", "\n", "\r\n", " \n", "", "\r", "\u00a0", "\u2028", "\u2029", "\u3000"])
    ),
    min_size=1,
    max_size=8,
).map(lambda parts: "".join(s + sep for s, sep in parts))


def flagged_and_kept(text: str, issues: list[MergedIssue]) -> list[str]:
    """The text outside every issue's scope, as the pieces between flagged spans, in order."""
    spans = sorted(s for i in issues for s in scope_of(text, i.evidence))
    kept, cursor = [], 0
    for start, end in spans:
        if start > cursor:
            kept.append(text[cursor:start])
            cursor = start
        cursor = max(cursor, end)
        kept.append(None)
    kept.append(text[cursor:])
    return kept


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), text=TEXTS)
def test_an_adversarial_fix_agent_changes_nothing_outside_the_flagged_sentences(data: st.DataObject, text: str) -> None:
    assert sentence_partition_holds(text)

    def quote() -> str:
        start = data.draw(st.integers(0, len(text) - 1))
        end = data.draw(st.integers(start + 1, min(len(text), start + 40)))
        return text[start:end]

    issues = [
        MergedIssue(
            criterion="c",
            description="d",
            flagged_by="B",
            evidence=data.draw(st.one_of(st.just(""), st.just("not in the text"), st.builds(quote))),
        )
        for _ in range(data.draw(st.integers(1, 3)))
    ]
    edits = [
        FixEdit(
            issue=data.draw(st.integers(-1, len(issues))),
            before=quote(),
            after=data.draw(st.text(alphabet="xyz .\n", max_size=30)),
        )
        for _ in range(data.draw(st.integers(0, 6)))
    ]
    proposal = propose_fix(FunctionFixer("adversary", lambda r: FixPlan(edits=edits)), "spec", text, issues)
    pattern = "".join(".*?" if piece is None else re.escape(piece) for piece in flagged_and_kept(text, issues))
    assert re.fullmatch(pattern, proposal.proposed_text, flags=re.DOTALL), (text, issues, edits)
    if all(not scope_of(text, i.evidence) for i in issues):
        assert proposal.proposed_text == text


# --- the same property against hand-labelled sentences: the oracle owes nothing to santa_core.scope -----
#
# The property above compares the fixer with `scope_of`, so it cannot see a scope that is wrong. Here
# the text is built from sentences whose spans the test knows by construction: each starts with a
# unique marker word ("Mk3x") and ends with ".", "!" or "?" before a space or a line break, so where
# a sentence begins and ends is not a judgement call. Evidence quotes a flagged sentence's marker and
# the words after it; the fix may change nothing outside the flagged sentences (each with the space
# after it), whatever the adversary edits.

PLAIN_WORDS = st.sampled_from(
    ["Acme", "ships", "rockets", "in", "2019", "refunds", "30", "days", "free", "now", "we", "a", "No", "退款"]
)
LABELLED = st.lists(
    st.tuples(st.lists(PLAIN_WORDS, max_size=5), st.sampled_from([".", "!", "?"]), st.sampled_from([" ", "\n"])),
    min_size=2,
    max_size=6,
)


def labelled_text(parts: list[tuple[list[str], str, str]]) -> tuple[str, list[tuple[int, int]], list[list[str]]]:
    """The text, each sentence's span (with the space after it, not a line break) and its words."""
    text, spans, words = "", [], []
    for i, (body, stop, sep) in enumerate(parts):
        sentence = [f"Mk{i}x", *body]
        start = len(text)
        text += " ".join(sentence) + stop + sep
        spans.append((start, len(text) if sep == " " else len(text) - 1))
        words.append(sentence)
    return text, spans, words


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), parts=LABELLED)
def test_an_adversarial_fix_agent_changes_nothing_outside_hand_labelled_flagged_sentences(
    data: st.DataObject, parts: list[tuple[list[str], str, str]]
) -> None:
    text, spans, words = labelled_text(parts)
    flagged = sorted(data.draw(st.sets(st.integers(0, len(spans) - 1), min_size=1, max_size=2)))
    issues = [
        MergedIssue(
            criterion="c",
            description="d",
            flagged_by="B",
            evidence=" ".join(words[i][: data.draw(st.integers(1, len(words[i])))]),
        )
        for i in flagged
    ]

    def quote() -> str:
        start = data.draw(st.integers(0, len(text) - 1))
        return text[start : data.draw(st.integers(start + 1, min(len(text), start + 40)))]

    edits = [
        FixEdit(
            issue=data.draw(st.integers(0, len(issues) - 1)),
            before=quote(),
            after=data.draw(st.text(alphabet="xyz .\n", max_size=30)),
        )
        for _ in range(data.draw(st.integers(1, 6)))
    ]
    proposal = propose_fix(FunctionFixer("adversary", lambda r: FixPlan(edits=edits)), "spec", text, issues)
    kept, cursor = [], 0  # the text outside the flagged sentences, which must come back in order, untouched
    for i in flagged:
        kept.append(re.escape(text[cursor : spans[i][0]]))
        cursor = spans[i][1]
    kept.append(re.escape(text[cursor:]))
    assert re.fullmatch(".*?".join(kept), proposal.proposed_text, flags=re.DOTALL), (text, issues, edits)


def test_the_labelled_oracle_sees_an_edit_in_an_unflagged_sentence() -> None:
    text, spans, _ = labelled_text([(["ships", "rockets"], ".", " "), (["refunds", "30", "days"], "!", "\n")])
    issue = MergedIssue(criterion="c", description="d", flagged_by="B", evidence="Mk0x ships")
    plan = FixPlan(edits=[FixEdit(issue=0, before="30 days", after="60 days")])
    proposal = propose_fix(FunctionFixer("adversary", lambda r: plan), "spec", text, [issue])
    assert spans == [(0, 20), (20, 41)] and proposal.proposed_text == text
