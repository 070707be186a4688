"""Exclusions hold across patterns: an item a person kept out of one pattern's fix keeps out of the others'.

When a person approves a pattern's fix and excludes items ("this one is a quote from the law, leave it"), the
reason is about the item, not only about that pattern: another pattern of the batch (same sample or a later one)
must not rewrite it without saying so. So every later approval excludes such an item by default, with the note
"excluded from pattern 1 of sample 1 (…): <reason>", and rewrites it only when the approver includes it by name,
with a reason. The batch driver applies the default (`BatchDriver.approve`), and the store refuses a change to an
item excluded elsewhere that the approval did not include (`storage.batches.BatchStore.apply_fix`), so no door
(the page, auto-approve, the command line, the worker) rewrites one silently.

Pure: reads the stored patterns' `excluded` (item key → reason, kept when their fix was approved).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pydantic import BaseModel

from santa_core.batch.store import PatternRecord

EXCLUDED = "excluded"
"""Key in a stored pattern's JSON: item key → why a person kept the item out of the pattern's fix."""
INCLUDED = "included"
"""Key in a stored pattern's JSON: item key → why a person let the fix rewrite an item excluded from another."""


class Held(BaseModel):
    """An item a person excluded from an approved pattern's fix, and where."""

    pattern_id: int
    sample: int
    number: int
    """The pattern's place among its sample's patterns, as the page numbers them (from 1)."""
    title: str
    reason: str

    def note(self) -> str:
        """E.g. "excluded from pattern 1 of sample 1 (Factual accuracy: “risk-free”): a quoted testimonial"."""
        return f"excluded from pattern {self.number} of sample {self.sample} ({self.title}): {self.reason}"


def excluded_of(record: PatternRecord) -> dict[str, str]:
    """The items a person excluded from this pattern's approved fix (key → reason)."""
    return dict(record.pattern.get(EXCLUDED) or {}) if record.status == "applied" else {}


def held(records: Sequence[PatternRecord], samples: Mapping[int, int]) -> dict[str, Held]:
    """Every item excluded from an approved pattern's fix (the first such pattern), key → where and why.

    `records`: the batch's patterns; `samples`: sample id → its number."""
    out: dict[str, Held] = {}
    by_sample: dict[int, list[PatternRecord]] = {}
    for record in sorted(records, key=lambda r: r.id):
        by_sample.setdefault(record.sample_id, []).append(record)
    for sample_id, same in sorted(by_sample.items(), key=lambda kv: samples.get(kv[0], kv[0])):
        for number, record in enumerate(same, 1):
            for key, reason in excluded_of(record).items():
                out.setdefault(
                    key,
                    Held(
                        pattern_id=record.id,
                        sample=samples.get(sample_id, 0),
                        number=number,
                        title=record.title,
                        reason=reason,
                    ),
                )
    return out
