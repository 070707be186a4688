"""The diff a person reads shows changed sentences with one sentence of context, never a long text twice,
in about linear time.

The expected lines are written out by hand from texts built sentence by sentence, not computed by the diff.
"""

from __future__ import annotations

import gc
import time

from santa_core.sentence_diff import diff_lines, sentence_diff, sentence_of, sentences


def numbered(count: int, changed: int | None = None) -> str:
    """`count` distinct sentences on one line; sentence `changed` says "now"."""
    return " ".join(f"Sentence {i} {'now ' if i == changed else ''}says a thing." for i in range(count))


def test_a_changed_sentence_shows_with_one_sentence_of_context_and_the_rest_counted() -> None:
    assert diff_lines(numbered(10), numbered(10, changed=5)) == [
        "  … 4 unchanged sentences …",
        "  Sentence 4 says a thing.",
        "- Sentence 5 says a thing.",
        "+ Sentence 5 now says a thing.",
        "  Sentence 6 says a thing.",
        "  … 3 unchanged sentences …",
    ]


def test_added_and_removed_sentences_and_a_trailing_space_that_is_no_change() -> None:
    assert diff_lines("A b c.", "A b c. New one.") == ["  A b c.", "+ New one."]
    assert diff_lines("One. Two. Three.", "One. Three.") == ["  One.", "- Two.", "  Three."]
    assert sentence_diff("Same text.", "Same text.\n") == "(no change)"


def test_the_sentences_give_the_text_back_and_end_at_sentence_and_line_ends() -> None:
    text = "First one! Second? “Third.” Fourth\nfifth line. Last"
    assert sentences(text) == ["First one! ", "Second? ", "“Third.” ", "Fourth\n", "fifth line. ", "Last"]
    assert "".join(sentences(text)) == text
    assert sentence_of(text, text.index("Third"), text.index("Third") + 5) == (19, 28)


def test_a_200k_one_line_paragraph_with_one_change_is_not_shown_whole() -> None:
    paragraph = "x" * 100_000 + " the guaranteed part " + "y" * 100_000  # one sentence, one line
    edited = paragraph.replace("guaranteed", "likely")
    shown = sentence_diff(paragraph, edited)
    assert len(shown) < 1_000  # against 2 × 200,021 characters for the whole paragraph twice
    removed = [line for line in shown.splitlines() if line.startswith("- ")]
    added = [line for line in shown.splitlines() if line.startswith("+ ")]
    assert len(removed) == len(added) == 1
    assert "the guaranteed part" in removed[0] and "the likely part" in added[0]
    assert removed[0].startswith("- …") and removed[0].endswith("…")


def test_a_long_text_of_many_sentences_shows_only_the_changed_one() -> None:
    before = numbered(6_000)  # about 200,000 characters
    shown = sentence_diff(before, numbered(6_000, changed=3_000))
    assert len(shown) < 400
    assert "- Sentence 3000 says a thing." in shown and "+ Sentence 3000 now says a thing." in shown
    assert "  … 2999 unchanged sentences …" in shown and "  … 2998 unchanged sentences …" in shown


def test_a_rewrite_of_everything_is_capped_not_printed_twice() -> None:
    before = numbered(6_000)
    after = " ".join(f"Line {i} is new." for i in range(6_000))
    assert len(sentence_diff(before, after)) < 10_000


def _cpu(before: str, after: str) -> float:
    """The least CPU time of this thread one diff took, over three tries."""
    best = float("inf")
    gc.disable()
    try:
        for _ in range(3):
            began = time.thread_time()
            sentence_diff(before, after)
            best = min(best, time.thread_time() - began)
    finally:
        gc.enable()
    return best


def test_ten_times_the_text_costs_at_most_about_twenty_times_the_time() -> None:
    # Growth only, in this thread's CPU time (house rule): linear costs ten, quadratic a hundred.
    def pair(n: int) -> tuple[str, str]:
        before = numbered(n)
        after = before.replace(f"Sentence {n // 3} says", "Sentence changed says").replace(
            f"Sentence {2 * n // 3} says", "Another changed says"
        )
        return before, after

    small, large = _cpu(*pair(2_000)), _cpu(*pair(20_000))
    assert large <= 20 * max(small, 0.003), (small, large)


def test_a_text_changed_all_over_is_not_shown_twice() -> None:
    """Review B of issue 34: every third sentence of a long text reworded gave a diff of 1.4 times the text. The
    whole diff is capped; what is left is counted."""
    before = " ".join(f"Sentence {i} says what it says." for i in range(8_000))
    after = " ".join(f"Sentence {i} says {'something new' if i % 3 == 0 else 'what it says'}." for i in range(8_000))
    shown = sentence_diff(before, after)
    assert len(shown) < 31_000 < len(before) // 5
    assert shown.endswith("more changed lines, not shown here (the text in the box is whole)")
