"""What a rubric author does, the one door every page and command goes through: save a version,
import a rubric file, keep a trial. The store checks the author's stored roles inside each write.
"""

from __future__ import annotations

from santa_core.models import Rubric, RubricDocument
from santa_core.rubrics.store import SaveResult, Store
from santa_core.rubrics.trials import Trial
from santa_core.text import control_problem


def save_version(store: Store, doc: RubricDocument, author: str, note: str, base_version: int | None) -> SaveResult:
    """Save the edited document as the next version, made from `base_version` (None: a new rubric)."""
    return store.save(doc, author, note, base_version)


def import_file(store: Store, text: str, fmt: str, author: str, note: str = "") -> SaveResult:
    """Store a YAML or JSON rubric file as a version."""
    return store.import_text(text, fmt, author, note)


def keep_trial(store: Store, kind: str, rubric: Rubric, output: str, trial: Trial, actor: str,
               run_id: int | None = None, stored_version: int | None = None) -> int:
    """Append a trial ("try" on a sample, "recheck" of a past run) with its checks and verdict; its id.
    A sample holding a control character is refused (ValueError), as on every entry point."""
    if problem := control_problem(output, "The sample output"):
        raise ValueError(problem)
    return store.record_trial(kind, rubric, output, trial.checks, trial.outcome, actor, run_id=run_id,
                              stored_version=stored_version, verdict=trial.verdict)
