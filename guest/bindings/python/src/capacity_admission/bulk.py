"""`BulkAdmission`: configure once per service, then `admit` (docs/behaviour.md §9).

    admission = BulkAdmission(
        reader=BulkFactorReader(cache="redis://cache:6379/0", parameter="ssm:/capacity/state"),
        cluster_batches=40, service_batches=12,
        profiles=WorkspaceProfiles("postgresql://svc@db/app", table="tenant_workload_policies"))
    result = admission.admit("acme", cluster_in_flight=9, service_in_flight=3, workspace_in_flight=1)
    if result.admit:
        ...  # start result.admit batches

Each call reads the factor (`reader.read().factor`, None when no published document is usable)
and the workspaces' shares (`profiles.share(workspace)`) and hands them to the admission
component's `resolve-budget` or `plan`: the math is the component's alone. The reader and the
profiles answer from memory between their refreshes, so a call costs one component call.
"""

from __future__ import annotations

from typing import Any, Dict, Iterable, List, Mapping, Optional

from . import admission as _admission
from .admission import _s64, _u32
from .types import AdmissionPlan, AdmissionRequest, AdmissionResult, PlanRequest, QueuedBatch, WorkspaceLoad

__all__ = ["BulkAdmission"]

_U32_MAX = 2**32 - 1


def _budget(key: str, value: Any) -> int:
    if type(value) is not int or not 1 <= value <= _U32_MAX:
        raise ValueError(f"{key}: expected a whole number of batches from 1 to {_U32_MAX}, got {value!r}")
    return value


def _has(value: Any, method: str) -> bool:
    return callable(getattr(value, method, None))


class BulkAdmission:
    """One service's admission: the factor reader, its budgets and the workspace profiles.

    `reader` is a `BulkFactorReader` (anything with `read()` giving a `FactorReading`);
    `cluster_batches` and `service_batches` are the batch budgets at full capacity (whole
    numbers >= 1); `profiles` is a `WorkspaceProfiles` (anything with `share(workspace)`).
    `admission` is an `Admission` to call; by default each thread uses its own (the module
    functions'), so one `BulkAdmission` serves a whole process; pass one only for a single
    thread. Bad settings raise ValueError here, naming the key; an unknown key is a TypeError.
    """

    def __init__(self, *, reader: Any, cluster_batches: int, service_batches: int, profiles: Any,
                 admission: Optional[_admission.Admission] = None) -> None:
        if not _has(reader, "read"):
            raise ValueError(f"reader: expected a BulkFactorReader (with read()), got {type(reader).__name__}")
        if not _has(profiles, "share"):
            raise ValueError(f"profiles: expected a WorkspaceProfiles (with share(workspace)), got "
                             f"{type(profiles).__name__}")
        if admission is not None and not (_has(admission, "resolve_budget") and _has(admission, "plan")):
            raise ValueError(f"admission: expected an Admission, got {type(admission).__name__}")
        self.reader = reader
        self.profiles = profiles
        self.cluster_batches = _budget("cluster_batches", cluster_batches)
        self.service_batches = _budget("service_batches", service_batches)
        self._admission = admission

    def admit(self, workspace: str, *, cluster_in_flight: int = 0, service_in_flight: int = 0,
              workspace_in_flight: int = 0) -> AdmissionResult:
        """How many batches `workspace` may start now, given the batches running now in the
        cluster, this service and the workspace."""
        _text("workspace", workspace)
        counts = {"cluster_in_flight": cluster_in_flight, "service_in_flight": service_in_flight,
                  "workspace_in_flight": workspace_in_flight}
        for name, value in counts.items():  # refused before any read
            _u32(name, value)
        request = AdmissionRequest(factor=self._factor(), cluster_batches=self.cluster_batches,
                                   service_batches=self.service_batches, share=self.profiles.share(workspace),
                                   **counts)
        if self._admission is not None:
            return self._admission.resolve_budget(request)
        return _admission.resolve_budget(request)

    def plan(self, queue: Iterable[QueuedBatch], *, cluster_in_flight: int = 0, service_in_flight: int = 0,
             workspace_in_flight: Optional[Mapping[str, int]] = None) -> AdmissionPlan:
        """The batches of `queue` to start now, admitted fairly across its workspaces, and why
        the others wait. `workspace_in_flight` maps a workspace to its batches running now (0
        when absent; workspaces not in the queue are ignored)."""
        batches = list(queue)
        running = {} if workspace_in_flight is None else workspace_in_flight
        if not isinstance(running, Mapping):
            raise TypeError(f"workspace_in_flight: expected a mapping of workspace to count, got "
                            f"{type(running).__name__}")
        _u32("cluster_in_flight", cluster_in_flight)
        _u32("service_in_flight", service_in_flight)
        workspaces: Dict[str, int] = {}
        for i, batch in enumerate(batches):  # refused before any read
            if not all(hasattr(batch, field) for field in ("id", "workspace", "enqueued_at")):
                raise TypeError(f"queue[{i}]: expected a QueuedBatch(id, workspace, enqueued_at) (from capacity_admission "
                                f"import QueuedBatch; enqueued_at in unix seconds), got {type(batch).__name__}")
            _text(f"queue[{i}].id", getattr(batch, "id", None))
            _s64(f"queue[{i}].enqueued_at", getattr(batch, "enqueued_at", None))
            name = _text(f"queue[{i}].workspace", getattr(batch, "workspace", None))
            if name not in workspaces:
                workspaces[name] = _u32(f"workspace_in_flight[{name!r}]", running.get(name, 0))
        loads: List[WorkspaceLoad] = [WorkspaceLoad(workspace=w, share=self.profiles.share(w), in_flight=n)
                                      for w, n in workspaces.items()]
        request = PlanRequest(factor=self._factor(), cluster_batches=self.cluster_batches,
                              service_batches=self.service_batches, cluster_in_flight=cluster_in_flight,
                              service_in_flight=service_in_flight, workspaces=loads, queue=batches)
        if self._admission is not None:
            return self._admission.plan(request)
        return _admission.plan(request)

    def close(self) -> None:
        """Closes the reader and the profiles."""
        for part in (self.reader, self.profiles):
            if _has(part, "close"):
                part.close()

    def __enter__(self) -> "BulkAdmission":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _factor(self) -> Optional[float]:
        return self.reader.read().factor


def _text(name: str, value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name}: expected a str, got {type(value).__name__}")
    return value
