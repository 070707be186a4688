"""Column widths that fit a table into its room (ui/table_fit.py): pure, no Streamlit run needed. The browser
test (tests/e2e/test_screens.py) checks the drawn tables; these check the choices behind them."""

from __future__ import annotations

import pandas as pd
import pytest

from ui import table_fit as tf

DETAIL = (
    "The second paragraph claims a launch in 2019 but the spec says 2018; the figure in the table does not "
    "match the press release either, and the quote is attributed to the wrong person."
)


def total(fit: tf.Fit) -> int:
    return sum(fit.widths.values())


def cut(frame: pd.DataFrame, fit: tf.Fit) -> list[str]:
    """The cells that need more lines than the rows give them."""
    return [
        f"{c}: {v!r}"
        for c in frame.columns
        for v in frame[c]
        if tf.wrapped_lines(tf.cell_text(v), fit.widths[c]) > fit.lines
    ]


def test_short_cells_keep_one_line_rows_and_the_long_text_takes_the_room_left() -> None:
    frame = pd.DataFrame([{"#": 1, "criterion": "numbers", "issue": "numbers F", "evidence": "[round 1]"}])
    fit = tf.fit(frame, 780, wide=("issue",))
    assert fit.lines == 1 and fit.row_height is None
    assert total(fit) == 780  # the room left went to the issue column, not spread over "#"
    assert fit.widths["issue"] == max(fit.widths.values())
    assert fit.widths["#"] == tf.MIN_COLUMN_PX


def test_a_review_card_wraps_its_detail_within_the_card_and_cuts_nothing() -> None:
    frame = pd.DataFrame(
        [
            {"criterion": "facts", "result": "FAIL", "detail": DETAIL},
            {"criterion": "tone", "result": "PASS", "detail": "Fine."},
        ]
    )
    fit = tf.fit(frame, tf.CARD_PX, wide=("detail",))
    assert total(fit) <= tf.CARD_PX
    assert tf.WRAPPED_LINES <= fit.lines <= tf.WRAP_LINES and fit.row_height > 64  # Streamlit wraps above 4rem
    assert cut(frame, fit) == []
    assert fit.widths["detail"] > fit.widths["criterion"] + fit.widths["result"]


def test_wrapped_columns_break_no_word_unless_they_may() -> None:
    frame = pd.DataFrame(
        [
            {
                "status": "🚨 escalated: still NAUGHTY after the last round",
                "text": DETAIL,
                "by": "Edith Okafor-Stone <edith.okafor-stone@example.com>",
                "created": "2026-03-02 17:00",
            }
        ]
    )
    longest_word = tf.text_px("<edith.okafor-stone@example.com>") + tf.CELL_PAD_PX
    kept = tf.fit(frame, 720, wide=("text",))
    broken = tf.fit(frame, 720, wide=("text",), breakable=("by",))
    assert kept.widths["by"] >= longest_word and broken.widths["by"] < longest_word
    assert kept.widths["created"] >= tf.text_px("2026-03-02") + tf.CELL_PAD_PX  # a date is never split
    assert total(kept) <= 720 and total(broken) <= 720
    assert broken.lines <= kept.lines and broken.widths["status"] > kept.widths["status"]  # the room goes elsewhere
    assert cut(frame, kept) == [] and cut(frame, broken) == []


def test_what_cannot_fit_in_the_most_lines_is_capped_within_the_room() -> None:
    frame = pd.DataFrame([{f"c{i}": DETAIL for i in range(4)}])
    fit = tf.fit(frame, 400, most_lines=3)
    assert total(fit) <= 400 and fit.lines == 3
    assert cut(frame, fit)  # clipped at the third line (a click shows the cell whole)


def test_fixed_columns_keep_their_width_and_set_no_row_height() -> None:
    frame = pd.DataFrame([{"open": "./review?run=12345678901234567890", "run": 12, "text": "short"}])
    fit = tf.fit(frame, 300, fixed={"open": 50, "run": 56})
    assert fit.widths["open"] == 50 and fit.widths["run"] == 56 and fit.lines == 1


@pytest.mark.parametrize(
    ("text", "width", "lines"),
    [
        pytest.param("", 100, 1, id="empty"),
        pytest.param("one line", 200, 1, id="fits"),
        pytest.param("aaaa " * 20, 100, 10, id="wraps at spaces"),
        pytest.param("first\nsecond", 200, 2, id="a newline starts a line"),
        pytest.param("x" * 60, 116, 4, id="a long word breaks at the line's end"),  # 390 px in lines of 100
        pytest.param(tf.unbroken("desk v1"), 40, 2, id="a no-break space holds a word together"),
    ],
)
def test_wrapped_lines(text: str, width: int, lines: int) -> None:
    assert tf.wrapped_lines(text, width) == lines


def test_estimated_widths_are_on_the_generous_side() -> None:
    """Measured in Chromium (14 px Source Sans): the estimates are at least these and at most 8 % more."""
    measured = {
        "Acme Corporation is proud to announce that its reusable rocket": 368.7,
        "<edith.okafor-stone@example.com>": 212.3,
        "2026-03-02 17:00": 98.5,
        "still NAUGHTY after the last round": 194.7,
    }
    for text, px in measured.items():
        assert px <= tf.text_px(text) <= px * 1.08, text


def test_a_no_break_space_makes_one_word_that_a_wrapped_column_keeps_whole() -> None:
    frame = pd.DataFrame([{"rubric": tf.unbroken("memo v1,") + " " + tf.unbroken("round 2"), "text": DETAIL * 3}])
    fit = tf.fit(frame, 300, wide=("text",))
    assert tf.words(frame["rubric"][0]) == [tf.unbroken("memo v1,"), tf.unbroken("round 2")]
    assert fit.lines > 1 and fit.widths["rubric"] >= tf.text_px(tf.unbroken("memo v1,")) + tf.CELL_PAD_PX


def test_a_breakable_column_breaks_only_e_mail_addresses() -> None:
    """ "cli (com mand line)" was the Runs list's "by" column at 1,024 px: a name column may break an e-mail address
    at a line's end, never a word."""
    word = tf.text_px("(command") + tf.CELL_PAD_PX
    names = pd.DataFrame({"by": ["cli (command line)"], "text": [DETAIL]})
    assert tf.fit(names, 200, wide=("text",), breakable=("by",)).widths["by"] >= word  # squeezed: no word broken
    address = pd.DataFrame({"by": ["<edith.okafor.from.the.legal.team@example.com>"], "text": [DETAIL]})
    fit = tf.fit(address, 200, wide=("text",), breakable=("by",))
    assert fit.widths["by"] < tf.text_px(address["by"][0]) + tf.CELL_PAD_PX  # the address may break
