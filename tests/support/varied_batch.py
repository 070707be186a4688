"""A 200-item batch where about a fifth of one stratum carries one defect in varied sentences.

The defect is an unkeepable promise ("… are guaranteed within N days …"); the sentence differs
from item to item (subject, number, tail), so no exact quote reaches the unsampled items: only a
pattern that generalises does. Clean items say similar things without the promise ("arrive within
N days"), so a signature that is too loose would reach them, and the receipts quote a "guarantee"
page that is no defect.

One defective item ("Lifetime …") defeats the stub fix agent: it edits outside the flagged
sentence, the scope rule refuses the edit, and the item is left for a person.

The same answers serve every layer: `review`/`fix_plan` for the doubles below the page, and
`varied_answer` for the loopback Messages API (AppTest, command line, browser).
"""

from __future__ import annotations

import csv
import io
import re

from santa_core.models import FixEdit, FixPlan, Review
from santa_core.reviewers.base import ReviewRequest
from santa_core.reviewers.doubles import failing, passing
from tests.support.messages_api import default_answer, fenced_output, fix_json, message, review_json, schema_properties

TEMPLATES = ("promo", "welcome", "receipt", "survey", "reminder")
CRITERION = "compliance"
TITLE = "promises results we cannot guarantee"
SUBJECTS = ("Your results are", "Results are", "Your savings are", "The results are", "Your first results are")
TAILS = ("", " of signing up", " for every plan", " after your first order", " or your money back")
UNFIXABLE = "Lifetime"
SEED = 4
"""The first sample (15 %) of `varied_csv()` draws 4 of the 8 defective items (deterministic: the draw
depends on the ids and strata, not the text): item-050, -100, -150 and -175. The "Lifetime" item
(item-125) and item-000 (word for word item-050's promise) are not among them."""
SPEC = "Write a short customer e-mail for the template named in the item. Make no promise we cannot keep."
_DEFECT = re.compile(r"[^.!?]*\bguaranteed\b[^.!?]*[.!?]")


def defect_sentence(i: int) -> str:
    """Item i's version of the promise."""
    if i == 0:  # word for word the sampled item-050's: the approved edit applies as a text rule
        i = 50
    subject = SUBJECTS[(i // 25) % len(SUBJECTS)] if i != 125 else f"{UNFIXABLE} results are"
    return f"{subject} guaranteed within {3 + i % 7} days{TAILS[(i // 25) % len(TAILS)]}."


def varied_csv(items: int = 200) -> tuple[bytes, set[str]]:
    """`items` rows over five templates; every fifth promo item carries the promise (8 of 40 at 200)."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["id", "template", "locale", "output"])
    defective: set[str] = set()
    for i in range(items):
        template = TEMPLATES[i % len(TEMPLATES)]
        if template == "promo" and (i // len(TEMPLATES)) % 5 == 0:
            text = f"Hello customer {i}, our spring sale starts today. {defect_sentence(i)} See you soon."
            defective.add(f"item-{i:03d}")
        elif template == "promo":
            text = f"Hello customer {i}, our spring sale starts today. Orders arrive within {3 + i % 7} days."
        elif template == "receipt":
            text = (
                f"Hello customer {i}, thanks for order {1000 + i}. Your results are ready within "
                f"{2 + i % 5} days; read our guarantee page for returns."
            )
        else:
            text = f"Hello customer {i}, thanks for reading our {template} note, number {i}."
        writer.writerow([f"item-{i:03d}", template, "en" if i % 2 else "de", text])
    return buf.getvalue().encode("utf-8"), defective


def defects(output: str) -> list[str]:
    """The promise's sentences in an output, as they stand."""
    return [m.group(0).strip() for m in _DEFECT.finditer(output)]


def review(request: ReviewRequest) -> Review:
    """A reviewer double: FAIL compliance on each promise, quoting its sentence; PASS otherwise."""
    found = defects(request.output)
    if not found:
        return passing(request)
    answer = failing(request, CRITERION, TITLE, found[0])
    return answer


def fix_edits(output: str) -> list[tuple[int, str, str]]:
    """The stub fix agent's edits: each promise made honest, in its own sentence (issue i = i-th sentence).

    On the "Lifetime" item it edits the greeting instead: outside the flagged sentence, so refused.
    """
    if UNFIXABLE in output:
        return [(0, "Hello customer", "Dear customer")]
    return [
        (i, s, s.replace(" guaranteed within", " expected within").replace(" or your money back", ""))
        for i, s in enumerate(defects(output))
    ]


def fix_plan(request) -> FixPlan:
    """The fix agent double."""
    return FixPlan(edits=[FixEdit(issue=i, before=b, after=a) for i, b, a in fix_edits(request.output)])


def varied_answer(body: dict) -> dict:
    """The loopback Messages API as both reviewers and the fix agent (same answers as the doubles)."""
    model, output = body.get("model", "stub-model"), fenced_output(body)
    if "edits" in schema_properties(body):
        return message(fix_json(fix_edits(output)), model)
    found = defects(output)
    if found:
        return message(
            review_json("FAIL", [(CRITERION, "FAIL", "a promise we cannot keep")], [(CRITERION, TITLE, found[0])]),
            model,
        )
    return default_answer(body)


def hand_fix(output: str) -> str:
    """What a person types for an item no fix could reach."""
    return re.sub(r"[^.!?]*\bguaranteed\b[^.!?]*[.!?]", f"{UNFIXABLE} results vary.", output, count=1).replace(
        "  ", " "
    )
