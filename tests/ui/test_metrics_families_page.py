"""The Metrics page's split by family pair (Reviewer agreement tab): runs of a one-family panel next to runs of
a two-family panel, made by the real runner with reviewer doubles, each pair with its agreement, κ and escape
rate; and "no data yet" while a view holds one pair only.

| run | B / C               | pair            | how it went                                                        |
|-----|---------------------|-----------------|--------------------------------------------------------------------|
| c1  | sonnet / haiku      | Claude + Claude | NICE in round 1, then an escape                                    |
| c2  | sonnet / haiku      | Claude + Claude | both FAIL factual_accuracy, the fix is approved, NICE in round 2   |
| g1  | sonnet / gpt-mini   | Claude + GPT    | NICE in round 1                                                    |
| g2  | gpt-mini / haiku    | Claude + GPT    | C alone FAILs factual_accuracy (GPT passes it), fix, NICE in round 2 |

The general rubric has 6 criteria, so each pair holds 3 rounds × 6 = 18 compared PASS/FAIL pairs:
Claude + Claude: 1 flagged by both, none by one → agreement 100 %, κ 1 (17 PP, 1 FF); 1 escape on 2 shipped.
Claude + GPT: 1 flagged by C only → agreement 0 %, κ 0 (B passed everything: chance agreement is the
observed one); no escape on 2 shipped.
"""

from __future__ import annotations

import pytest

from santa_core.reports.metrics import MetricsFilter
from santa_core.reviewers.doubles import FunctionReviewer, passing
from santa_core.rubrics.library import load_builtin
from santa_core.run import actions
from storage.runs import RunStore
from tests.core.run.test_runner import BAD, GOOD, SPEC, make_runner, strict
from tests.ui.test_app import plain, texts
from tests.ui.test_metrics_page import downloads, media_url, open_metrics
from ui import metric_frames as frames

SONNET, HAIKU, MINI = "claude-sonnet-5-5", "claude-haiku-5-5", "openai:gpt-5.4-mini"
TAB = "Reviewer agreement"


def seed(repo: RunStore) -> dict[str, int]:
    """The four runs of the module docstring."""
    reviewers = {
        SONNET: FunctionReviewer(SONNET, strict),
        HAIKU: FunctionReviewer(HAIKU, strict),
        MINI: FunctionReviewer(MINI, passing),
    }  # the GPT double misses the wrong year
    runner, _ = make_runner(repo, reviewers)
    general = load_builtin("general")

    def run(output: str, b: str, c: str) -> int:
        run_id = repo.create_run(spec=SPEC, output=output, rubric=general, reviewer_b=b, reviewer_c=c, fixer="fixer")
        runner.execute(run_id)
        return run_id

    runs = {
        "c1": run(GOOD, SONNET, HAIKU),
        "c2": run(BAD, SONNET, HAIKU),
        "g1": run(GOOD, SONNET, MINI),
        "g2": run(BAD, MINI, HAIKU),
    }
    for key in ("c2", "g2"):
        actions.approve_fix(repo, runs[key], "local")
        runner.execute(runs[key])
    repo.report_escape(runs["c1"], "factual_accuracy", "the year was wrong after all", "major", "ann")
    runner.shutdown()
    return runs


@pytest.fixture
def two_pairs(desk_env: RunStore) -> RunStore:
    seed(desk_env)
    return desk_env


def test_the_table_shows_each_family_pair_with_its_figures(two_pairs: RunStore) -> None:
    at = open_metrics(tab=TAB)
    assert "two families whose misses are independent should show a lower escape rate than one family" in texts(at)
    kappa, families = at.dataframe  # κ per criterion, then the split by family pair
    assert families.value.to_dict("records") == [  # escapes and the families' count: in the CSV and the chart
        {
            "family pair": "Claude + Claude",
            "runs": 2,
            "pairs": 18,
            "agreement": "100.0 %",
            "κ": "1.000",
            "shipped": 2,
            "escape rate": "50.0 %",
        },
        {
            "family pair": "Claude + GPT",
            "runs": 2,
            "pairs": 18,
            "agreement": "0.0 %",
            "κ": "0.000",
            "shipped": 2,
            "escape rate": "0.0 %",
        },
    ]
    assert "criterion" in kappa.value.columns
    assert [c.key for c in at.get("plotly_chart")] == ["metrics_chart_agreement", "metrics_chart_families"]
    pairs = two_pairs.metrics.family_pairs(MetricsFilter())
    assert downloads(at)["metrics_csv_families"] == media_url(
        frames.families_frame(pairs).to_csv(index=False), "text/csv", "santa-metrics-families.csv"
    )
    # The pairs add up to the headline's runs and shipped runs.
    figures = {m.label: m.value for m in at.metric}
    assert (figures["Runs"], figures["Shipped runs"], figures["Escapes"]) == ("4", "4", "1")


def test_the_split_follows_the_filters_and_says_when_there_is_nothing_to_compare(two_pairs: RunStore) -> None:
    at = open_metrics({"reviewer": MINI}, tab=TAB)  # only g1 and g2: one pair
    assert len(at.dataframe) == 1 and len(at.get("plotly_chart")) == 1  # the κ table and flags chart only
    notice = " ".join(plain(i.value) for i in at.info)
    assert "no data yet" in notice and "one family pair (Claude + GPT)" in notice
    at.multiselect(key="metrics_reviewer").set_value([]).run()
    assert [row["family pair"] for row in at.dataframe[1].value.to_dict("records")] == [
        "Claude + Claude",
        "Claude + GPT",
    ]
