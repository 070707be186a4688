"""Review cost against generation cost, on the desk's everyday work: short marketing copy, customer letters
and small functions, each run through the real `anthropic` SDK (reviewers, screen) against a loopback
Messages API that reports token usage the way the platform does.

The stand-in model answers like a careful reviewer (one PASS check per criterion, each with a sentence of
detail — what the current answer contract asks for). Tokens are counted as 4 characters a token, on the
request as sent and the answer as returned. Prompt caching is emulated as the platform documents it: a
block marked `cache_control` is written (and later read) only when the prefix up to it is at least the
model's smallest cacheable prompt (MIN_CACHEABLE); a shorter one is neither written nor read.

Generation cost is what `claude-sonnet-5-5` charges to write each output from its spec (the spec and a
short instruction in, the output out). Review cost is every call of the run (screen, reviewers B and C).

    python bench/review_cost.py [--panel claude-sonnet-5-5,claude-haiku-5-5]

First step of issue 18: this prints the figures of the prompt layout as it stands; the new layout will be
printed beside it. Its ratios are higher than the issue's measured 4.9 because 4 characters a token
overcounts the rubric's structured text against the platform's tokenizer (about 1,550 tokens for the
system block here, about 970 measured); both layouts are counted by the same rule.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import threading
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from santa_core.models import Usage  # noqa: E402
from santa_core.pricing import cost_usd  # noqa: E402
from tests.support.messages_api import (  # noqa: E402
    _CRITERIA,
    MessagesStub,
    message,
    repeat_key,
    review_json,
    user_text,
)

CHARS_PER_TOKEN = 4
MIN_CACHEABLE = {"claude-sonnet-5-5": 1024, "claude-opus-5-5": 1024, "claude-haiku-5-5": 2048}
"""Smallest cacheable prompt per model, in tokens (as the platform documents it for these tiers)."""
GENERATOR = "claude-sonnet-5-5"
GENERATION_INSTRUCTION_TOKENS = 60
"""A system line and a request to write the output, around the spec, when the output was generated."""

CORPUS: dict[str, list[tuple[str, str]]] = {
    "marketing copy": [
        ("Write a short product announcement for the Acme Aurora desk lamp for our spring newsletter. Mention the "
         "three brightness levels, the USB-C charging and the 30-day return policy. Friendly tone, no superlatives "
         "we cannot back up, under 120 words, end with a call to action that links to the shop page.",
         "Meet Aurora, the desk lamp that adapts to your day. Choose from three brightness levels, from a soft "
         "evening glow to a crisp light for focused work. Aurora charges over USB-C, so the cable you already "
         "carry keeps it going, and one charge lasts a full working week. Its slim aluminium arm folds flat for "
         "small desks and travel. Try it at home: if Aurora is not right for you, send it back within 30 days "
         "for a full refund. Ready for better light? Visit our shop page and order yours today."),
        ("Write a two-paragraph social post announcing the Riverside bakery's new Saturday opening hours (8 am to "
         "2 pm, starting 6 April). Mention the sourdough, the new oat-milk option for coffee, and that "
         "pre-orders close on Friday at 6 pm. Warm, local tone, under 100 words.",
         "Good news, Riverside! From Saturday 6 April our doors open every Saturday from 8 am to 2 pm. Come early "
         "for a loaf of our slow-proved sourdough, still warm from the oven.\n\nCoffee lovers, we now pour every "
         "drink with oat milk on request, at no extra cost. Planning a weekend brunch? Pre-order your bread and "
         "pastries by Friday at 6 pm and we will have them ready for you. See you on Saturday!"),
    ],
    "customer letter": [
        ("Write a short letter to a customer, Ms Patel, apologising that her order 4471 arrived two days late. "
         "Explain the courier delay, confirm the shipping fee of 4.95 has been refunded to her card, and offer a "
         "10 percent code SORRY10 for her next order. Polite, plain English, under 120 words.",
         "Dear Ms Patel,\n\nThank you for your patience, and I am sorry that your order 4471 reached you two days "
         "later than promised. Our courier had a delay at their regional depot, which held up several deliveries "
         "last week.\n\nWe have refunded the shipping fee of 4.95 to the card you paid with; it should appear "
         "within five working days. As a thank-you for bearing with us, please use the code SORRY10 for 10 "
         "percent off your next order.\n\nKind regards,\nSam Ortiz\nCustomer Care"),
        ("Write a brief reply to Mr Okafor, who asked whether his annual plan renews automatically. Confirm it "
         "renews on 1 March at 96 per year, explain how to turn off renewal in Account settings, and say he can "
         "reply to this email with any question. Friendly, under 100 words.",
         "Dear Mr Okafor,\n\nThanks for getting in touch. Yes, your annual plan renews automatically on 1 March, "
         "at 96 per year. If you would rather not renew, open Account settings, choose Billing, and switch off "
         "Automatic renewal; your plan then stays active until the end of the current year.\n\nIf anything is "
         "unclear, just reply to this email and we will be glad to help.\n\nBest wishes,\nThe Support Team"),
    ],
    "code": [
        ("Write a Python function slugify(title) that lower-cases the title, replaces runs of characters other "
         "than a-z and 0-9 with a single hyphen, strips hyphens at both ends, and returns 'untitled' for an "
         "empty result. Include a docstring and type hints; no third-party libraries.",
         "import re\n\n\ndef slugify(title: str) -> str:\n    \"\"\"Turn a title into a URL slug: lower case, runs of "
         "other characters as one hyphen.\n\n    Returns 'untitled' when nothing is left.\n    \"\"\"\n    slug = "
         "re.sub(r\"[^a-z0-9]+\", \"-\", title.lower()).strip(\"-\")\n    return slug or \"untitled\"\n"),
        ("Write a Python function median(values) that returns the median of a non-empty list of numbers "
         "without sorting the input in place, raises ValueError with a clear message for an empty list, and "
         "has a docstring and type hints.",
         "def median(values: list[float]) -> float:\n    \"\"\"The median of a non-empty list of numbers; the input is "
         "left as it is.\"\"\"\n    if not values:\n        raise ValueError(\"median() needs at least one value\")\n"
         "    ordered = sorted(values)\n    middle = len(ordered) // 2\n    if len(ordered) % 2:\n        return "
         "float(ordered[middle])\n    return (ordered[middle - 1] + ordered[middle]) / 2\n"),
    ],
}


def tokens(text: str) -> int:
    return max(1, len(text) // CHARS_PER_TOKEN)


class CachingModel:
    """Answers like a careful reviewer and reports usage with the platform's prompt-cache rules."""

    def __init__(self) -> None:
        self.cache: set[tuple[str, str]] = set()
        self.lock = threading.Lock()
        self.calls: list[dict] = []

    def __call__(self, body: dict) -> dict:
        model = body.get("model", "")
        found = _CRITERIA.findall(user_text(body))
        ids = [s.strip() for s in found[-1].split(",") if s.strip()] if found else []
        detail = "Checked against the spec: the output meets this criterion and nothing in it contradicts it."
        answer = review_json("PASS", [(i, "PASS", detail) for i in ids])
        usage = self.usage(body, answer)
        with self.lock:
            self.calls.append({"model": model, "usage": usage, "purpose": "review"})
        return message(answer, model, usage=usage)

    def usage(self, body: dict, answer: str) -> dict:
        system = body.get("system") or []
        blocks = [b["text"] for b in system] if isinstance(system, list) else [str(system)]
        prefix, cached_upto = 0, 0
        for block in system if isinstance(system, list) else []:
            prefix += tokens(block["text"])
            if block.get("cache_control"):
                cached_upto = prefix if prefix >= MIN_CACHEABLE.get(body.get("model", ""), 1024) else cached_upto
        total_in = sum(tokens(b) for b in blocks) + tokens(user_text(body)) + tokens(json.dumps(
            (body.get("output_config") or {}).get("format") or {}))
        key = (body.get("model", ""), "".join(blocks))
        with self.lock:
            hit = cached_upto and key in self.cache
            if cached_upto:
                self.cache.add(key)
        read = cached_upto if hit else 0
        write = cached_upto if cached_upto and not hit else 0
        return {"input_tokens": total_in - read - write, "output_tokens": tokens(answer),
                "cache_read_input_tokens": read, "cache_creation_input_tokens": write}


def screen_with_usage(body: dict) -> dict:
    reply = repeat_key(body)
    reply["usage"] = {"input_tokens": tokens(user_text(body)), "output_tokens": 6,
                      "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0}
    return reply


def generation_usd(spec: str, output: str) -> float:
    return cost_usd(GENERATOR, Usage(input_tokens=tokens(spec) + GENERATION_INSTRUCTION_TOKENS,
                                     output_tokens=tokens(output)))


def measure(panel: tuple[str, str]) -> None:
    from desk.wiring import model_fixer, model_reviewer, model_screen
    from santa_core.rubrics.library import load_builtin
    from santa_core.run.runner import Runner
    from storage.runs import RunStore
    from storage.startup import init_db
    from tests.conftest import grant

    stub, model = MessagesStub().start(), CachingModel()
    stub.handler, stub.screen = model, screen_with_usage
    os.environ.update(ANTHROPIC_BASE_URL=stub.url, ANTHROPIC_API_KEY="bench")
    for key in [k for k in os.environ if k.startswith(("OPENAI_", "SANTA_PROVIDER_"))]:
        os.environ.pop(key)
    repo = grant(RunStore(init_db(f"sqlite:///{Path(tempfile.mkdtemp()) / 'cost.db'}", mark_interrupted=False)))
    runner = Runner(repo, model_reviewer, model_fixer, workers=2, screen_for=model_screen(repo))
    rubric = load_builtin("content")
    per_domain: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for domain, items in CORPUS.items():
        for spec, output in items:
            run_id = repo.create_run(spec, output, rubric, panel[0], panel[1], "claude-opus-5-5", created_by="ann")
            state = runner.execute(run_id)
            view = repo.get_run_view(run_id)
            reviews = [o for r in view.rounds for o in r.reviews.values()]
            d = per_domain[domain]
            d["runs"] += 1
            d["shipped"] += state.status == "shipped"
            d["review_usd"] += view.total_cost_usd
            d["generation_usd"] += generation_usd(spec, output)
            for o in reviews:
                u = o.usage
                d["calls"] += 1
                d["input"] += u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens
                d["cache_read"] += u.cache_read_input_tokens
                d["output"] += u.output_tokens
    runner.shutdown()
    stub.stop()
    print(f"panel {panel[0]} + {panel[1]}, rubric {rubric.name}; generation priced as {GENERATOR}")
    print(f"{'domain':<16} {'runs':>4} {'shipped':>7} {'review/gen':>10} {'in tok/call':>11} {'out tok/call':>12} "
          f"{'cache read':>10}")
    for domain, d in per_domain.items():
        print(f"{domain:<16} {int(d['runs']):>4} {int(d['shipped']):>7} {d['review_usd'] / d['generation_usd']:>10.2f} "
              f"{d['input'] / d['calls']:>11.0f} {d['output'] / d['calls']:>12.0f} "
              f"{d['cache_read'] / max(1, d['input']):>10.0%}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--panel", default="claude-sonnet-5-5,claude-haiku-5-5", help="reviewer B,C")
    args = parser.parse_args()
    measure(tuple(args.panel.split(",")))


if __name__ == "__main__":
    main()
