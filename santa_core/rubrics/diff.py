"""Compare two versions of a rubric document: what a reviewer of the change needs to see.

Criteria are matched by id (an id is never reused for another meaning: retired ids stay
reserved), so a renamed criterion shows as "changed", not as one removed and one added.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from santa_core.models import Criterion, RubricDocument
from santa_core.text import canonical_json

RowStatus = Literal["added", "removed", "changed", "retired", "restored", "same"]

HEADER_FIELDS = ("name", "domain", "description", "extends")
CRITERION_FIELDS = ("name", "category", "severity", "pass_condition", "fail_signal", "check", "third_reviewer")
"""Fields compared for "changed"; `retired` is reported by the retired/restored lists instead."""


@dataclass(frozen=True)
class FieldChange:
    """One field whose text differs between the two versions."""

    field: str
    before: str
    after: str


@dataclass(frozen=True)
class CriterionChange:
    """A criterion present in both versions whose fields differ."""

    criterion_id: str
    changes: list[FieldChange]


@dataclass(frozen=True)
class RubricDiff:
    """Everything that differs between two rubric documents."""

    header: list[FieldChange] = field(default_factory=list)
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    retired: list[str] = field(default_factory=list)
    restored: list[str] = field(default_factory=list)
    changed: list[CriterionChange] = field(default_factory=list)
    reordered: bool = False

    @property
    def is_empty(self) -> bool:
        """True when the two documents say the same thing in the same order."""
        return not (
            self.header or self.added or self.removed or self.retired or self.restored or self.changed or self.reordered
        )


@dataclass(frozen=True)
class SideBySideRow:
    """One criterion in a two-column view; the text is empty on the side where it does not exist."""

    criterion_id: str
    status: RowStatus
    old_text: str
    new_text: str


def check_json(check: dict | None) -> str:
    """A check as compact JSON with sorted keys ("" for no check)."""
    if check is None:
        return ""
    return canonical_json(check)


def _text(value: object) -> str:
    """A field value as text for a FieldChange."""
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    if isinstance(value, dict) or value is None:
        return check_json(value)
    return str(value)


def _field_changes(old: object, new: object, fields: tuple[str, ...]) -> list[FieldChange]:
    pairs = ((f, _text(getattr(old, f)), _text(getattr(new, f))) for f in fields)
    return [FieldChange(f, before, after) for f, before, after in pairs if before != after]


def _reordered(old_ids: list[str], new_ids: list[str]) -> bool:
    """True when the ids both versions share appear in a different relative order."""
    common = set(old_ids) & set(new_ids)
    return [i for i in old_ids if i in common] != [i for i in new_ids if i in common]


def diff_documents(old: RubricDocument, new: RubricDocument) -> RubricDiff:
    """What changed from `old` to `new`: header fields, criteria by id, and their order."""
    old_by_id = {c.id: c for c in old.criteria}
    new_by_id = {c.id: c for c in new.criteria}
    common = [i for i in new_by_id if i in old_by_id]
    changed = [
        CriterionChange(i, changes)
        for i in common
        if (changes := _field_changes(old_by_id[i], new_by_id[i], CRITERION_FIELDS))
    ]
    return RubricDiff(
        header=_field_changes(old, new, HEADER_FIELDS),
        added=[i for i in new_by_id if i not in old_by_id],
        removed=[i for i in old_by_id if i not in new_by_id],
        retired=[i for i in common if new_by_id[i].retired and not old_by_id[i].retired],
        restored=[i for i in common if old_by_id[i].retired and not new_by_id[i].retired],
        changed=changed,
        reordered=_reordered(list(old_by_id), list(new_by_id)),
    )


def render_criterion(c: Criterion) -> str:
    """A readable multi-line rendering of one criterion (every field on its own line)."""
    return "\n".join(
        [
            f"name: {c.name}",
            f"category: {c.category}",
            f"severity: {c.severity}",
            f"pass condition: {c.pass_condition}",
            f"fail signal: {c.fail_signal}",
            f"check: {check_json(c.check) or 'none'}",
            f"retired: {'yes' if c.retired else 'no'}",
            f"third reviewer: {'yes' if c.third_reviewer else 'no'}",
        ]
    )


def _status(old: Criterion | None, new: Criterion | None) -> RowStatus:
    if old is None:
        return "added"
    if new is None:
        return "removed"
    if new.retired != old.retired:
        return "retired" if new.retired else "restored"
    return "changed" if _field_changes(old, new, CRITERION_FIELDS) else "same"


def _union_order(old_ids: list[str], new_ids: list[str]) -> list[str]:
    """New order, with each removed id placed after the old neighbour it followed."""
    kept = set(new_ids)
    after: dict[str | None, list[str]] = {}
    anchor: str | None = None
    for i in old_ids:
        if i in kept:
            anchor = i
        else:
            after.setdefault(anchor, []).append(i)
    order = list(after.get(None, []))
    for i in new_ids:
        order += [i, *after.get(i, [])]
    return order


def side_by_side(old: RubricDocument, new: RubricDocument) -> list[SideBySideRow]:
    """One row per criterion of either version, for a two-column view."""
    old_by_id = {c.id: c for c in old.criteria}
    new_by_id = {c.id: c for c in new.criteria}
    rows = []
    for i in _union_order(list(old_by_id), list(new_by_id)):
        before, after = old_by_id.get(i), new_by_id.get(i)
        rows.append(
            SideBySideRow(
                criterion_id=i,
                status=_status(before, after),
                old_text=render_criterion(before) if before else "",
                new_text=render_criterion(after) if after else "",
            )
        )
    return rows
