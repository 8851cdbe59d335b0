"""How often a reader calls the parameter (docs/behaviour.md §9.1, "At fleet scale").

Every service process runs a reader, so during a cache outage a fleet's readers all go to the
parameter. SSM serves a standard parameter at 40 `GetParameter` calls a second by default:
1,000 readers that each called it every 10 s would ask for 100 a second, be throttled, and
(without a remembered document) fall back to full capacity exactly when the fleet is under
stress. So the parameter is paced apart from the cache:

- after a call that gave an answer, the next one is due `interval` seconds later;
- after `k` calls in a row that failed (throttled, refused, timed out), `interval × 2^k`
  seconds later, at most `max_age / 3`, so a reader still tries a few times before the
  document it acts on goes stale;
- every delay is jittered by ±25 %, so readers that failed together do not retry together.

Between calls the parameter's last answer is judged again at the reader's clock (a document
ages; a failure says when the next call is due). `interval` 0 turns pacing off: every fetch
that needs the parameter calls it (tests, a local file).
"""

from __future__ import annotations

import random
from typing import Callable, Optional

from .channels import Channel, Fetched

__all__ = ["ParameterPace", "JITTER"]

#: Every delay is multiplied by a factor drawn uniformly from [1 - JITTER, 1 + JITTER].
JITTER = 0.25


def jittered(seconds: float, draw: Callable[[], float] = random.random) -> float:
    """`seconds` spread by ±JITTER at random."""
    return seconds * (1.0 - JITTER + 2.0 * JITTER * draw())


class ParameterPace:
    """When the parameter may be called again, and its last answer meanwhile."""

    def __init__(self, interval: float, max_age: int, draw: Callable[[], float] = random.random) -> None:
        self.interval = interval
        #: The longest delay before jitter: a third of the freshness window.
        self.cap = max_age / 3.0
        self._draw = draw
        self._failures = 0
        self._due = 0.0
        self._last: Optional[Fetched] = None

    @property
    def failures(self) -> int:
        """Calls in a row that failed."""
        return self._failures

    def fetch(self, channel: Channel, now: float) -> "tuple[Fetched, bool]":
        """The parameter's answer at monotonic time `now`, and whether a call was made for it."""
        last = self._last
        if last is not None and now < self._due:
            if last[0] == "failed":
                return ("failed", f"{last[1]} (next call to the parameter in {self._due - now:.0f} s)"), False
            return last, False
        fetched = channel.fetch()
        self._failures = self._failures + 1 if fetched[0] == "failed" else 0
        delay = min(self.cap, self.interval * 2 ** self._failures) if self._failures else self.interval
        self._due = now + jittered(delay, self._draw)
        self._last = fetched
        return fetched, True
