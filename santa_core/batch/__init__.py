"""Batch verification by sampling: review a sample, group failures into patterns, fix every item
that shows a pattern, resample until a clean sample.

- `file` + `formats`: reading a CSV or JSONL batch (every problem named by line and column),
  writing it back byte-identical.
- `sampling`: stratified seeded draws, detection chances, the stopping rule's exact bound.
- `patterns`: failures grouped into patterns, the items that show one, one fix applied to each.
- `store`: a batch's views and the batch store protocol; `driver`: the batch driver over it;
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
    from santa_core.batch.patterns import Pattern, apply_to_batch, group_patterns
    from santa_core.batch.report import BatchView
    from santa_core.batch.sampling import StoppingRule, stopping_rule, stratified_sample

_HOME = {
    "BatchDriver": "driver",
    "BatchView": "report",
    "BatchFile": "file",
    "BatchFileError": "file",
    "read_batch": "file",
    "write_batch": "file",
    "Pattern": "patterns",
    "apply_to_batch": "patterns",
    "group_patterns": "patterns",
    "StoppingRule": "sampling",
    "stopping_rule": "sampling",
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
