"""How often a reader calls the parameter (docs/behaviour.md §9.1, "At fleet scale").

Every service process runs a reader, so during a cache outage a fleet's readers all go to the
parameter. SSM serves a standard parameter at 40 `GetParameter` calls a second by default:
1,000 readers that each called it every 10 s would ask for 100 a second, be throttled, and
(without a remembered document) fall back to full capacity exactly when the fleet is under
stress. So the parameter is paced apart from the cache:

- the first call after the cache stops serving (the pace was not consulted for longer than
  `interval` and the reader's refresh), while the reader still acts on a fresh remembered
  document, waits a random part of `interval` (at most half the time that document stays
  fresh), so a fleet whose cache failed at once does not call at once;
- after a call that gave an answer, the next one is due `interval` seconds later;
- after `k` calls in a row that failed (throttled, refused, timed out), `interval × 2^k` seconds
  later, at most `max_age / 3`, and at most half the time the remembered document stays fresh,
  so a reader tries again, and again, before it would have to run at full capacity;
- every delay is jittered by ±25 %, so readers that failed together do not retry together.

Between calls the parameter's last answer is judged again at the reader's clock (a document
ages; a failure says when the next call is due). `interval` 0 turns pacing off: every fetch
that needs the parameter calls it (tests, a local file).
"""

from __future__ import annotations

import random
from typing import Callable, Optional, Tuple

from .channels import Channel, Fetched
from .host_share import HostShare

__all__ = ["ParameterPace", "JITTER"]

#: Every delay is multiplied by a factor drawn uniformly from [1 - JITTER, 1 + JITTER].
JITTER = 0.25
#: The shortest wait before a retry, seconds.
_FLOOR = 1.0


def jittered(seconds: float, draw: Callable[[], float] = random.random) -> float:
    """`seconds` spread by ±JITTER at random."""
    return seconds * (1.0 - JITTER + 2.0 * JITTER * draw())


class ParameterPace:
    """When the parameter may be called again, and its last answer meanwhile."""

    def __init__(self, interval: float, max_age: int, draw: Callable[[], float] = random.random,
                 refresh: float = 0.0, share: Optional[HostShare] = None) -> None:
        self.interval = interval
        #: The host's shared answer (`parameter_share`), when the processes of a host share one.
        self.share = share
        #: Unconsulted this long (the cache served meanwhile), the next need starts a new outage.
        self.idle_after = max(interval, refresh) * (1.0 + JITTER) + 1.0
        #: The longest delay before jitter: a third of the freshness window.
        self.cap = max_age / 3.0
        self._draw = draw
        self._failures = 0
        self._due = 0.0
        self._last: Optional[Fetched] = None
        self._consulted: Optional[float] = None
        self._spreading = False

    @property
    def failures(self) -> int:
        """Calls in a row that failed."""
        return self._failures

    def fetch(self, channel: Channel, now: float, fresh_for: Optional[float] = None) -> Tuple[Optional[Fetched], bool]:
        """The parameter's answer at monotonic time `now` (None: not read yet, its first call is
        being spread), and whether this process called the parameter for it (not when the answer
        was the host's shared one, or the last one reused). `fresh_for`: how many more seconds
        the document the reader acts on stays fresh, None without one."""
        idle = self._consulted is None or now - self._consulted > self.idle_after
        self._consulted = now
        last = self._last
        if now < self._due:
            if last is None:
                return None, False
            if last[0] == "failed":
                return ("failed", f"{last[1]} (next call to the parameter in {self._due - now:.0f} s)"), False
            return last, False
        if idle and not self._spreading and fresh_for is not None and self.interval > 0:
            self._spreading = True
            self._last = None
            self._due = now + self._draw() * min(self.interval, fresh_for / 2.0)
            return None, False
        self._spreading = False
        if self.share is not None and self.interval > 0:
            fetched, called = self.share.fetch(channel, younger_than=self.interval)
        else:
            fetched, called = channel.fetch(), True
        self._failures = self._failures + 1 if fetched[0] == "failed" else 0
        if self._failures:
            delay = min(self.cap, self.interval * 2 ** self._failures)
            if fresh_for is not None:
                delay = min(delay, max(_FLOOR, fresh_for / 2.0))
        else:
            delay = self.interval
        self._due = now + jittered(delay, self._draw)
        self._last = fetched
        return fetched, called
