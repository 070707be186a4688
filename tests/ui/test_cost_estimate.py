"""The estimated cost of a round before it starts, as a person sees it: on the Review page, next to the
generation cost when one is entered (and updating with the output), from the call log's average once it holds
enough review calls; on the Batch page, one sample as its size × one average item's round, with the Message
Batches discount when that option is on.
"""

from __future__ import annotations

import re

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from santa_core import pricing
from santa_core.models import LLMCall, ReviewOutcome, ReviewStatus, Usage
from santa_core.reports.round_cost import MEASURED_MIN_CALLS, prompt_usage
from storage.runs import RunStore
from tests.core.batch.test_driver import SPEC as BATCH_SPEC
from tests.core.batch.test_driver import planted_csv
from tests.support.batch_page import open_batch, upload
from tests.ui.test_app import SPEC, open_app, plain

OUTPUT = "Acme's rocket launched in 2018. It is ready for you."
USD = r"\$([0-9.]+)"


def captions(at: AppTest, starts: str) -> list:
    return [c for c in at.caption if plain(c.value).startswith(starts)]


def round_line(at: AppTest) -> tuple[str, str]:
    """The Review page's estimate line and its tooltip."""
    [line] = captions(at, "Estimated review cost of a round")
    return plain(line.value), line.proto.help


def fill(at: AppTest, output: str = OUTPUT, generation: float | None = None) -> AppTest:
    at.text_area(key="new_spec").set_value(SPEC)
    at.text_area(key="new_output").set_value(output)
    if generation is not None:
        at.number_input(key="new_generation_cost").set_value(generation)
    at.run()
    assert not at.exception, at.exception
    return at


def test_the_review_page_shows_the_estimate_and_its_ratio_to_the_generation_cost(desk_env: RunStore) -> None:
    at = fill(open_app())
    text, help_text = round_line(at)
    assert re.search(rf"round: {USD} \(B \S+ {USD} · C \S+ {USD} · screen {USD}\)", text), text
    assert text.endswith("enter the generation cost to compare")
    assert "estimated from the prompt" in help_text and "four characters a token" in help_text
    total = float(re.search(rf"round: {USD}", text).group(1))
    parts = [float(x) for x in re.findall(rf"(?<!round: ){USD}", text)]
    assert total > 0 and total == pytest.approx(sum(parts), rel=1e-3)

    at = fill(at, generation=total * 2)
    text, _ = round_line(at)
    assert text.endswith("— 0.5× the generation cost you entered"), text

    at = fill(at, output=OUTPUT * 40, generation=total * 2)  # a longer output costs more to review
    text, _ = round_line(at)
    longer = float(re.search(rf"round: {USD}", text).group(1))
    assert longer > total and f"{longer / (total * 2):.1f}× the generation cost you entered" in text


def test_the_review_page_uses_the_measured_average_once_the_log_holds_five_calls(desk_env: RunStore) -> None:
    defaults = open_app()
    model = defaults.selectbox(key="new_reviewer_b").value
    rubric = desk_env.rubrics.resolved(defaults.selectbox(key="new_rubric").value, None)
    usage = Usage(input_tokens=300, output_tokens=40, cache_read_input_tokens=2000)
    for _ in range(MEASURED_MIN_CALLS):
        run_id = desk_env.create_run(
            spec=SPEC, output=OUTPUT, rubric=rubric, reviewer_b=model, reviewer_c=model, fixer=model
        )
        call = LLMCall(purpose="review", model=model, request={}, usage=usage)
        desk_env.save_review(
            run_id, 1, ReviewOutcome(slot="B", reviewer=model, status=ReviewStatus.ERROR, error="cut off", calls=[call])
        )
    st.cache_data.clear()  # the averages are kept a few minutes: as if they had passed
    at = fill(open_app())
    text, help_text = round_line(at)
    assert f"the answer the average of {MEASURED_MIN_CALLS} review calls with this rubric" in help_text
    b = float(re.search(rf"\(B \S+ {USD}", text).group(1))
    # this item's prompt in, the log's average answer (40 tokens) out
    expected = prompt_usage(rubric, SPEC, OUTPUT).model_copy(update={"output_tokens": usage.output_tokens})
    assert b == pytest.approx(pricing.cost_usd(model, expected), rel=1e-2)
    assert "C (" in help_text and help_text.count("estimated from the prompt") == 1  # C is another model


def sample_line(at: AppTest) -> tuple[int, float, float]:
    """(items, per item, sample) of the Batch page's estimate line."""
    [line] = captions(at, "Estimated review cost of one sample")
    text = plain(line.value)
    found = re.search(rf"sample: ([0-9,]+) items × {USD} per item.* = {USD} \(per item: B ", text)
    assert found, text
    return int(found.group(1).replace(",", "")), float(found.group(2)), float(found.group(3))


def test_the_batch_page_shows_the_cost_of_one_sample(desk_env: RunStore) -> None:
    data, _ = planted_csv(200)
    at = upload(open_batch(), data, spec=BATCH_SPEC)
    items, per_item, sample = sample_line(at)
    assert items > 0 and per_item > 0 and sample == pytest.approx(items * per_item, rel=1e-3)
    metric = next(m for m in at.metric if m.label == "One sample (estimated)")
    assert float(metric.value.lstrip("$")) == pytest.approx(sample, rel=1e-3)
    assert "with the Message Batches discount" not in plain(
        captions(at, "Estimated review cost of one sample")[0].value
    )

    at.toggle(key="batch_message_batches").set_value(True).run()
    _, discounted, _ = sample_line(at)
    assert "with the Message Batches discount" in plain(captions(at, "Estimated review cost of one sample")[0].value)
    assert discounted < per_item
