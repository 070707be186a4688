"""The default panel: the cheapest pair of reviewers that still spans two model families.

Why cost decides: the method's value is two *independent* reviewers, and independence comes from the model
family, not from the price tier. A small model of another family disagrees with a large one for different
reasons than a second size of the same family does, so with keys for two families the desk offers the cheapest
pair that spans them; with one family only, the cheapest pair of two different models the keys allow (and the
pages say what a second family's key would add). A model with no listed price counts at the highest listed
rate (pricing's budget rule), so it is never taken for cheap.
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import combinations

from santa_core.models import Usage
from santa_core.pricing import Rates, cost_usd, load_rates
from santa_core.providers import (
    ANTHROPIC,
    CLAUDE_MODELS,
    PERSON_FAMILY,
    Provider,
    canonical,
    configured_providers,
    spans_two_families,
    usable_model_ids,
)

TYPICAL_REVIEW = Usage(input_tokens=1_600, output_tokens=150)
"""One review of short copy in the terse layout (prefix, data, contract in; one check per criterion out): what
the models are compared on. The order of two models' prices, not the figure, decides the panel."""


def review_usd(model: str, rates: Rates | None = None) -> float:
    """What one typical review costs on `model` (see TYPICAL_REVIEW)."""
    return cost_usd(model, TYPICAL_REVIEW, rates)


def cheapest_pair(models: list[str], rates: Rates | None = None) -> tuple[str, str] | None:
    """The cheapest two different models spanning two families, else the cheapest two different models; the
    cheaper one first. None with fewer than two models."""
    rates = rates or load_rates()
    price = {m: review_usd(m, rates) for m in models}
    pairs = [(a, b) if (price[a], a) < (price[b], b) else (b, a) for a, b in combinations(dict.fromkeys(models), 2)]
    spanning = [p for p in pairs if spans_two_families(*p)]
    best = sorted(spanning or pairs, key=lambda p: (price[p[0]] + price[p[1]], p))
    return best[0] if best else None


def default_panel(
    providers: list[Provider] | None = None, env: Mapping[str, str] | None = None, rates: Rates | None = None
) -> tuple[str, str, str]:
    """(reviewer B, reviewer C, fix agent) for a desk with these providers: the cheapest pair spanning two
    families, else the cheapest pair; the fix agent is Claude Opus with an Anthropic key (a fix is one call per
    round that a person then reads), else the first model of the first provider with a key."""
    providers = configured_providers(env) if providers is None else providers
    # No key yet: the Claude panel (the runs will say which key is missing).
    models = usable_model_ids(providers, env) or list(CLAUDE_MODELS)
    pair = cheapest_pair(models, rates) or (models[0], models[0])
    ready = [p for p in providers if p.key_present(env) and p.models]
    fixer = "claude-opus-5-5" if not ready or any(p.name == ANTHROPIC for p in ready) else models[0]
    return pair[0], pair[1], fixer


def partner_for(
    model: str,
    providers: list[Provider] | None = None,
    env: Mapping[str, str] | None = None,
    rates: Rates | None = None,
) -> str:
    """The other reviewer for a slot fixed to `model` (SANTA_REVIEWER_B or _C set alone): the cheapest usable model
    of another family, else the cheapest other model, else `model` itself (the only one there is)."""
    providers = configured_providers(env) if providers is None else providers
    others = [m for m in usable_model_ids(providers, env) or list(CLAUDE_MODELS) if canonical(m) != canonical(model)]
    price = {m: review_usd(m, rates) for m in others}
    ranked = sorted(others, key=lambda m: (not spans_two_families(model, m), price[m], m))
    return ranked[0] if ranked else model


def other_slot(given: str, default: str) -> str:
    """The reviewer for the slot not given on the command line: its default, unless that is the very model given for
    the other slot (then a partner of another family: never the same model twice by default)."""
    if given != PERSON_FAMILY and canonical(default) == canonical(given):
        return partner_for(given)
    return default


def third_for(
    reviewer_b: str,
    reviewer_c: str,
    providers: list[Provider] | None = None,
    env: Mapping[str, str] | None = None,
    rates: Rates | None = None,
) -> str:
    """The default third reviewer (slot D, for a rubric's high-risk criteria): the cheapest usable model that is
    neither B nor C, of a family not yet on the panel when there is one (a third opinion from a family already
    there shares its blind spots); with no other model at all, the cheapest usable one."""
    providers = configured_providers(env) if providers is None else providers
    models = list(dict.fromkeys(usable_model_ids(providers, env) or list(CLAUDE_MODELS)))
    taken = {canonical(reviewer_b), canonical(reviewer_c)}
    on_panel = [m for m in (reviewer_b, reviewer_c) if m != PERSON_FAMILY]
    price = {m: review_usd(m, rates) for m in models}
    others = [m for m in models if canonical(m) not in taken] or models
    ranked = sorted(others, key=lambda m: (not all(spans_two_families(m, p) for p in on_panel), price[m], m))
    return ranked[0]
