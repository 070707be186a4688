"""Where a prompt-cache breakpoint pays, and for how long.

Every review request of one rubric and model starts with the same prefix (`prompts.review_prefix`, plus the
answer schema). On the Claude platform a `cache_control` breakpoint after it writes the prefix to the cache
(1.25x the input rate for 5 minutes, 2x for an hour) and each later request with the same prefix reads it
at about a tenth of the input rate. A write nobody reads is a loss, and a prefix shorter than the model's
minimum (rates.toml `min_cache_tokens`) is neither written nor read. So the desk places a breakpoint only:

- on a prefix at least as long as the model's minimum, counted on the low side (PLACEMENT_CHARS_PER_TOKEN:
  more characters a token than the platform counted on the desk's rubrics, so a prefix said to be long
  enough is long enough; one a little longer than the minimum may go uncached), and
- when a read is coming: the same prefix was sent within the last 5 minutes (a stream of reviews: the
  5-minute entry, refreshed by every read), or at least BUSY_PER_HOUR times in the last hour with longer
  gaps (a busy desk: the 1-hour entry, which pays for its dearer write after two reads). A cold prefix gets
  no breakpoint: its write would most likely expire unread.
- A Message Batches job after the first of its prefix takes the 1-hour entry (a batch's requests may be
  processed over more than 5 minutes, so a 5-minute entry could expire between them).

OpenAI and compatible servers cache long prefixes by themselves (no breakpoint, no write premium), so the
planner is asked only for Claude models.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections import deque
from collections.abc import Callable

from santa_core.pricing import Rates, load_rates

FIVE_MINUTES = "5m"
ONE_HOUR = "1h"
STREAM_GAP_S = 300.0
"""A prefix sent again within this many seconds is read from the 5-minute entry (refreshed on every read)."""
BUSY_PER_HOUR = 4
"""Uses of one prefix in the last hour from which the desk is busy enough for the 1-hour entry."""
HOUR_S = 3600.0
PLACEMENT_CHARS_PER_TOKEN = 7.0
"""Characters a token at most, for placing a breakpoint: the platform counted 6.4 on the desk's rubric prefix
(6,211 characters, 970 tokens), so a prefix of 7 characters a token times the minimum holds the minimum."""


def prefix_tokens_at_least(prefix: str) -> int:
    """The fewest tokens `prefix` may count (a low estimate: the breakpoint rule must not overcount)."""
    return int(len(prefix) / PLACEMENT_CHARS_PER_TOKEN)


def long_enough(model: str, prefix: str, rates: Rates | None = None) -> bool:
    """Whether `model` caches a prefix this long (False when its minimum is not known: no breakpoint)."""
    row = (rates or load_rates()).models.get(model)
    minimum = row.min_cache_tokens if row is not None else None
    return minimum is not None and prefix_tokens_at_least(prefix) >= minimum


def breakpoint_block(text: str, ttl: str) -> dict:
    """A system text block ending in a cache breakpoint of lifetime `ttl`."""
    control = {"type": "ephemeral"} if ttl == FIVE_MINUTES else {"type": "ephemeral", "ttl": ttl}
    return {"type": "text", "text": text, "cache_control": control}


def ttl_of(body: dict) -> str:
    """The lifetime of the cache entry a request body writes ("5m" unless a breakpoint asks for "1h")."""
    system = body.get("system")
    blocks = system if isinstance(system, list) else []
    ttls = [(b.get("cache_control") or {}).get("ttl") for b in blocks if isinstance(b, dict) and b.get("cache_control")]
    return ONE_HOUR if ONE_HOUR in ttls else FIVE_MINUTES


class CacheLedger:
    """When each prefix (per model) was last sent, in this process, to say whether a cache write will be read."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._sent: dict[tuple[str, str], deque[float]] = {}

    def clear(self) -> None:
        """Forget every prefix sent (a fresh process; tests start from here)."""
        with self._lock:
            self._sent.clear()

    def plan(self, model: str, prefix: str, batch: bool = False, rates: Rates | None = None) -> str | None:
        """The breakpoint lifetime for the next request of `model` with `prefix` ("5m", "1h"), or None; notes the
        request as sent."""
        key = (model, hashlib.sha256(prefix.encode()).hexdigest())
        now = self._clock()
        with self._lock:
            sent = self._sent.setdefault(key, deque())
            while sent and now - sent[0] > HOUR_S:
                sent.popleft()
            last = sent[-1] if sent else None
            busy = len(sent) >= BUSY_PER_HOUR
            sent.append(now)
        if not long_enough(model, prefix, rates):
            return None
        if batch:
            return ONE_HOUR if last is not None else None
        if last is not None and now - last <= STREAM_GAP_S:
            return FIVE_MINUTES
        return ONE_HOUR if busy else None


LEDGER = CacheLedger()
"""The process's ledger (the reviewers of one desk share it)."""
