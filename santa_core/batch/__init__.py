"""Batch verification by sampling: review a sample, group failures into patterns, fix every item
that shows a pattern, resample until a clean sample.

- `file`: reading a CSV or JSONL batch (every problem named by line and column), writing it back.
- `sampling`: stratified seeded draws, detection chances, the stopping rule's exact bound.
- `patterns`: failures grouped into patterns, the items that show one, one fix applied to each.
"""

from santa_core.batch.file import BatchFile, BatchFileError, read_batch, write_batch
from santa_core.batch.patterns import Pattern, apply_to_batch, group_patterns
from santa_core.batch.sampling import StoppingRule, stopping_rule, stratified_sample

__all__ = [
    "BatchFile",
    "BatchFileError",
    "Pattern",
    "StoppingRule",
    "apply_to_batch",
    "group_patterns",
    "read_batch",
    "stopping_rule",
    "stratified_sample",
    "write_batch",
]
