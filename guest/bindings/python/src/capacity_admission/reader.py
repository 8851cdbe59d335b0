"""`BulkFactorReader`: what a service reads before admitting bulk work (docs/behaviour.md §9.1).

    reader = BulkFactorReader(cache="redis://cache:6379/0", parameter="ssm:/capacity/state")
    reading = reader.read()          # a FactorReading; never raises for a failed read
    result = resolve_budget(AdmissionRequest(factor=reading.factor, ...))

Each `read()` within `refresh` seconds of the last fetch answers from memory. A fetch reads the
cache; the parameter only when the cache's document is not usable (missing, unreadable, out of
range, stale or from the future); the admission component's `choose-factor` judges what came
back, so Python, Node and Rust agree to the letter. A document older (by sequence) than the newest one acted on is refused while that one is fresh
(`sequence_fence`): the reader never goes back to an older decision. When neither channel gives
a usable document, the reader acts on the newest one it acted on while that one is fresh
(`source="remembered"`); only then does it answer `factor=None`, which admission turns into full
capacity with `factor_read_failed`. The parameter is called at most once per
`parameter_refresh` and backs off after failures (`parameter_pace`), so a fleet of readers
during a cache outage stays within what SSM serves.

Thread-safe: one reader serves a whole process. Concurrent callers share one fetch (the first
fetches, the others wait for its answer; with `refresh=0` every call fetches, one at a time),
each channel keeps one client (a Redis connection pool, a boto3 client), and a network read is
bounded by `timeout` per channel. A file channel is read without a timeout: use a local file. A channel that stops
being usable, acting on the remembered document, and full capacity are logged once when they
start and once when they end (logger `capacity_admission`); `counters()` says how often each
channel gave what.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Callable, Dict, Optional, Tuple

from .admission import Admission
from .channels import Channel, Fetched, open_channel
from .host_share import HostShare
from .parameter_pace import ParameterPace, jittered
from .sequence_fence import REMEMBERED, SequenceFence
from .types import FactorReading

__all__ = ["BulkFactorReader", "ReaderCounters", "DEFAULT_CACHE_KEY", "DEFAULT_MAX_AGE", "DEFAULT_MAX_SKEW",
           "DEFAULT_PARAMETER_REFRESH"]

#: The Redis key the sentinel publishes to unless configured otherwise.
DEFAULT_CACHE_KEY = "capacity:state"
#: A document older than this (seconds) is stale: three missed minute ticks.
DEFAULT_MAX_AGE = 180
#: How far ahead of this host's clock a document's `decided_at` may be (seconds).
DEFAULT_MAX_SKEW = 30
#: How long the parameter's answer is reused (seconds): 1,000 readers call it about 33 times a
#: second, within SSM's 40 for a standard parameter.
DEFAULT_PARAMETER_REFRESH = 30.0

_U32_MAX = 2**32 - 1
_log = logging.getLogger("capacity_admission")


@dataclass
class ReaderCounters:
    """What a reader has done, for a service to export as metrics."""

    #: `read()` calls, and how many of them fetched (the rest answered from memory).
    calls: int = 0
    fetches: int = 0
    #: Reads that ended without a usable document (full capacity).
    full_capacity: int = 0
    #: Fetches answered with the remembered document (neither channel gave a usable one).
    remembered: int = 0
    #: Calls made to the parameter (the rest of its reads reused its last answer).
    parameter_calls: int = 0
    #: Channel reads by channel ("cache", "parameter") and verdict ("usable", "read-failed",
    #: "unreadable", "out-of-range", "stale", "from-the-future", "superseded").
    reads: Dict[Tuple[str, str], int] = field(default_factory=dict)


def _whole(name: str, value: object, low: int) -> int:
    if type(value) is not int or not low <= value <= _U32_MAX:
        raise ValueError(f"{name}: expected a whole number of seconds from {low} to {_U32_MAX}, got {value!r}")
    return value


def _seconds(name: str, value: object, positive: bool) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value or value < 0 or (positive and value == 0):
        raise ValueError(f"{name}: expected {'a positive' if positive else 'a non-negative'} number of seconds, got {value!r}")
    return float(value)


def _part(reason: Optional[str], channel: str) -> str:
    """One channel's part of the component's reason (`cache: ...; parameter: ...`)."""
    for part in (reason or "").split("; parameter: "):
        if channel == "cache" and part.startswith("cache: "):
            return part[len("cache: "):]
        if channel == "parameter" and not part.startswith("cache: "):
            return part[len("parameter: "):] if part.startswith("parameter: ") else part
    return reason or ""


class BulkFactorReader:
    """Reads the published bulk factor from the cache and, when needed, the parameter.

    `cache` and `parameter` each name a channel (`redis://...`, `ssm:NAME` or a file path;
    either may be omitted, not both). `max_age` and `max_skew` bound a usable document's
    `decided_at` (whole seconds); `refresh` is how long an answer is reused (seconds, ±25 % at
    random, 0 = every call fetches); `parameter_refresh` how long the parameter's answer is
    reused (seconds, at most `max_age / 3`; 0 = every fetch that needs it calls it; default 30,
    or `max_age / 3` when that is shorter); `parameter_share` a folder on the host through which
    the service's processes share the parameter's answer, one call per host and
    `parameter_refresh` (`host_share`); `timeout`
    bounds each network read. Bad settings raise ValueError here.
    """

    def __init__(
        self,
        cache: Optional[str] = None,
        parameter: Optional[str] = None,
        *,
        cache_key: str = DEFAULT_CACHE_KEY,
        max_age: int = DEFAULT_MAX_AGE,
        max_skew: int = DEFAULT_MAX_SKEW,
        refresh: float = 10.0,
        parameter_refresh: Optional[float] = None,
        parameter_share: Optional[str] = None,
        timeout: float = 2.0,
        logger: Optional[logging.Logger] = None,
        clock: Callable[[], float] = time.time,
        component: Optional[str] = None,
    ) -> None:
        if cache is None and parameter is None:
            raise ValueError("a BulkFactorReader needs a cache, a parameter or both")
        if not isinstance(cache_key, str) or not cache_key:
            raise ValueError(f"cache_key: expected a non-empty Redis key, got {cache_key!r}")
        self.max_age = _whole("max_age", max_age, 1)
        self.max_skew = _whole("max_skew", max_skew, 0)
        self.refresh = _seconds("refresh", refresh, positive=False)
        # Unset: the default, shortened to a third of a short max_age.
        self.parameter_refresh = (min(DEFAULT_PARAMETER_REFRESH, self.max_age / 3) if parameter_refresh is None
                                  else _seconds("parameter_refresh", parameter_refresh, positive=False))
        if self.parameter_refresh > self.max_age / 3:
            raise ValueError(f"parameter_refresh: expected at most a third of max_age ({self.max_age / 3:g} s), got "
                             f"{parameter_refresh!r}: a document reused longer could go stale before the next call")
        self.timeout = _seconds("timeout", timeout, positive=True)
        if not callable(clock):
            raise ValueError(f"clock: expected a function returning unix seconds, got {clock!r}")
        if logger is not None and not all(callable(getattr(logger, m, None)) for m in ("info", "warning", "error")):
            raise ValueError(f"logger: expected a logging.Logger (info, warning, error), got {logger!r}")
        self._clock = clock
        self._log = logger or _log
        self._closed = False
        self._admission = Admission(component)
        self._fence = SequenceFence(self.max_age)
        share = HostShare(parameter_share, parameter) if parameter_share is not None and parameter is not None else None
        self._pace = ParameterPace(self.parameter_refresh, self.max_age, refresh=self.refresh, share=share)
        self._cache = open_channel(cache, cache_key, self.timeout)
        self._parameter = open_channel(parameter, cache_key, self.timeout)
        self._lock = threading.Lock()
        # (reading, monotonic time until which it is reused), replaced as one value.
        self._memo: Optional[Tuple[FactorReading, float]] = None
        self._counts: Counter = Counter()
        self._counts_lock = threading.Lock()
        # Since when (monotonic) each troubled channel has had no usable document, and since when
        # the reader has acted on its remembered document or run at full capacity: the start and
        # the end of each episode are logged, nothing between.
        self._trouble: Dict[str, float] = {}
        self._episode: Optional[Tuple[float, str]] = None

    def read(self) -> FactorReading:
        """The factor to admit with now; never raises for a failed read (RuntimeError once the
        reader is closed)."""
        if self._closed:
            raise RuntimeError("the BulkFactorReader is closed")
        self._count("calls")
        memo = self._memo
        if memo is not None and time.monotonic() < memo[1]:
            return memo[0]
        with self._lock:
            memo = self._memo
            if memo is not None and time.monotonic() < memo[1]:
                return memo[0]
            reading = self._fetch()
            self._memo = (reading, time.monotonic() + jittered(self.refresh))
            return reading

    def counters(self) -> ReaderCounters:
        """A snapshot of the counters."""
        with self._counts_lock:
            counts = dict(self._counts)
        return ReaderCounters(
            calls=counts.pop("calls", 0),
            fetches=counts.pop("fetches", 0),
            full_capacity=counts.pop("full-capacity", 0),
            remembered=counts.pop("remembered", 0),
            parameter_calls=counts.pop("parameter-calls", 0),
            reads={k: v for k, v in counts.items() if isinstance(k, tuple)},
        )

    def close(self) -> None:
        """Closes the channels' clients, after a fetch in flight."""
        self._closed = True
        with self._lock:
            channels = (self._cache, self._parameter)
        for channel in channels:
            if channel is not None:
                channel.close()

    def __enter__(self) -> "BulkFactorReader":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _count(self, key: object) -> None:
        with self._counts_lock:
            self._counts[key] += 1

    def _fetch(self) -> FactorReading:
        self._count("fetches")
        cache: Optional[Fetched] = self._cache.fetch() if self._cache is not None else None
        # One `now` per fetch: both judgements of the cache's document use the same clock.
        now = int(self._clock())
        cache, cache_refused = self._fence.screen(cache, now)
        reading = self._choose(cache, None, now)
        parameter: Optional[Fetched] = None
        parameter_refused = False
        if reading.factor is None and self._parameter is not None:
            fetched, called = self._pace.fetch(self._parameter, time.monotonic(), self._fence.fresh_for(now))
            if called:
                self._count("parameter-calls")
            parameter, parameter_refused = self._fence.screen(fetched, now)
            reading = self._choose(cache, parameter, now)
        reading = self._fence.settle(reading, (cache_refused, parameter_refused), now)
        for name, channel, fetched, verdict in (
            ("cache", self._cache, cache, reading.cache),
            ("parameter", self._parameter, parameter, reading.parameter),
        ):
            if fetched is not None and channel is not None:
                self._count((name, verdict))
                self._note(name, channel, verdict == "usable", verdict, reading)
        if reading.factor is None:
            self._count("full-capacity")
        elif reading.source == REMEMBERED:
            self._count("remembered")
        self._note_overall(reading)
        return reading

    def _choose(self, cache: Optional[Fetched], parameter: Optional[Fetched], now: int) -> FactorReading:
        return self._admission.choose_factor(cache, parameter, now=now, max_age=self.max_age, max_skew=self.max_skew)

    def _note(self, name: str, channel: Channel, usable: bool, verdict: str, reading: FactorReading) -> None:
        since = self._trouble.get(name)
        if usable and since is not None:
            del self._trouble[name]
            self._log.info("capacity %s %s is usable again after %.0f s", name, channel.label, time.monotonic() - since)
        elif not usable and since is None:
            self._trouble[name] = time.monotonic()
            self._log.warning("capacity %s %s is not usable (%s): %s", name, channel.label, verdict, _part(reading.error, name))

    def _note_overall(self, reading: FactorReading) -> None:
        """Logs the reader's episodes: acting on the remembered document, and full capacity."""
        kind = "full" if reading.factor is None else "remembered" if reading.source == REMEMBERED else None
        was = self._episode
        if was is not None and was[1] == kind:
            return
        self._episode = None
        if kind is None:
            since, what = was if was is not None else (0.0, None)
            if what is not None:
                spent = "at full capacity" if what == "full" else "acting on the remembered document"
                self._log.info("bulk factor read again from the %s after %.0f s %s: %s is %s",
                               reading.source, time.monotonic() - since, spent, reading.state, reading.factor)
            return
        self._episode = (time.monotonic(), kind)
        if kind == "remembered":
            self._log.warning("no usable capacity document: acting on the remembered one (sequence %s, %s, bulk %s, "
                              "decided_at %s) until it is stale at %s (%s)", reading.sequence, reading.state,
                              reading.factor, _rfc3339(reading.decided_at), _rfc3339(reading.decided_at + self.max_age),
                              reading.error)
        else:
            self._log.error("no usable capacity document: admitting bulk work at full capacity until one is "
                            "readable again (%s)", reading.error)


def _rfc3339(unix: Optional[int]) -> str:
    if unix is None:
        return "unknown"
    try:
        return datetime.fromtimestamp(unix, tz=timezone.utc).isoformat().replace("+00:00", "Z")
    except (OverflowError, OSError, ValueError):
        return str(unix)
