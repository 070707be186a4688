"""Patterns: a sample's failures grouped, matched across the batch, one approved fix applied."""

from __future__ import annotations

import random

import pytest

from santa_core.batch.item_fix import apply_pattern_fix, apply_to_batch
from santa_core.batch.patterns import (
    MIN_QUOTE_CHARS,
    Pattern,
    PatternMember,
    SampledFailure,
    group_patterns,
    matches,
    matching_items,
    pattern_fix_issues,
    rebuild,
)
from santa_core.models import (
    CheckResult,
    FixEdit,
    FixPlan,
    MergedIssue,
    Review,
    ReviewIssue,
    ReviewOutcome,
    ReviewStatus,
)
from santa_core.reviewers.base import FixRequest
from santa_core.reviewers.doubles import FunctionFixer
from santa_core.run.fixer import propose_fix
from santa_core.run.gate import merge_issues

# --- a synthetic batch: 5 templates x 40 items, a defect planted in 8 of the 40 promo items ---

TEMPLATES = ["promo", "guide", "faq", "email", "notice"]
DEFECT = "Free shipping on all orders, guaranteed forever."
FIX = "Free shipping on orders over $50."
PLANTED = {f"promo-{n:02d}" for n in (3, 8, 13, 18, 23, 28, 33, 38)}  # 8 / 40 = 20 % of one template


def item_text(template: str, n: int) -> str:
    """A clean output; some promo items carry a look-alike of the defect that must not match."""
    lines = [
        f"{template.title()} #{n}: the Acme Rocket {n} ships in {n % 7 + 1} days.",
        f"It comes with a {n % 3 + 1}-year warranty; see the small orders page.\r\n",
    ]
    if template == "promo" and n % 2 == 0:
        lines.insert(1, FIX)  # the correct claim, present in clean items
    if template == "faq":
        lines.insert(1, "Is shipping free on all orders? Only above $50.")
    key = f"{template}-{n:02d}"
    if key in PLANTED:
        lines.insert(1, DEFECT)
    return "\n".join(lines)


BATCH: list[tuple[str, str]] = [(f"{t}-{n:02d}", item_text(t, n)) for t in TEMPLATES for n in range(40)]
OUTPUTS = dict(BATCH)
STRATA = {key: {"template": key.split("-")[0], "locale": "de" if int(key[-2:]) % 3 == 0 else "en"} for key, _ in BATCH}


def review(*issues: ReviewIssue) -> ReviewOutcome:
    """A FAIL review listing the issues (slot set by the caller)."""
    checks = [CheckResult(criterion=i.criterion, result="FAIL", detail=i.description) for i in issues]
    return ReviewOutcome(
        slot="B",
        reviewer="m",
        status=ReviewStatus.OK,
        review=Review(verdict="FAIL", checks=checks, critical_issues=list(issues), suggestions=[]),
    )


def gate_issues(b: list[ReviewIssue], c: list[ReviewIssue]) -> list[MergedIssue]:
    """The merged issues the gate would hand over for one item."""
    return merge_issues(review(*b), review(*c).model_copy(update={"slot": "C"}))


def failure(key: str, issues: list[MergedIssue], error: str | None = None) -> SampledFailure:
    return SampledFailure(item_key=key, strata=STRATA[key], output=OUTPUTS[key], issues=issues, error=error)


FACT = "factual-accuracy"


def sample_failures() -> list[SampledFailure]:
    """What reviewing a sample finds: three planted items quoted three different ways, plus noise."""
    return [
        failure(
            "promo-08",
            gate_issues(
                [
                    ReviewIssue(
                        criterion=FACT,
                        evidence=DEFECT,
                        description="Promises free shipping on all orders forever; the spec limits it to $50+.",
                    )
                ],
                [
                    ReviewIssue(
                        criterion=FACT, evidence=DEFECT, description="Free shipping forever is not offered in the spec."
                    )
                ],
            ),
        ),
        # B and C quote different parts of the sentence: the gate keeps them as two issues
        failure(
            "promo-23",
            gate_issues(
                [
                    ReviewIssue(
                        criterion=FACT,
                        evidence="Free shipping on all orders",
                        description="Claims free shipping on every order, which the spec does not offer.",
                    )
                ],
                [
                    ReviewIssue(
                        criterion=FACT,
                        evidence="guaranteed  forever",
                        description="A forever guarantee of free shipping is not in the spec.",
                    )
                ],
            ),
        ),
        failure(
            "promo-33",
            gate_issues(
                [
                    ReviewIssue(
                        criterion=FACT,
                        evidence="free shipping on all orders, guaranteed forever",
                        description="Unlimited free shipping guarantee is invented.",
                    )
                ],
                [],
            ),
        ),
        failure(
            "guide-05",
            gate_issues(
                [ReviewIssue(criterion="completeness", description="Does not say how long delivery takes.")], []
            ),
        ),
        failure("faq-11", [], error="reviewer C timeout: timed out after 60 s"),
    ]


def test_planted_defect_is_one_pattern_with_counts_strata_and_examples() -> None:
    patterns = group_patterns(sample_failures())
    assert [(p.kind, p.criterion, p.count) for p in patterns] == [
        ("issue", FACT, 3),
        ("issue", "completeness", 1),
        ("review_failed", "", 1),
    ]
    defect = patterns[0]
    assert defect.items == ["promo-08", "promo-23", "promo-33"] and len(defect.members) == 4  # promo-23 twice
    # locale is "de" when n % 3 == 0: 33 → de; 08, 23 → en
    assert defect.strata == {"locale": {"de": 1, "en": 2}, "template": {"promo": 3}}
    # promo-08 and promo-33 share the whole sentence (2 members); flagged by both, promo-08 sorts first
    assert defect.representative == "promo-08" and defect.examples == ["promo-08", "promo-23", "promo-33"]
    assert defect.evidence[0] == DEFECT and len(defect.evidence) == 3
    assert defect.match_on == defect.evidence and defect.matchable


def test_sample_pattern_is_matched_and_fixed_across_the_whole_batch_and_resample_is_clean() -> None:
    defect = group_patterns(sample_failures())[0]
    assert matching_items(defect, BATCH) == sorted(PLANTED)  # exactly the planted items, none else

    issues = pattern_fix_issues(defect)
    assert [i.evidence for i in issues] == [DEFECT]

    def fix_agent(request: FixRequest) -> FixPlan:
        return FixPlan(edits=[FixEdit(issue=0, before=DEFECT, after=FIX)])

    fixer = FunctionFixer("fixer", fix_agent)
    proposal = propose_fix(fixer, "spec", OUTPUTS[defect.representative], issues)
    assert fixer.requests[0].issues == issues and not proposal.rejected
    fixes = apply_to_batch(defect, proposal.edits, BATCH)  # the person approved proposal.edits

    assert sorted(fixes) == sorted(PLANTED)
    assert fixes[defect.representative].after_text == proposal.proposed_text
    fixed = {key: fixes[key].after_text if key in fixes else text for key, text in BATCH}
    for key, text in BATCH:
        if key not in PLANTED:
            assert fixed[key] is text  # untouched: the very same string
            continue
        at = text.index(DEFECT)
        assert fixed[key][:at] == text[:at] and fixed[key][at + len(FIX) :] == text[at + len(DEFECT) :]
        assert fixed[key][at : at + len(FIX)] == FIX and not fixes[key].skipped
    # a fresh sample (here: every item) shows no trace of the pattern
    assert not any(matches(defect, text) for text in fixed.values())
    assert all(not f.changed for f in apply_to_batch(defect, proposal.edits, fixed.items()).values())


@pytest.mark.parametrize(
    ("quote", "output", "expected"),
    [
        pytest.param("Free shipping on all orders", "Yes. Free shipping on all orders.", True, id="exact"),
        pytest.param("Free shipping on all orders", "FREE SHIPPING ON ALL ORDERS", True, id="case"),
        pytest.param("Free shipping on all orders", "Free   shipping\r\non all\torders", True, id="whitespace"),
        pytest.param("Free shipping on all orders", "Free shipping - on all orders!", True, id="punctuation"),
        pytest.param("Ｆｒｅｅ shipping on all orders", "Free shipping on all orders", True, id="nfkc-fullwidth"),
        pytest.param("free shipping on all orders", "carefree shipping on all orders", False, id="not-mid-word-start"),
        pytest.param("all orders ship today", "small orders ship today", False, id="not-mid-word-start-2"),
        pytest.param("Free shipping on all orders", "Free shipping on all ordersXL", False, id="not-mid-word-end"),
        pytest.param("Free shipping on all orders", "Free shipping on most orders", False, id="different-words"),
        pytest.param("Lieferung in jede Straße", "LIEFERUNG IN JEDE STRASSE", True, id="unicode-casefold"),
        pytest.param("Versand für alle Bestellungen", "Versand fur alle Bestellungen", False, id="accents-count"),
        pytest.param("所有订单免费送货", "我们所有订单免费送货永久保证。", True, id="cjk-no-spaces"),
        pytest.param("所有订单免费送货", "我们所有订单收费送货。", False, id="cjk-different"),
        pytest.param("free", "free shipping", False, id="too-short-never-matches"),
    ],
)
def test_matching_normalises_case_space_punctuation_on_word_boundaries(quote: str, output: str, expected: bool) -> None:
    pattern = hand_pattern([quote])
    assert matches(pattern, output) is expected
    assert matching_items(pattern, [("x", output)]) == (["x"] if expected else [])


def hand_pattern(quotes: list[str], items: list[str] | None = None) -> Pattern:
    return Pattern(
        key="p-test",
        criterion=FACT,
        title="t",
        evidence=quotes,
        match_on=quotes,
        items=items or [],
        count=len(items or []),
        representative=(items or ["r"])[0],
    )


def make(key: str, output: str, *issues: tuple[str, str, str], strata: dict[str, str] | None = None) -> SampledFailure:
    """A sampled failure from (criterion, description, evidence) triples."""
    merged = [MergedIssue(criterion=c, description=d, evidence=e, flagged_by="B") for c, d, e in issues]
    return SampledFailure(item_key=key, strata=strata or {}, output=output, issues=merged)


def test_short_generic_quote_is_shown_but_never_matched_on() -> None:
    assert MIN_QUOTE_CHARS == 8
    failures = [make(k, f"Founded in 2019. Item {k}.", (FACT, "wrong founding year", "2019")) for k in ("a", "b")]
    [pattern] = group_patterns(failures)
    assert pattern.evidence == ["2019"] and pattern.match_on == [] and not pattern.matchable
    # only the sampled items: "2019" in the rest of the batch says nothing about the defect
    assert matching_items(pattern, [("a", "x"), ("z", "Founded in 2019.")]) == ["a"]


@pytest.mark.parametrize(
    ("issues", "groups"),
    [
        pytest.param(
            [(FACT, "wrong year", "Founded in 2019 by Ann"), ("compliance", "wrong year", "Founded in 2019 by Ann")],
            [1, 1],
            id="same-quote-different-criteria-stay-apart",
        ),
        pytest.param(
            [
                (FACT, "wrong founding year", "Founded in 2019 by Ann"),
                (FACT, "the founder is Bob", "founded IN 2019 by ann!"),
            ],
            [2],
            id="same-long-quote-one-criterion-is-one-pattern",
        ),
        pytest.param(
            [(FACT, "wrong founding year", "2019"), (FACT, "price is outdated", "2019")],
            [1, 1],
            id="same-short-quote-unrelated-complaints-stay-apart",
        ),
        pytest.param(
            [(FACT, "founding year is wrong", "2019"), (FACT, "founding year does not match", "2019")],
            [2],
            id="same-short-quote-same-complaint-joins",
        ),
        pytest.param(
            [
                (FACT, "the shipping promise is invented", "guaranteed forever"),
                (FACT, "free shipping is not offered", "Free shipping on all orders, guaranteed forever."),
            ],
            [2],
            id="quote-inside-quote-with-agreeing-complaints",
        ),
        pytest.param(
            [
                (FACT, "lifetime warranty claim", "guaranteed forever"),
                (FACT, "free shipping is not offered", "Free shipping on all orders, guaranteed forever."),
            ],
            [1, 1],
            id="quote-inside-quote-different-complaints-stay-apart",
        ),
        pytest.param(
            [(FACT, "Delivery time is not stated anywhere.", ""), (FACT, "Delivery time is not stated anywhere", "")],
            [2],
            id="no-quote-near-identical-descriptions",
        ),
        pytest.param(
            [(FACT, "Delivery time is not stated.", ""), (FACT, "No price given for the rocket.", "")],
            [1, 1],
            id="no-quote-different-descriptions",
        ),
        pytest.param(
            [
                ("Factual-Accuracy", "wrong founding year", "Founded in 2019 by Ann"),
                (FACT, "wrong founding year", "Founded in 2019 by Ann"),
            ],
            [2],
            id="criterion-spelling-normalised",
        ),
    ],
)
def test_grouping_rules(issues: list[tuple[str, str, str]], groups: list[int]) -> None:
    text = "Founded in 2019 by Ann. Free shipping on all orders, guaranteed forever."
    failures = [make(f"item-{i}", text, issue) for i, issue in enumerate(issues)]
    assert [p.count for p in group_patterns(failures)] == groups


def test_grouping_is_transitive_through_overlapping_quotes() -> None:
    # a~b share 2 of 4 words, b~c share 2 of 4, a and c share none: still one pattern (union-find)
    text = "alpha bravo charlie delta echo foxtrot golf hotel"
    failures = [
        make("a", text, (FACT, "invented rocket claim", "alpha bravo charlie delta")),
        make("b", text, (FACT, "rocket claim unsupported", "charlie delta echo foxtrot")),
        make("c", text, (FACT, "the rocket claim", "echo foxtrot golf hotel")),
    ]
    [pattern] = group_patterns(failures)
    assert pattern.items == ["a", "b", "c"] and len(pattern.match_on) == 3


def test_keys_and_order_are_deterministic_whatever_the_input_order() -> None:
    failures = sample_failures() + [
        make("guide-07", "Delivery: soon.", ("completeness", "Does not say how long delivery takes.", ""))
    ]
    expected = group_patterns(failures)
    # counts 3, 2, then the bucket; keys are short hashes
    assert [p.count for p in expected] == [3, 2, 1]
    assert all(p.key.startswith("p-") and len(p.key) == 14 for p in expected[:2]) and expected[2].key == "review-failed"
    for seed in range(5):
        shuffled = failures[:]
        random.Random(seed).shuffle(shuffled)
        assert [p.model_dump() for p in group_patterns(shuffled)] == [p.model_dump() for p in expected]


def test_equal_counts_are_ordered_by_key() -> None:
    failures = [
        make(k, "Some rocket text here.", (c, d, ""))
        for k, c, d in [
            ("a", "x", "Delivery time is not stated."),
            ("b", "y", "No price given."),
            ("c", "z", "No warranty."),
        ]
    ]
    keys = [p.key for p in group_patterns(failures)]
    assert keys == sorted(keys) and len(set(keys)) == 3


def test_review_failures_and_unexplained_items_are_never_dropped() -> None:
    text = "Free shipping on all orders, guaranteed forever."
    failures = [
        SampledFailure(item_key="e1", strata={"t": "a"}, output=text, error="reviewer B error: invalid JSON"),
        SampledFailure(
            item_key="e2",
            strata={"t": "b"},
            output=text,
            error="reviewer B error: invalid JSON",
            issues=[MergedIssue(criterion=FACT, description="invented", evidence=text, flagged_by="C")],
        ),
        SampledFailure(item_key="e3", strata={"t": "a"}, output=text, error="timed out"),
        SampledFailure(item_key="n1", output=text),
    ]
    issue, failed, bare = group_patterns(failures)
    assert (issue.kind, issue.items) == ("issue", ["e2"])  # its issues still count; its review is incomplete
    assert (failed.kind, failed.items, failed.title) == (
        "review_failed",
        ["e1", "e2", "e3"],
        "review failed: reviewer B error: invalid JSON",
    )
    assert failed.strata == {"t": {"a": 2, "b": 1}} and not failed.matchable
    assert (bare.kind, bare.items, bare.key) == ("unexplained", ["n1"], "unexplained")
    assert matching_items(failed, [("e1", text), ("z", text)]) == []


def test_quote_not_found_in_its_own_item_is_not_matched_on() -> None:
    # the reviewer paraphrased: the quote is shown, but the batch is not searched for it
    [pattern] = group_patterns(
        [make("a", "We ship free, forever.", (FACT, "invented", "Shipping is free for all orders forever"))]
    )
    assert pattern.evidence == ["Shipping is free for all orders forever"] and pattern.match_on == []
    assert not pattern.matchable and pattern.representative == "a"


def test_representative_prefers_a_verified_common_quote_flagged_by_both() -> None:
    text = "Founded in 2019 by Ann and Bob."
    quote = "Founded in 2019 by Ann"
    failures = [
        make("a", text, (FACT, "wrong year", "Founded in 2019 by Ann and Bob")),
        make("b", text, (FACT, "wrong year", quote)),
        make("c", text, (FACT, "wrong year", quote)),
        make("d", text, (FACT, "wrong year", quote)),
    ]
    failures[3].issues[0].flagged_by = "both"
    [pattern] = group_patterns(failures)
    # quote: 3 members (b, c, d), the longer one 1 (a); among b, c, d only d was flagged by both
    assert pattern.representative == "d" and pattern.examples == ["d", "a", "b"]
    assert pattern.evidence == [quote, "Founded in 2019 by Ann and Bob"]


def test_fix_issues_are_the_items_own_issues_in_the_pattern() -> None:
    patterns = group_patterns(sample_failures())
    assert [i.evidence for i in pattern_fix_issues(patterns[0], "promo-23")] == [
        "Free shipping on all orders",
        "guaranteed  forever",
    ]
    with pytest.raises(ValueError, match="'guide-05' has no issue in pattern"):
        pattern_fix_issues(patterns[0], "guide-05")


def test_an_item_given_twice_is_refused() -> None:
    with pytest.raises(ValueError, match="'a' appears twice in the sample"):
        group_patterns([make("a", "x"), make("a", "y")])
    with pytest.raises(ValueError, match="'a' appears twice in the batch"):
        apply_to_batch(hand_pattern(["Free shipping on all orders"]), [], [("a", "x"), ("a", "y")])


TEXT = "Título: Cohete Acme\r\nEnvío gratis para siempre.\r\nPrecio: 10 €\r\n"


@pytest.mark.parametrize(
    ("edits", "after", "reasons"),
    [
        pytest.param(
            [FixEdit(issue=0, before="Envío gratis para siempre.", after="Envío gratis desde 50 €.")],
            "Título: Cohete Acme\r\nEnvío gratis desde 50 €.\r\nPrecio: 10 €\r\n",
            [],
            id="unicode-crlf-kept",
        ),
        pytest.param(
            [FixEdit(issue=0, before="envío gratis para siempre.", after="x")],
            TEXT,
            ["not in this item"],
            id="case-variant-is-not-the-approved-text",
        ),
        pytest.param(
            [FixEdit(issue=0, before="Envío  gratis", after="x")],
            TEXT,
            ["not in this item"],
            id="whitespace-variant-is-not-the-approved-text",
        ),
        pytest.param([FixEdit(issue=0, before="\r\n", after="\n")], TEXT, ["occurs 3 times"], id="ambiguous"),
        pytest.param([FixEdit(issue=0, before="", after="x")], TEXT, ["empty"], id="empty-before"),
        pytest.param([FixEdit(issue=0, before="10 €", after="10 €")], TEXT, ["changes nothing"], id="no-op"),
        pytest.param(
            [
                FixEdit(issue=1, before="Precio: 10 €", after="Precio: 12 €"),
                FixEdit(issue=0, before="Título", after="Title"),
            ],
            "Title: Cohete Acme\r\nEnvío gratis para siempre.\r\nPrecio: 12 €\r\n",
            [],
            id="order-free",
        ),
        pytest.param(
            [
                FixEdit(issue=0, before="gratis para", after="libre"),
                FixEdit(issue=0, before="para siempre", after="hoy"),
            ],
            "Título: Cohete Acme\r\nEnvío libre siempre.\r\nPrecio: 10 €\r\n",
            ["overlaps another approved edit"],
            id="overlap-second-skipped",
        ),
        pytest.param(
            [FixEdit(issue=0, before="Cohete Acme", after="Cohete Acme (2026)")],
            TEXT.replace("Acme", "Acme (2026)"),
            [],
            id="after-contains-before-first-time",
        ),
        pytest.param(
            [FixEdit(issue=0, before="Cohete Acme", after="Cohete Acme (2026)")] * 2,
            TEXT.replace("Acme", "Acme (2026)"),
            ["overlaps"],
            id="same-edit-twice-applies-once",
        ),
    ],
)
def test_apply_pattern_fix(edits: list[FixEdit], after: str, reasons: list[str]) -> None:
    result = apply_pattern_fix(TEXT, edits)
    assert result.before_text == TEXT and result.after_text == after
    assert result.changed is (after != TEXT)
    assert len(result.applied) + len(result.skipped) == len(edits)
    assert [any(r in s.reason for r in reasons) for s in result.skipped] == [True] * len(reasons)


def test_applying_again_changes_nothing() -> None:
    edit = FixEdit(issue=0, before="Envío gratis", after="Envío gratis desde 50 €:")
    once = apply_pattern_fix(TEXT, [edit])
    twice = apply_pattern_fix(once.after_text, [edit])
    assert once.changed and not twice.changed and "already applied" in twice.skipped[0].reason


def test_item_matching_by_part_of_the_quote_is_reported_not_guessed() -> None:
    # "guaranteed forever" is one of the pattern's quotes, so this item shows the pattern, but it
    # does not hold the approved text: it is listed, left byte-identical and its skip explained
    defect = group_patterns(sample_failures())[0]
    other = "Our love of rockets is guaranteed forever."
    fixes = apply_to_batch(defect, [FixEdit(issue=0, before=DEFECT, after=FIX)], [*BATCH, ("extra", other)])
    assert "extra" in fixes and fixes["extra"].after_text is other
    assert "not in this item" in fixes["extra"].skipped[0].reason


def test_bytes_outside_the_approved_spans_stay_identical_property() -> None:
    rng = random.Random(11)
    for _ in range(200):
        words = [f"w{rng.randrange(5_000)}é" for _ in range(rng.randint(5, 40))]
        text = rng.choice(["", "\n", "\r\n"]).join([" ".join(words), rng.choice(["", "x", "ß"])])
        targets = rng.sample(words, k=min(3, len(words)))
        edits = [FixEdit(issue=0, before=w, after=w.upper() + "!") for w in targets]
        result = apply_pattern_fix(text, edits)
        restored = result.after_text
        for edit in result.applied:
            restored = restored.replace(edit.after, edit.before, 1)
        assert restored == text
        for skip in result.skipped:  # only a missing, repeated or overlapping span is skipped
            assert text.count(skip.edit.before) != 1 or any(
                skip.edit.before in a.before or a.before in skip.edit.before for a in result.applied
            )


def test_an_approved_edit_applies_only_where_an_item_shows_the_quote() -> None:
    """Fix only what was flagged: the same words elsewhere in an unsampled item are not the defect."""
    quote = "Ships free to all EU countries"
    failure = SampledFailure(
        item_key="a",
        output=f"Great deal. {quote}. Enjoy.",
        issues=[
            MergedIssue(criterion="c", description="false promise of free shipping", evidence=quote, flagged_by="both")
        ],
    )
    [pattern] = group_patterns([failure])
    vat = "ships free to all eu countries! Note: all EU countries charge VAT."
    items = [("a", failure.output), ("b", vat), ("c", "Ships free to all EU countries, fast.")]
    fixes = apply_to_batch(pattern, [FixEdit(issue=0, before="all EU countries", after="the EU and the UK")], items)
    assert fixes["a"].after_text == "Great deal. Ships free to the EU and the UK. Enjoy."
    assert fixes["c"].after_text == "Ships free to the EU and the UK, fast."
    # b shows the pattern (lower case) but the exact 'before' is in its VAT sentence: left alone, with why
    assert (
        fixes["b"].after_text == vat
        and "not in the sentence where this item shows the pattern" in fixes["b"].skipped[0].reason
    )


@pytest.mark.parametrize(
    ("quote", "unsampled"),
    [
        pytest.param("全品送料無料永久保証", "本日から全品送料無料永久保証です。", id="no-spaces-between-words"),
        pytest.param("Versand für die Straße gratis", "Neu: Versand für die STRASSE gratis.", id="sharp-s-folds-to-ss"),
    ],
)
def test_a_quote_the_phrase_search_cannot_place_is_placed_by_the_single_run_rule(quote: str, unsampled: str) -> None:
    """Glued into unspaced text or folded, the quote's sentence is still found (`scope.scope_of`) and fixed there."""
    failure = SampledFailure(
        item_key="a",
        output=f"x {quote} y",
        issues=[MergedIssue(criterion="c", description="a promise we cannot keep", evidence=quote, flagged_by="both")],
    )
    [pattern] = group_patterns([failure])
    before = unsampled[unsampled.index("全") if "全" in unsampled else unsampled.index("gratis") :]
    before = before[:6]
    fixes = apply_to_batch(pattern, [FixEdit(issue=0, before=before, after="[fixed]")], [("b", unsampled)])
    assert fixes["b"].changed and "[fixed]" in fixes["b"].after_text


def test_a_sampled_items_fix_never_reaches_its_unflagged_discounts_sentence() -> None:
    """Issue 32: the approved 'before' stood once in a sampled item, in a sentence its reviewers did not flag."""
    rep = "Hello. Your satisfaction is guaranteed forever. Thanks."
    other = "Hi. Satisfaction guaranteed for life. Discounts apply to orders guaranteed forever by card."
    members = [
        PatternMember(
            item_key=k,
            index=0,
            quoted=True,
            issue=MergedIssue(
                criterion="c", description="promises satisfaction guaranteed forever", evidence=q, flagged_by="both"
            ),
        )
        for k, q in (("a", "Your satisfaction is guaranteed forever."), ("b", "Satisfaction guaranteed for life."))
    ]
    pattern = rebuild(members, {"a": {}, "b": {}})  # one pattern, as `generalise` joins them
    assert pattern.items == ["a", "b"]
    fixes = apply_to_batch(
        pattern, [FixEdit(issue=0, before="guaranteed forever", after="our aim")], [("a", rep), ("b", other)]
    )
    assert fixes["a"].after_text == "Hello. Your satisfaction is our aim. Thanks."
    assert fixes["b"].after_text == other and "not in the sentence" in fixes["b"].skipped[0].reason


def test_an_unsampled_japanese_items_fix_never_reaches_its_unflagged_fee_sentence() -> None:
    """Issue 32: the quote is glued into its sentence, so the phrase search cannot place it; the approved
    'before' stands once, in the fee sentence. The quote's own sentence is located; the fee sentence is not touched."""
    rep = "本日から全品送料無料永久保証です。"
    failure = SampledFailure(
        item_key="a",
        output=rep,
        issues=[
            MergedIssue(
                criterion="c",
                description="free shipping on everything",
                evidence="全品送料無料永久保証",
                flagged_by="both",
            )
        ],
    )
    [pattern] = group_patterns([failure])
    unsampled = "本日より全品送料無料永久保証。手数料は無料です。"
    fixes = apply_to_batch(pattern, [FixEdit(issue=0, before="無料です", after="500円です")], [("b", unsampled)])
    assert fixes["b"].after_text == unsampled and "not in the sentence" in fixes["b"].skipped[0].reason
    glued = "本日より全品送料無料永久保証、手数料は無料です"  # one sentence: the words are in the quote's own
    assert apply_to_batch(pattern, [FixEdit(issue=0, before="無料です", after="500円です")], [("c", glued)])[
        "c"
    ].changed


_ITEM = "Hi. Your satisfaction is guaranteed forever, whatever happens. Discounts apply over $50."
_FLAGGED = [
    MergedIssue(
        criterion="c",
        description="an unkeepable promise",
        flagged_by="check",
        evidence="Your satisfaction is guaranteed forever, whatever happens.",
    )
]
_QUOTED = [_FLAGGED[0].model_copy(update={"evidence": "guaranteed forever"})]


@pytest.mark.parametrize(
    ("issues", "edits", "after", "why"),
    [
        pytest.param(
            _FLAGGED,
            [("is guaranteed forever", "matters to us")],
            "Hi. Your satisfaction matters to us, whatever happens. Discounts apply over $50.",
            None,
            id="signature-word-left-but-sentence-fixed",
        ),
        pytest.param(
            _QUOTED,
            [("is guaranteed forever", "matters to us")],
            "Hi. Your satisfaction matters to us, whatever happens. Discounts apply over $50.",
            None,
            id="quote-gone",
        ),
        pytest.param(
            _QUOTED,
            [("whatever happens", "always")],
            "Hi. Your satisfaction is guaranteed forever, always. Discounts apply over $50.",
            "leaves",
            id="quote-left-in-its-sentence",
        ),
        pytest.param(
            _QUOTED, [("Guaranteed forever", "GUARANTEED  FOREVER")], None, "stand once", id="edit-not-in-the-text"
        ),
        pytest.param(
            _FLAGGED,
            [("is guaranteed forever", "matters"), ("over $50", "over $60")],
            "Hi. Your satisfaction matters, whatever happens. Discounts apply over $60.",
            "nobody flagged",
            id="also-edits-the-discounts-sentence",
        ),
        pytest.param(
            _FLAGGED,
            [("is guaranteed forever", "matters")],
            "Hi! Your satisfaction matters, whatever happens. Discounts apply over $50.",
            "not its edits",
            id="text-changed-beside-the-edits",
        ),
        pytest.param(
            [_FLAGGED[0].model_copy(update={"evidence": "Not in the item at all."})],
            [("is guaranteed forever", "matters")],
            "Hi. Your satisfaction matters, whatever happens. Discounts apply over $50.",
            "person",
            id="sentence-not-located",
        ),
    ],
)
def test_a_fix_is_accepted_when_its_issue_is_gone_from_its_sentence(issues, edits, after, why) -> None:
    """Hand-labelled: the expected texts and verdicts are written out, not computed by the code under test."""
    from santa_core.batch.reach import unfixed

    applied = [FixEdit(issue=0, before=b, after=a) for b, a in edits]
    verdict = unfixed(_ITEM, after if after is not None else _ITEM, applied, issues)
    assert (verdict is None) if why is None else (verdict is not None and why in verdict)


def test_the_batch_text_rule_edits_only_the_items_flagged_sentence() -> None:
    """The driver's text rule (`reach.rule_plan`): the approved 'before' standing once, in the unflagged "Discounts
    apply…" sentence of an item, is refused there; the item goes to the fix agent (scoped) or a person."""
    from santa_core.batch import reach

    output = "Hi. Satisfaction guaranteed for life. Discounts apply to orders guaranteed forever by card."
    issues = [
        MergedIssue(
            criterion="c",
            description="an unkeepable promise",
            flagged_by="both",
            evidence="Satisfaction guaranteed for life.",
        )
    ]
    edits = [FixEdit(issue=0, before="guaranteed forever", after="our aim")]
    assert reach.text_rule(output, edits, issues).after_text == output
    assert reach.rule_plan("b", True, issues, output, edits) is None
    right = [FixEdit(issue=0, before="guaranteed for life", after="our aim")]
    plan = reach.rule_plan("b", True, issues, output, right)
    fixed = "Hi. Satisfaction our aim. Discounts apply to orders guaranteed forever by card."  # by hand
    assert plan is not None and plan.after_text == fixed


def test_a_reworded_text_rule_fix_is_judged_again() -> None:
    """A person rewords the approved fix so that it keeps the quoted promise: another item's text rule needs a person."""
    from santa_core.batch import reach

    output = "Hi. Satisfaction guaranteed for life. See you."
    issues = [
        MergedIssue(
            criterion="c", description="an unkeepable promise", flagged_by="both", evidence="guaranteed for life"
        )
    ]
    good = reach.rule_plan("b", False, issues, output, [FixEdit(issue=0, before="guaranteed for life", after="ok")])
    assert good is not None and good.after_text == "Hi. Satisfaction ok. See you."
    kept = reach.retext(good, output, [FixEdit(issue=0, before="guaranteed for life", after="guaranteed for life!")])
    assert kept.needs_person and "not accepted" in kept.outcome()
    again = reach.retext(good, output, [FixEdit(issue=0, before="guaranteed for life", after="hoped for")])
    assert again.after_text == "Hi. Satisfaction hoped for. See you." and not again.needs_person
