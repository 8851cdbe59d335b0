"""A reader never goes back to an older decision (docs/behaviour.md §9.1, "Never back").

Each published document carries the sentinel's `sequence`, which grows by one per decided
minute. The channels refuse a lower sequence than the one they hold, but SSM has no
compare-and-set (a stale sentinel's late write can land in the moment between another one's
check and write), and a reader that falls back from the cache to the parameter can meet an
older document there. So the reader remembers the newest document it has acted on, and while
that one is fresh (not older than `max_age`) a document with a lower sequence is refused as
superseded: the reader keeps acting on the newest it has. The same holds when neither channel
gives a usable document at all (the cache is down and the parameter throttled): the reader acts
on the newest it has, `source="remembered"`, until that one is stale, and only then runs at full
capacity. Once the newest is stale, the fence lifts (a store that was reset starts again at
sequence 1, and its documents are accepted).

The admission component judges each document (parse, range, age); this fence only screens
what reaches it and is the same rule in reader.js.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Optional, Tuple

from .channels import Fetched
from .types import FactorReading

#: The verdict of a channel whose document was older than one already acted on.
SUPERSEDED = "superseded"
#: The source of a reading that neither channel gave: the newest document acted on, still fresh.
REMEMBERED = "remembered"


#: A document without a whole-number sequence (`1.0`, `"43"`, `true`, none at all).
_UNORDERED = object()


def _sequence(text: str):
    """The document's sequence: an int, `_UNORDERED` when it has none that orders it, or None
    when the text is no JSON object (the component reports that)."""
    try:
        doc = json.loads(text)
    except ValueError:
        return None
    if not isinstance(doc, dict):
        return None
    sequence = doc.get("sequence")
    return sequence if type(sequence) is int else _UNORDERED


class SequenceFence:
    """The newest reading acted on, and the screen it puts in front of the component."""

    def __init__(self, max_age: int) -> None:
        self.max_age = max_age
        self._newest: Optional[FactorReading] = None

    def _in_force(self, now: int) -> Optional[FactorReading]:
        newest = self._newest
        if newest is None or newest.decided_at is None or now - newest.decided_at > self.max_age:
            return None
        return newest

    def fresh_for(self, now: int) -> Optional[int]:
        """How many more seconds the newest document acted on stays fresh; None without one."""
        newest = self._in_force(now)
        return None if newest is None else self.max_age - (now - newest.decided_at)

    def screen(self, fetched: Optional[Fetched], now: int) -> Tuple[Optional[Fetched], bool]:
        """`fetched`, or a failed read when it is older than the newest document in force; and
        whether it was refused."""
        newest = self._in_force(now)
        if fetched is None or newest is None or newest.sequence is None or fetched[0] != "document":
            return fetched, False
        sequence = _sequence(fetched[1])
        if sequence is _UNORDERED:
            # It cannot be ordered against the document in force, so it cannot be shown newer.
            why = (f"superseded: the document's sequence is not a whole number, so it cannot be ordered after "
                   f"sequence {newest.sequence} already read (the sentinel writes whole numbers; the newer decision stands)")
            return ("failed", why), True
        if sequence is None or sequence >= newest.sequence:
            return fetched, False
        why = (f"superseded: sequence {sequence} is older than sequence {newest.sequence} already read "
               "(a late write of a sentinel that lost its lease; the newer decision stands)")
        return ("failed", why), True

    def settle(self, reading: FactorReading, refused: Tuple[bool, bool], now: int) -> FactorReading:
        """The reading to act on: the component's, with refused channels marked superseded; or,
        when the component found nothing usable (the channels failed, or the fence refused what
        they gave), the newest document in force, re-aged, with `source="remembered"`. Remembers
        what is acted on."""
        marks = {name: SUPERSEDED for name, was in zip(("cache", "parameter"), refused) if was}
        if marks:
            reading = dataclasses.replace(reading, **marks)
        newest = self._in_force(now)
        if reading.factor is None and newest is not None:
            return dataclasses.replace(newest, source=REMEMBERED, age_s=now - newest.decided_at, error=reading.error,
                                       cache=reading.cache, parameter=reading.parameter)
        if reading.factor is not None:
            self._newest = reading
        return reading
