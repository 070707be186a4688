"""A batch holding two defects under one criterion, in sentences that name the same products.

Half the defective items call a product "risk-free", the other half say it "guarantees" a result; every product
appears with both defects, so the quoted sentences share the product's name (the context) while the reviewers flag
different words (the defects), as the loopback reviewer of the 2026-12-04 walk did:
`The text contains 'risk-free' claim "risk-free" (in: "…"), which violates "factual_accuracy".`
"""

from __future__ import annotations

from santa_core.batch.patterns import SampledFailure
from santa_core.models import MergedIssue

CRITERION = "factual_accuracy"
NAME = "Factual accuracy"
PRODUCTS = ("Juno Backpack", "Halo Fan", "Flux Kettle", "Orbit Lamp")
OTHERS = ("Nova Mug", "Pico Clock", "Aero Desk", "Lumen Shelf")
RISK = "risk-free"
GUARANTEE = "guarantees"


def risk_sentence(product: str, short: bool = False) -> str:
    """Short: most words shared with the other defect's sentence (the quotes overlap: the grouping's first link);
    long: only the product's name shared (a phrase no clean item shows: the generalising link)."""
    return f"The {product} is {RISK}." if short else f"Buying the {product} is {RISK} thanks to our return policy."


def guarantee_sentence(product: str, short: bool = False) -> str:
    return f"The {product} {GUARANTEE} results." if short else f"The {product} {GUARANTEE} a better night's sleep."


def description(phrase: str, sentence: str) -> str:
    """The walk's loopback reviewer's wording: the flagged phrase, then the sentence it stands in."""
    return f'The text contains \'{phrase}\' claim "{phrase}" (in: "{sentence}"), which violates "{CRITERION}".'


def items(short: bool = False) -> dict[str, tuple[str, str, str]]:
    """Item key → (its output, the phrase flagged in it, the flagged sentence); each defect once per product."""
    out = {}
    for n, product in enumerate(PRODUCTS):
        pairs = ((RISK, risk_sentence(product, short)), (GUARANTEE, guarantee_sentence(product, short)))
        for phrase, sentence in pairs:
            key = f"{'risk' if phrase == RISK else 'guar'}-{n}"
            out[key] = (f"Hello! {sentence} Order today.", phrase, sentence)
    return out


def failures(short: bool = False) -> list[SampledFailure]:
    """The sampled failures: each item's one issue, flagged by both reviewers."""
    return [
        SampledFailure(
            item_key=key,
            strata={"template": "promo"},
            output=output,
            issues=[
                MergedIssue(
                    criterion=CRITERION, description=description(phrase, sentence), evidence=sentence, flagged_by="both"
                )
            ],
        )
        for key, (output, phrase, sentence) in items(short).items()
    ]


def clean() -> dict[str, str]:
    """Sampled items that passed: other products, neither defect."""
    return {f"ok-{n}": f"Hello! The {product} ships in {n + 2} days." for n, product in enumerate(OTHERS)}
