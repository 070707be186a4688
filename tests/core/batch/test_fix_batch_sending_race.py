"""A prepare that reads the fixes' batch as `sending` marks it "stopped: cut short" only from the status it read.
Before, with an unconditional
write: When the live sender stores the made batch's id between that read and that write, the id is overwritten:
the paid batch A is never collected, and the page offers Try again, which sends (and pays for) batch B."""

from __future__ import annotations

import pytest

from santa_core.batch.fix_batch import FIX_BATCH, IN_PROGRESS, SENDING, FixesStopped
from tests.core.batch.test_fix_calls import World
from tests.support.messages_api import MessagesStub


def test_a_stale_sending_read_does_not_erase_the_made_batch(tmp_path, messages_stub: MessagesStub) -> None:
    w = World(tmp_path, messages_stub, True, 5.0)
    try:
        store, pid = w.driver.store, w.pattern.id
        store.set_fix_batch(pid, {"status": SENDING})  # process 1 is creating the batch
        real = store.pattern

        def stale_read(pattern_id: int):
            record = real(pattern_id)  # process 2 reads "sending" ...
            # ... and process 1's create returns: it stores the made batch's id
            store.set_fix_batch(pid, {"status": IN_PROGRESS, "api_id": "msgbatch_A", "jobs": {}})
            return record

        store.pattern = stale_read
        batch = w.driver.store.get(w.batch_id)
        with pytest.raises(FixesStopped):
            w.driver._fix_batch(pid, batch, {}, None)
        store.pattern = real
        state = store.pattern(pid).pattern.get(FIX_BATCH) or {}
        assert state.get("api_id") == "msgbatch_A", f"the made batch's id was overwritten: {state}"
    finally:
        w.close()
