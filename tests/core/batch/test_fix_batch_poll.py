"""One passing failure of a free poll of the fixes' Message Batch (a 529 while reading its status) does not stop the
fixes for a person's Try again: the SDK retries nothing since issue 32, so the fixes' poll tolerates failures in a
row as a sample's does (`MAX_POLL_FAILURES`); under auto-approve a blip would otherwise hand the pattern to a person."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.core.batch.test_fix_calls import World, world  # noqa: F401 - the fixture
from tests.support.messages_api import Reply, error_body


def test_one_overloaded_poll_does_not_stop_the_fixes(
    world: Callable[..., World],  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    w = world(True)
    real = w.stub._batch_answer
    failed = []

    def once_overloaded(method: str, path: str, headers: dict, body: object) -> Reply:
        if method == "GET" and not path.split("?")[0].rstrip("/").endswith(("results", "batches")) and not failed:
            failed.append(path)
            return Reply(529, {}, error_body("overloaded_error", "Overloaded"))
        return real(method, path, headers, body)

    monkeypatch.setattr(w.stub, "_batch_answer", once_overloaded)
    w.driver.propose(w.pattern.id, "ann")  # (stopped with FixesStopped at the first failed poll)
    assert failed and w.driver.store.pattern(w.pattern.id).item_fixes
