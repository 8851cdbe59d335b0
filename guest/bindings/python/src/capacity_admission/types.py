"""The admission records of `wit/admission-types.wit`, as frozen dataclasses.

Field names are the WIT names in snake case; enum values are the WIT case names (kebab case),
so `AdmissionOutcome.WAIT_CLUSTER_FULL.value == "wait-cluster-full"`. Counts are u32 in the
WIT: the conversion refuses a negative, fractional or too large count with `ValueError` or
`TypeError` before the component is called (nothing wraps around silently).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from datetime import datetime, timezone
from enum import Enum
from typing import List, Optional


class AdmissionOutcome(str, Enum):
    """Admit, or the first limit that is full (cluster, service, workspace), or no capacity."""

    ADMIT = "admit"
    WAIT_CLUSTER_FULL = "wait-cluster-full"
    WAIT_SERVICE_FULL = "wait-service-full"
    WAIT_WORKSPACE_FULL = "wait-workspace-full"
    #: The bulk factor is 0: admit nothing (a wait, not an error).
    WAIT_CAPACITY_ZERO = "wait-capacity-zero"


@dataclass(frozen=True)
class AdmissionRequest:
    """What one service asks before admitting bulk work (docs/behaviour.md §9)."""

    #: The published bulk factor; None when it could not be read (the component then uses
    #: full capacity and reports `factor_read_failed`). NaN or a value outside [0, 1] is
    #: treated the same way.
    factor: Optional[float]
    cluster_batches: int
    service_batches: int
    #: The workspace profile's share.
    share: int
    cluster_in_flight: int = 0
    service_in_flight: int = 0
    workspace_in_flight: int = 0


@dataclass(frozen=True)
class AdmissionResult:
    """How many batches one workspace may start now, and the budgets behind the answer."""

    #: Batches that may start now (0 when waiting).
    admit: int
    outcome: AdmissionOutcome
    #: The factor the budgets were computed with.
    factor_used: float
    #: The factor was absent or invalid and full capacity was used.
    factor_read_failed: bool
    cluster_budget: int
    service_budget: int
    workspace_ceiling: int


@dataclass(frozen=True)
class QueuedBatch:
    """One waiting batch. `enqueued_at` is seconds since the Unix epoch (s64)."""

    id: str
    workspace: str
    enqueued_at: int


@dataclass(frozen=True)
class WorkspaceLoad:
    """One workspace's profile and load. A queued workspace without one admits nothing."""

    workspace: str
    share: int
    in_flight: int = 0


@dataclass(frozen=True)
class PlanRequest:
    """A queue of waiting batches across workspaces, to admit fairly."""

    factor: Optional[float]
    cluster_batches: int
    service_batches: int
    cluster_in_flight: int = 0
    service_in_flight: int = 0
    workspaces: List[WorkspaceLoad] = field(default_factory=list)
    queue: List[QueuedBatch] = field(default_factory=list)


@dataclass(frozen=True)
class WaitingBatch:
    """A batch left waiting and the limit that holds it."""

    id: str
    outcome: AdmissionOutcome


@dataclass(frozen=True)
class AdmissionPlan:
    """The planner's answer: which batches start, which wait and why."""

    #: Batch ids to start, in admission order.
    admitted: List[str]
    #: Every other queued batch, in queue order.
    waiting: List[WaitingBatch]
    factor_used: float
    factor_read_failed: bool
    cluster_budget: int
    service_budget: int


@dataclass(frozen=True)
class FactorReading:
    """Which published document a service acts on (docs/behaviour.md §9.1): the component's
    `choose-factor` answer for one read of the channels."""

    #: The bulk factor to admit with; None when no document was usable (pass it on: the
    #: component then uses full capacity and reports `factor_read_failed`).
    factor: Optional[float]
    #: "cache" or "parameter": the channel the factor came from; from a BulkFactorReader also
    #: "remembered" (neither channel gave a usable document, and the newest one it acted on is
    #: still fresh: that one, re-aged); None without a factor.
    source: Optional[str]
    #: The chosen document's `state` and `sequence`, its `decided_at` (unix seconds) and age
    #: in seconds when it was read (negative when the sentinel's clock is ahead, within the
    #: allowance).
    state: Optional[str]
    sequence: Optional[int]
    decided_at: Optional[int]
    age_s: Optional[int]
    #: Why a read channel was not used (`cache: ...; parameter: ...`); None when all is well.
    error: Optional[str]
    #: What each channel's read was worth: not-read, usable, read-failed, unreadable,
    #: out-of-range, stale, from-the-future; and, from a BulkFactorReader, superseded (a
    #: lower sequence than a fresh document it already acted on).
    cache: str = "not-read"
    parameter: str = "not-read"

    @property
    def failed(self) -> bool:
        """No usable document: admission runs at full capacity."""
        return self.factor is None

    @property
    def decided_at_time(self) -> Optional[datetime]:
        """`decided_at` as an aware datetime in UTC; None without a document (or for an instant
        Python's datetime cannot hold)."""
        if self.decided_at is None:
            return None
        try:
            return datetime.fromtimestamp(self.decided_at, tz=timezone.utc)
        except (OverflowError, OSError, ValueError):
            return None

    def __repr__(self) -> str:
        # People read times as RFC 3339: decided_at is shown so, its unix seconds beside it.
        def shown(name: str) -> str:
            value = getattr(self, name)
            when = self.decided_at_time if name == "decided_at" else None
            if when is not None:
                return f"{name}={when.isoformat().replace('+00:00', 'Z')} ({value})"
            return f"{name}={value!r}"
        return f"FactorReading({', '.join(shown(f.name) for f in fields(self))})"
