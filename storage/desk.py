"""The review desk: one repository plus one runner, wired with the real adapters.

Shared by the app (held in `st.cache_resource`) and the command line.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from santa_core.reviewers.anthropic import AnthropicFixer, AnthropicReviewer
from santa_core.reviewers.base import Fixer, Reviewer
from santa_core.runner import Runner
from storage.db import database_url, init_db
from storage.repo import Repo


def model_reviewer(name: str) -> Reviewer:
    """A fresh Anthropic reviewer for one call (fresh per round: no carried context)."""
    return AnthropicReviewer(name)


def model_fixer(name: str) -> Fixer:
    """A fresh Anthropic fix agent."""
    return AnthropicFixer(name)


@dataclass
class Desk:
    """What a page or the command line needs: the repository and the runner."""

    url: str
    repo: Repo
    runner: Runner

    def run_json(self, run_id: int) -> dict:
        """The run as one JSON-ready object (the command line's --json answer)."""
        return self.repo.run_json(run_id)

    def close(self) -> None:
        """Wait for in-flight steps to commit, then stop the pools."""
        self.runner.shutdown()


def open_desk(
    url: str | None = None,
    reviewer_for: Callable[[str], Reviewer] = model_reviewer,
    fixer_for: Callable[[str], Fixer] = model_fixer,
    workers: int = 4,
    mark_interrupted: bool = True,
) -> Desk:
    """Open (and migrate) the database; for the app, mark dead runs interrupted and requeue queued ones."""
    url = url or database_url()
    engine = init_db(url, mark_interrupted=mark_interrupted)
    repo = Repo(engine)
    return Desk(
        url=url, repo=repo, runner=Runner(repo, reviewer_for, fixer_for, workers)
    )
