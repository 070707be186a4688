"""A pattern's signature and the joining of one defect's patterns (pure): phrases come only from the
reviewers' verified quotes, a phrase any clean sampled item shows is refused, and patterns split by
varied wording are joined only through a phrase the sample says is clean."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from santa_core.batch import signature as sig
from santa_core.batch.generalise import generalise
from santa_core.batch.patterns import SampledFailure, group_patterns
from santa_core.models import MergedIssue

FOUND = {
    "a": (
        "Act now. Your results are definitely guaranteed within 4 days.",
        ["Your results are definitely guaranteed within 4 days."],
    ),
    "b": (
        "Hi. Savings are definitely guaranteed within 9 days for every plan.",
        ["Savings are definitely guaranteed within 9 days for every plan."],
    ),
}
CLEAN = {"c": "Hello. Your parcel will definitely arrive within 3 days.", "d": "Thanks for your order."}


def test_the_most_general_phrase_that_is_still_clean_is_chosen() -> None:
    # "definitely" covers both quotes as well as "guaranteed" does, but a clean item shows it: refused.
    derived = sig.derive(FOUND, CLEAN)
    assert derived == ["guaranteed"]
    check = sig.check(derived, {k: t for k, (t, _) in FOUND.items()}, CLEAN)
    assert check.valid and check.matched == 2 and check.false_matches == []


def test_without_a_clean_phrase_there_is_no_signature() -> None:
    dirty = {**CLEAN, "e": f"{FOUND['a'][0]} {FOUND['b'][0]}"}  # a clean item says every phrase the quotes have
    assert sig.derive(FOUND, dirty) == []


def test_a_phrase_is_never_invented_and_only_recognised_on_word_boundaries() -> None:
    assert sig.derive({"a": ("Growth guaranteed.", [])}, {}) == []  # no verified quote, nothing to derive from
    assert sig.recognises(["guaranteed"], "GUARANTEED!") and not sig.recognises(["guaranteed"], "unguaranteed")
    assert not sig.recognises(["guarantee"], "read our guarantees page")


@given(
    st.lists(
        st.sampled_from(["results", "are", "guaranteed", "within", "days", "plan", "every", "for"]),
        min_size=1,
        max_size=12,
    )
)
def test_a_derived_signature_never_reaches_a_clean_sampled_item(words: list[str]) -> None:
    clean = {"x": " ".join(words)}
    derived = sig.derive(FOUND, clean)
    assert not any(sig.recognises(derived, t) for t in clean.values())
    assert sig.check(derived, {k: t for k, (t, _) in FOUND.items()}, clean).valid == bool(derived)


# Hand-labelled: items of a batch that show the defect (a delivery promise the company cannot keep,
# "guaranteed"), in wording the sample did not see, and items that do not, some sharing the sample's words.
SHOWS_THE_PATTERN = [
    "Welcome! Your results are guaranteed within 2 days.",
    "Every order is guaranteed to arrive before the weekend.",
    "GUARANTEED delivery within 24 hours, or your money back.",
    "Members: savings are guaranteed for the whole year.",
    "Hi Sam. Quick results, guaranteed, whatever the plan.",
    "Dear customer, your refund is guaranteed within 4 days.",
]
DOES_NOT_SHOW_IT = [
    "Your parcel will definitely arrive within 3 days.",
    "Results usually come within 4 days for every plan.",
    "Read our guarantees page before you order.",
    "Thanks for your order: we ship within 9 days.",
    "Savings depend on the plan you choose.",
]


def test_the_signature_recognises_the_hand_labelled_items_that_show_the_pattern() -> None:
    signature = sig.derive(FOUND, CLEAN)
    assert signature, "a pattern whose sampled quotes share a clean phrase has a signature"
    recall = sum(sig.recognises(signature, text) for text in SHOWS_THE_PATTERN) / len(SHOWS_THE_PATTERN)
    assert recall == 1.0, [t for t in SHOWS_THE_PATTERN if not sig.recognises(signature, t)]
    assert [t for t in DOES_NOT_SHOW_IT if sig.recognises(signature, t)] == []
    assert all(sig.recognises(signature, text) for text, _ in FOUND.values())  # and the sampled items it came from


def failure(key: str, output: str, quote: str, description: str = "promises what we cannot keep") -> SampledFailure:
    return SampledFailure(
        item_key=key,
        strata={"template": "promo"},
        output=output,
        issues=[MergedIssue(criterion="compliance", description=description, evidence=quote, flagged_by="both")],
    )


def test_one_defect_in_varied_sentences_is_one_pattern_with_a_signature() -> None:
    sentences = {
        "a": "Your savings are guaranteed within 4 days for every plan.",
        "b": "Lifetime growth is guaranteed for all new members this spring.",
        "c": "Fast results guaranteed, whatever you choose.",
    }
    failures = [failure(k, f"Hello. {s} Bye.", s) for k, s in sentences.items()]
    reviewed = {f.item_key: f.output for f in failures} | {"n": "Hello. Your results are ready within 4 days."}
    split = [p for p in group_patterns(failures) if p.kind == "issue"]
    assert len(split) > 1  # the quotes share too few words for the grouping alone
    [joined] = generalise(split, reviewed, {f.item_key: f.strata for f in failures})
    assert joined.items == ["a", "b", "c"] and joined.count == 3 and joined.strata == {"template": {"promo": 3}}
    assert joined.signature == ["guaranteed"]


def test_patterns_are_not_joined_through_a_phrase_a_clean_item_shows() -> None:
    failures = [
        failure("a", "Hello. Your savings are guaranteed within 4 days.", "Your savings are guaranteed within 4 days."),
        failure("b", "Hello. Delivery is guaranteed by Friday.", "Delivery is guaranteed by Friday."),
    ]
    reviewed = {f.item_key: f.output for f in failures} | {"n": "Hello. Quality is guaranteed by our team."}
    found = generalise(group_patterns(failures), reviewed, {f.item_key: f.strata for f in failures})
    assert len([p for p in found if p.kind == "issue"]) == 2  # "guaranteed" reaches a clean item: two decisions


def test_different_complaints_are_not_joined() -> None:
    failures = [
        failure(
            "a",
            "Hello. Your savings are guaranteed within 4 days.",
            "Your savings are guaranteed within 4 days.",
            "promises what we cannot keep",
        ),
        failure(
            "b",
            "Hello. Results are guaranteed within 9 days!",
            "Results are guaranteed within 9 days!",
            "wrong tone for the brand",
        ),
    ]
    reviewed = {f.item_key: f.output for f in failures}
    found = generalise(group_patterns(failures), reviewed, {f.item_key: f.strata for f in failures})
    assert sorted(len(p.items) for p in found if p.kind == "issue") == [1, 1]


def test_a_signature_that_misses_a_sampled_item_of_the_pattern_is_refused() -> None:
    found = {k: t for k, (t, _) in FOUND.items()}
    check = sig.check(["savings are"], found, CLEAN)  # reaches b, not a: a's kind would keep the defect
    assert not check.valid and check.missed == ["a"] and "misses a" in check.summary()


def test_families_join_transitively() -> None:
    """A agrees with C and C with B (shared specific words), A and B share none: one family, one pattern."""
    failures = [
        failure(
            "a",
            "Hello. Your savings are guaranteed within 4 days.",
            "Your savings are guaranteed within 4 days.",
            "promises delivery timing",
        ),
        failure(
            "b",
            "Hello. Lifetime growth is guaranteed for members.",
            "Lifetime growth is guaranteed for members.",
            "unkeepable growth claim",
        ),
        failure(
            "c",
            "Hello. Fast results guaranteed, whatever you choose.",
            "Fast results guaranteed, whatever you choose.",
            "promises growth timing",
        ),
    ]
    reviewed = {f.item_key: f.output for f in failures} | {"n": "Hello. Thanks for your order."}
    found = generalise(group_patterns(failures), reviewed, {f.item_key: f.strata for f in failures})
    assert [p.items for p in found if p.kind == "issue"] == [["a", "b", "c"]]
