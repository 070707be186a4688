"""The run loop: checks → two reviews → gate → fix proposal → a person's decision → next round.

- `engine`: the state machine, `advance(state, event) -> state`; the only way a run moves.
- `runner`: executes runs on a thread pool, reviewers B and C concurrently, every step committed.
- `gate`: the AND gate, merging and de-duplicating the reviewers' issues with attribution.
- `fixer`: the fix agent's edits, applied only inside what was flagged.
- `actions`: what a person does to a run (the one door for people's moves).
- `store`: the persistence contract the runner and the actions write through.
"""

from santa_core.run import actions, engine
from santa_core.run.engine import InvalidTransition, advance
from santa_core.run.fixer import issue_fixes, person_fix, propose_fix
from santa_core.run.gate import decide, merge_issues, slot_passes, why_not_pass
from santa_core.run.runner import SLOTS, Conflict, Runner, advance_run, open_person_slots, reviewer_of
from santa_core.run.store import DecisionIn, RoundRecord, RunRecord, Store

__all__ = [
    "SLOTS",
    "Conflict",
    "DecisionIn",
    "InvalidTransition",
    "RoundRecord",
    "RunRecord",
    "Runner",
    "Store",
    "actions",
    "advance",
    "advance_run",
    "decide",
    "engine",
    "issue_fixes",
    "merge_issues",
    "open_person_slots",
    "person_fix",
    "propose_fix",
    "reviewer_of",
    "slot_passes",
    "why_not_pass",
]
