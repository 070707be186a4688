"""What a rubric author does, the one door every page and command goes through: save a version,
import a rubric file, try a rubric (a sample, or past runs' outputs) with a reviewer. The store checks the
author's stored roles inside each write; a trial checks them before its reviewer is paid as well.
"""

from __future__ import annotations

from santa_core.models import Rubric, RubricDocument
from santa_core.reviewers.base import Reviewer, Served, journal_to, new_trial_key
from santa_core.roles import Permission
from santa_core.rubrics import learning, trials
from santa_core.rubrics.store import SaveResult, Store
from santa_core.text import control_problem


def save_version(store: Store, doc: RubricDocument, author: str, note: str, base_version: int | None) -> SaveResult:
    """Save the edited document as the next version, made from `base_version` (None: a new rubric)."""
    return store.save(doc, author, note, base_version)


def accept_suggestion(store: Store, log: learning.Log, suggestion: learning.Suggestion, author: str) -> SaveResult:
    """Save the rubric's next version with the suggestion applied to its criterion, audited as a version save whose
    note says it came from the suggestion; then record the acceptance.

    Who may change rubrics is asked of the stored roles first and again inside the save (PermissionDenied: nothing
    written). A suggestion accepted or dismissed already is refused (SuggestionDecided) here, saying so, and again
    inside the save's transaction and the decision's. The version is made from the latest one, so a suggestion never
    overwrites an author's newer edit.
    """
    store.require(author, Permission.EDIT_RUBRIC)
    for decision in log.decisions(suggestion.rubric):
        if decision.key == suggestion.key:  # before the text is changed, which would refuse it less clearly
            raise learning.SuggestionDecided(suggestion.key, decision.action)
    doc = store.document(suggestion.rubric)
    saved = store.save(
        learning.accepted(doc, suggestion),
        author,
        learning.acceptance_note(suggestion),
        doc.version,
        source="suggestion",
        suggestion_key=suggestion.key,
    )
    # After the version: a crash in between leaves a version that already covers the suggestion, which is then
    # no longer offered (`learning.suggestions` drops what the rubric covers), never an acceptance without one.
    log.decide(suggestion, "accepted", author, version=saved.version)
    return saved


def dismiss_suggestion(log: learning.Log, suggestion: learning.Suggestion, actor: str, note: str = "") -> int:
    """Remember that the rubric's author does not want this suggestion (audited; refused unless they may change
    rubrics, or when it was decided on already)."""
    return log.decide(suggestion, "dismissed", actor, note)


def import_file(store: Store, text: str, fmt: str, author: str, note: str = "") -> SaveResult:
    """Store a YAML or JSON rubric file as a version."""
    return store.import_text(text, fmt, author, note)


def try_rubric(
    store: Store,
    rubric: Rubric,
    output: str,
    actor: str,
    spec: str = "",
    reviewer: Reviewer | None = None,
    run_id: int | None = None,
    stored_version: int | None = None,
) -> trials.Trial:
    """Try the rubric on a text and keep the trial ("try" on a sample; "recheck" of past run `run_id`) with its
    checks, verdict and the reviewer's call; the trial.

    Who may try rubrics is asked of the stored roles before the reviewer is (PermissionDenied): its call is
    paid, so a refusal when the trial is kept would come after the money is spent. A sample holding a control
    character is refused (ValueError), as on every entry point, before anything else.
    """
    if problem := control_problem(output, "The sample output"):
        raise ValueError(problem)
    store.require(actor, Permission.TRY_RUBRIC)
    kind = "try" if run_id is None else "recheck"
    # The reviewer's call is on record (sent, then answered) before the trial is stored or its answer used: a trial
    # whose storing fails still leaves its paid call in the log, named by the trial's key.
    served = Served(trial_key=new_trial_key(kind))
    with journal_to(store, served):
        trial = trials.try_rubric(rubric, output, spec, reviewer)
    if trial.outcome is not None:
        store.note_calls_answered(served, trial.outcome.calls)
    store.record_trial(
        kind,
        rubric,
        output,
        trial.checks,
        trial.outcome,
        actor,
        run_id=run_id,
        stored_version=stored_version,
        verdict=trial.verdict,
        trial_key=served.trial_key,
    )
    return trial
