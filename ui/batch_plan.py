"""The Batch page's figures: what a sample will catch, what it costs, and what a clean sample proves.

Every number comes from `santa_core.batch.sampling`, `santa_core.batch.stopping` and the batch driver's cost estimate; this module only
lays them out, so the page and docs/batch-sampling.md always agree.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping

import pandas as pd
import streamlit as st

from santa_core import pricing
from santa_core.batch import sampling, stopping
from santa_core.batch.report import CostEstimate
from santa_core.batch.sampling import percent
from santa_core.batch.store import PatternRecord
from ui import components
from ui.safe import escape_markdown

PREVALENCES = (0.01, 0.02, 0.05, 0.10, 0.20)
"""Shares of the whole batch the detection table shows."""
STRATUM_PREVALENCES = (0.05, 0.10, 0.20, 0.30, 0.50)
"""Shares of one stratum a person can pick for the per-stratum view (20 % by default)."""


def stratum_label(stratum: Hashable) -> str:
    """A stratum as people read it: its values joined by ' / ' ('(whole batch)' with no strata)."""
    if isinstance(stratum, tuple):
        return " / ".join(map(str, stratum)) or "(whole batch)"
    return str(stratum)


def detection_frame(population: int, sample: int) -> pd.DataFrame:
    """One row per number of items showing a pattern (from the shares in PREVALENCES): the share they really are of
    the batch and the chance to catch it.

    Why by items, not by share: in a small batch two shares round to the same items (1 % and 2 % of 50 are both one
    item), and two identical rows under different labels said the larger share was no easier to catch."""
    rows = {r.showing: r for r in sampling.detection_table(population, sample, PREVALENCES)}
    return pd.DataFrame(
        [
            {
                "a pattern in": f"{percent(n / population if population else 0)} of the batch",
                "items showing it": n,
                "chance this sample catches it": percent(r.chance),
            }
            for n, r in rows.items()
        ]
    )


def stratum_frame(rows: list[sampling.StratumDetection]) -> pd.DataFrame:
    """Per stratum: its size, its share of the sample, the items a pattern covers and the chance."""
    return pd.DataFrame(
        [
            {
                "stratum": stratum_label(r.stratum),
                "items": r.size,
                "sampled": r.sampled,
                "showing the pattern": r.showing,
                "chance caught": percent(r.chance),
            }
            for r in rows
        ]
    )


def drawn(n: int, sizes: Mapping[Hashable, int]) -> int:
    """How many items a sample the rate sizes at `n` really draws: with more strata than `n`, each still gets one."""
    return sum(sampling.allocate(sizes, n).values()) if sizes else n


def detection(population: int, n: int, sizes: Mapping[Hashable, int], key: str) -> None:
    """Before sampling: the chance of catching a pattern, over the batch and inside each stratum.

    `n` is the sample size the rate asks for; with more strata than that, every stratum still gets
    an item, so the sample drawn (and shown) is larger.
    """
    sample = drawn(n, sizes)
    st.markdown(
        f"**What a sample of {sample:,} of {population:,} items catches.** A pattern is caught when "
        "at least one item showing it is sampled (exact hypergeometric chance)."
    )
    st.dataframe(detection_frame(population, sample), hide_index=True, width="stretch")
    if len(sizes) < 2:
        return
    prevalence = st.selectbox(
        "A pattern confined to one stratum, in this share of its items",
        STRATUM_PREVALENCES,
        index=STRATUM_PREVALENCES.index(0.20),
        key=key,
        format_func=percent,
        help="Systematic failures usually come from one template or "
        "locale: a pattern there is caught only by that stratum's share of the sample.",
    )
    rows = sampling.stratum_detection(sizes, n, prevalence)
    st.dataframe(stratum_frame(rows), hide_index=True, width="stretch")
    weakest = min(rows, key=lambda r: r.chance)  # the first in sorted order among equals
    st.markdown(
        "Least covered: " + escape_markdown(weakest.statement())
    )  # escaped: stratum values come from the uploaded file


def cost(estimate: CostEstimate, spent: float | None = None) -> None:
    """Estimated cost of one sample against reviewing every item with both reviewers (and what was spent)."""
    # Two to a row once the spend is shown: each figure and its note read whole at 1,024 px.
    columns = [*st.columns(2), *st.columns(2)] if spent is not None else st.columns(3)
    how = "through the Message Batches API (about half price)" if estimate.message_batches else "one call at a time"
    columns[0].metric(
        "One sample (estimated)",
        components.usd(estimate.sample_usd),
        help=f"{estimate.sample:,} items × one round (2 reviewers and the screen), {how}, "
        "from the items' average length.",
    )
    columns[1].metric(
        "Full verification (estimated)",
        components.usd(estimate.full_usd),
        help=f"All {estimate.items:,} items × one round, one call at a time.",
    )
    columns[2].metric("One sample ÷ full", percent(estimate.share), help="Review cost on both sides.")
    if spent is not None:  # like with like: fixes on both sides (`CostEstimate.how`)
        share = estimate.spent_share(spent)
        columns[3].metric(
            "Spent so far (actual)",
            components.usd(spent),
            delta_color="off",
            delta_arrow="off",
            delta=None if share is None else f"{percent(share)} of full, fixes included",
            help=f"Full verification with its fixes: {components.usd(estimate.full_with_fixes_usd)}. " + estimate.how(),
        )
    st.caption(
        f"Estimates use the prices in santa_core/rates.toml (as of {pricing.rates_as_of()}) and about four "
        "characters per token (or the measured average of this rubric's recent review calls); the actual "
        "figure is what the API reported."
    )


def stopping_rule(rule: stopping.StoppingRule, dismissed: list[PatternRecord], needs_fix: list[str]) -> None:
    """What a clean sample proves about the batch, with caveats for patterns and items left unfixed."""
    statement = escape_markdown(rule.statement())
    if rule.clean:
        st.success(statement, icon=":material/check_circle:")
    else:
        st.info(statement)
    if rule.stratified:
        st.caption("The bound holds wherever failing items hide among the strata (every stratum was sampled).")
    unfixed = [p for p in dismissed if p.pattern.get("kind", "issue") == "issue"]
    by_hand = [p for p in dismissed if p not in unfixed]
    if unfixed:
        names = "; ".join(f"“{p.title}” ({p.reason})" for p in unfixed)
        st.warning(
            escape_markdown(
                f"Caveat: {len(unfixed)} pattern(s) were dismissed without a fix: {names}. Their items "
                "failed review in an earlier sample and keep what the reviewers flagged; resamples draw fresh "
                "items first, so the bound above counts those items as failing."
            )
        )
    if needs_fix:
        shown = ", ".join(needs_fix[:10]) + (f" and {len(needs_fix) - 10:,} more" if len(needs_fix) > 10 else "")
        st.warning(
            escape_markdown(
                f"Caveat: {len(needs_fix):,} item(s) showed a fixed pattern but could not take its edit and "
                f"still need a fix by hand: {shown}. The export marks them “needs fix” and says why; the "
                "bound above does not make them pass."
            )
        )
    if by_hand:
        names = "; ".join(f"{p.title} ({p.reason})" for p in by_hand)
        st.caption(
            escape_markdown(f"Handled by hand, outside Santa: {names}. The bound does not cover what was done to them.")
        )
