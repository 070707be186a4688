"""revb (adversarial review of issue 32): "the fixes' Message Batch is sent at most once". A person's Try again
after a create without an answer sends it again; a second Try again (a double click, a second person on a stale
page) must not send it a third time, nor must a Try again while nothing stopped."""

from __future__ import annotations

import pytest

from santa_core.batch.fix_batch import FixesStopped, stopped_fixes
from tests.core.batch.test_fix_calls import World
from tests.support.messages_api import MessagesStub, Reply


def _creates(w: World) -> int:
    return len([c for c in w.stub.batch_calls() if c["method"] == "POST"])


def test_a_second_try_again_does_not_send_the_fixes_batch_again(tmp_path, messages_stub: MessagesStub) -> None:
    w = World(tmp_path, messages_stub, True, 0.5)
    try:
        w.stub.script_batches(Reply(200, {}, {}, delay_s=2.0))  # the first create's answer comes too late
        with pytest.raises(FixesStopped):
            w.driver.propose(w.pattern.id, "ann")
        assert _creates(w) == 1 and stopped_fixes(w.driver.store.pattern(w.pattern.id))
        w.driver.retry_fixes(w.pattern.id, "ann")  # ann looked in the Console: Try again
        assert _creates(w) == 2
        # bob had the page open showing the same "stopped" pattern and clicks Try again too
        try:
            w.driver.retry_fixes(w.pattern.id, "ann")
        except Exception:  # noqa: BLE001 - a refusal is the right answer
            pass
        assert _creates(w) == 2, "a stale Try again paid for the fixes' Message Batch once more"
    finally:
        w.close()
