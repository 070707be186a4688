"""The estimate before a run prices the third reviewer: D's line is there for a rubric with high-risk criteria,
priced on its own smaller prompt (the high-risk criteria only), and absent otherwise."""

from __future__ import annotations

from santa_core.reports.round_cost import estimate_round
from santa_core.rubrics.library import load_builtin

SPEC, OUTPUT = "Announce the Acme rocket. Mention the 2018 launch.", "Acme's rocket launched in 2018."
HAIKU, NANO, SONNET = "claude-haiku-5-5", "openai:gpt-5.4-nano", "claude-sonnet-5-5"
GENERAL = load_builtin("general")
MARKED = GENERAL.model_copy(
    update={"criteria": [c.model_copy(update={"third_reviewer": i == 0}) for i, c in enumerate(GENERAL.criteria)]}
)


def test_d_is_priced_on_the_high_risk_criteria_only() -> None:
    estimate = estimate_round(MARKED, SPEC, OUTPUT, HAIKU, NANO, None, reviewer_d=SONNET)
    assert [(line.label, line.model) for line in estimate.lines] == [("B", HAIKU), ("C", NANO), ("D", SONNET)]
    d = estimate.lines[2]
    as_b = estimate_round(GENERAL, SPEC, OUTPUT, SONNET, NANO, None).lines[0]  # the same model on the whole rubric
    assert 0 < d.usd < as_b.usd and d.input_tokens < as_b.input_tokens and d.output_tokens < as_b.output_tokens
    assert estimate.total_usd == sum(line.usd for line in estimate.lines)


def test_no_d_line_without_a_high_risk_criterion_or_a_model_for_d() -> None:
    assert [
        line.label for line in estimate_round(GENERAL, SPEC, OUTPUT, HAIKU, NANO, None, reviewer_d=SONNET).lines
    ] == ["B", "C"]
    assert [line.label for line in estimate_round(MARKED, SPEC, OUTPUT, HAIKU, NANO, None).lines] == ["B", "C"]
