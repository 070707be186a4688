"""Deterministic checks: what code decides before (and beside) the reviewers.

- `criteria`: the checks a rubric criterion may carry, validated and run (`run_criterion_checks`);
  one module per family: `terms`, `limits`, `links`, `parsing`, `secrets`, `reading`.
- `injection`: the reviewer-injection detector; `precheck`: what runs before the reviewers.
- `folding`: one folded view of a text with an index back to the original.
- `forms`: the rubric editor's form metadata for each check type (pure data, no runner).
"""

from santa_core.checks.criteria import CHECK_TYPES, check_config_errors, error_message, run_criterion_checks
from santa_core.checks.folding import Folded, fold
from santa_core.checks.injection import MAX_INJECTION_ISSUES, detect_injection, injected
from santa_core.checks.precheck import precheck_issues

__all__ = [
    "CHECK_TYPES",
    "MAX_INJECTION_ISSUES",
    "Folded",
    "check_config_errors",
    "detect_injection",
    "error_message",
    "fold",
    "injected",
    "precheck_issues",
    "run_criterion_checks",
]
