"""Batch verification by sampling: review a sample, group failures into patterns, fix every item
that shows a pattern, resample until a clean sample.

- `file` + `formats` + `fields`: reading a CSV or JSONL batch (every problem named by line and column),
  writing it back byte-identical.
- `sampling`: stratified seeded draws, detection chances; `stopping`: the exact bound and the stopping rule.
- `patterns`: failures grouped into patterns, the items that show one; `item_fix`: one fix applied to each.
- `store`: a batch's views and the batch store protocol; `driver`: the batch driver over it (a sample's Message
  Batch in `sample_batch`, a pattern's fixes in `fixing` and `fix_batch`);
  `report`: the cost estimate, statuses, stopping rule, export and the page's `BatchView`.

The names below load their module on first use (PEP 562): the command line's parser reads two
sampling defaults, and must not pay for the whole package on `--help`.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from santa_core.batch.driver import BatchDriver
    from santa_core.batch.file import BatchFile, BatchFileError, read_batch, write_batch
    from santa_core.batch.item_fix import apply_to_batch
    from santa_core.batch.patterns import Pattern, group_patterns
    from santa_core.batch.report import BatchView
    from santa_core.batch.sampling import stratified_sample
    from santa_core.batch.stopping import StoppingRule, stopping_rule

_HOME = {
    "BatchDriver": "driver",
    "BatchView": "report",
    "BatchFile": "file",
    "BatchFileError": "file",
    "read_batch": "file",
    "write_batch": "file",
    "Pattern": "patterns",
    "apply_to_batch": "item_fix",
    "group_patterns": "patterns",
    "StoppingRule": "stopping",
    "stopping_rule": "stopping",
    "stratified_sample": "sampling",
}
__all__ = [
    "BatchDriver",
    "BatchFile",
    "BatchFileError",
    "BatchView",
    "Pattern",
    "StoppingRule",
    "apply_to_batch",
    "group_patterns",
    "read_batch",
    "stopping_rule",
    "stratified_sample",
    "write_batch",
]


def __getattr__(name: str) -> object:
    """A public name of the package, from its module (imported on first use)."""
    if name in _HOME:
        return getattr(import_module(f"santa_core.batch.{_HOME[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
