"""The admission component's three functions, in the dataclasses of `types`.

`Admission` owns one instance of the shipped `capacity-admission-<version>.wasm` and the three
cached exports. The module functions `resolve_budget`, `resolve_budgets` and `plan` use one
`Admission` per thread (a wasmtime `Store` is not thread-safe), created on first use.
"""

from __future__ import annotations

import threading
from importlib import resources
from typing import Any, Dict, Iterable, List, Optional, Tuple

from wasmtime.component import Record, Variant

from .runtime import ComponentInstance
from .types import (
    AdmissionOutcome,
    AdmissionPlan,
    AdmissionRequest,
    AdmissionResult,
    FactorReading,
    PlanRequest,
    WaitingBatch,
)

#: The version of the admission rules and of the shipped component.
VERSION = "3.2.0"
#: The WIT interface the functions come from.
INTERFACE = f"capacity:sentinel/admission@{VERSION}"
COMPONENT_FILE = f"capacity-admission-{VERSION}.wasm"
#: The interface of `choose-factor` (docs/behaviour.md §9.1).
FACTOR_CHOICE = f"capacity:sentinel/factor-choice@{VERSION}"

_U32_MAX = 2**32 - 1
_S64 = (-(2**63), 2**63 - 1)
_OUTCOMES: Dict[str, AdmissionOutcome] = {o.value: o for o in AdmissionOutcome}


def component_path() -> str:
    """Where the shipped component is (inside the installed package)."""
    return str(resources.files(__package__).joinpath(COMPONENT_FILE))


def _u32(name: str, value: Any) -> int:
    if type(value) is not int:
        raise TypeError(f"{name}: expected an int, got {type(value).__name__}")
    if not 0 <= value <= _U32_MAX:
        raise ValueError(f"{name}: {value} is outside u32 (0 to {_U32_MAX})")
    return value


def _factor(value: Any) -> Optional[float]:
    # None, NaN and out-of-range values go to the component, which falls back to full capacity
    # and reports factor_read_failed; only a value that is no number at all is refused.
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"factor: expected a float or None, got {type(value).__name__}")
    return float(value)


def _record(**fields: Any) -> Record:
    r = Record()
    r.__dict__.update(fields)
    return r


def _request_in(r: AdmissionRequest) -> Record:
    return _record(**{
        "factor": _factor(r.factor),
        "cluster-batches": _u32("cluster_batches", r.cluster_batches),
        "service-batches": _u32("service_batches", r.service_batches),
        "share": _u32("share", r.share),
        "cluster-in-flight": _u32("cluster_in_flight", r.cluster_in_flight),
        "service-in-flight": _u32("service_in_flight", r.service_in_flight),
        "workspace-in-flight": _u32("workspace_in_flight", r.workspace_in_flight),
    })


def _result_out(r: Record) -> AdmissionResult:
    d = r.__dict__
    return AdmissionResult(
        admit=d["admit"],
        outcome=_OUTCOMES[d["outcome"]],
        factor_used=d["factor-used"],
        factor_read_failed=d["factor-read-failed"],
        cluster_budget=d["cluster-budget"],
        service_budget=d["service-budget"],
        workspace_ceiling=d["workspace-ceiling"],
    )


def _plan_in(r: PlanRequest) -> Record:
    def text(name: str, value: Any) -> str:
        if not isinstance(value, str):
            raise TypeError(f"{name}: expected a str, got {type(value).__name__}")
        return value

    return _record(**{
        "factor": _factor(r.factor),
        "cluster-batches": _u32("cluster_batches", r.cluster_batches),
        "service-batches": _u32("service_batches", r.service_batches),
        "cluster-in-flight": _u32("cluster_in_flight", r.cluster_in_flight),
        "service-in-flight": _u32("service_in_flight", r.service_in_flight),
        "workspaces": [
            _record(**{
                "workspace": text(f"workspaces[{i}].workspace", w.workspace),
                "share": _u32(f"workspaces[{i}].share", w.share),
                "in-flight": _u32(f"workspaces[{i}].in_flight", w.in_flight),
            })
            for i, w in enumerate(r.workspaces)
        ],
        "queue": [
            _record(**{
                "id": text(f"queue[{i}].id", b.id),
                "workspace": text(f"queue[{i}].workspace", b.workspace),
                "enqueued-at": _s64(f"queue[{i}].enqueued_at", b.enqueued_at),
            })
            for i, b in enumerate(r.queue)
        ],
    })


def _plan_out(p: Record) -> AdmissionPlan:
    d = p.__dict__
    return AdmissionPlan(
        admitted=list(d["admitted"]),
        waiting=[WaitingBatch(id=w.id, outcome=_OUTCOMES[w.outcome]) for w in d["waiting"]],
        factor_used=d["factor-used"],
        factor_read_failed=d["factor-read-failed"],
        cluster_budget=d["cluster-budget"],
        service_budget=d["service-budget"],
    )


class Admission:
    """One instance of the admission component. Not thread-safe: use one per thread (the
    module functions do). Creating one compiles the component once per process (about 20 ms)
    and instantiates it (well under a millisecond)."""

    def __init__(self, path: Optional[str] = None) -> None:
        self.instance = ComponentInstance(path or component_path())
        self._resolve = self.instance.export(INTERFACE, "resolve-budget")
        self._resolve_many = self.instance.export(INTERFACE, "resolve-budgets")
        self._plan = self.instance.export(INTERFACE, "plan")
        self._choose = self.instance.export(FACTOR_CHOICE, "choose-factor")

    def resolve_budget(self, request: AdmissionRequest) -> AdmissionResult:
        """How many batches one workspace may start now (docs/behaviour.md §9)."""
        return _result_out(self._resolve(_request_in(request)))

    def resolve_budgets(self, requests: Iterable[AdmissionRequest]) -> List[AdmissionResult]:
        """`resolve_budget` for each request, in order, in one call into the component."""
        return [_result_out(r) for r in self._resolve_many([_request_in(r) for r in requests])]

    def plan(self, request: PlanRequest) -> AdmissionPlan:
        """Admits a queue fairly: round robin across workspaces ordered by their oldest waiting
        batch, each within its ceiling, all within the service and cluster room."""
        return _plan_out(self._plan(_plan_in(request)))

    def choose_factor(self, cache: Optional[Tuple[str, str]], parameter: Optional[Tuple[str, str]], *,
                      now: int, max_age: int, max_skew: int) -> FactorReading:
        """The document to act on, from what each channel returned: `("document", text)`,
        `("failed", why)`, or None when the channel is not configured or was not read."""
        request = _record(**{
            "cache": _channel_read(cache),
            "parameter": _channel_read(parameter),
            "now": _s64("now", now),
            "max-age-s": _u32("max_age", max_age),
            "max-skew-s": _u32("max_skew", max_skew),
        })
        c = self._choose(request).__dict__
        return FactorReading(
            factor=c["factor"], source=c["source"], state=c["state"], sequence=c["sequence"],
            decided_at=c["decided-at"], age_s=c["age-s"], error=c["reason"],
            cache=c["cache"], parameter=c["parameter"])


def _channel_read(read: Optional[Tuple[str, str]]) -> Variant:
    if read is None:
        return Variant("not-read")
    tag, text = read
    if tag not in ("document", "failed") or not isinstance(text, str):
        raise ValueError(f"a channel read is ('document', text) or ('failed', why), not {read!r}")
    return Variant(tag, text)


def _s64(name: str, value: Any) -> int:
    if type(value) is not int or not _S64[0] <= value <= _S64[1]:
        raise ValueError(f"{name}: expected an int in s64 (unix seconds), got {value!r}")
    return value


_local = threading.local()


def default() -> Admission:
    """This thread's `Admission` over the shipped component."""
    found = getattr(_local, "admission", None)
    if found is None:
        found = _local.admission = Admission()
    return found


def resolve_budget(request: AdmissionRequest) -> AdmissionResult:
    """How many batches one workspace may start now.

    >>> r = resolve_budget(AdmissionRequest(factor=0.5, cluster_batches=10, service_batches=6,
    ...                                     share=3, cluster_in_flight=1, service_in_flight=1))
    >>> (r.admit, r.outcome.value, r.service_budget, r.workspace_ceiling)
    (2, 'admit', 3, 2)
    """
    return default().resolve_budget(request)


def resolve_budgets(requests: Iterable[AdmissionRequest]) -> List[AdmissionResult]:
    """Many workspaces' budgets in one call (the requests are independent)."""
    return default().resolve_budgets(requests)


def plan(request: PlanRequest) -> AdmissionPlan:
    """The batches of a queue to start now, and why the others wait."""
    return default().plan(request)

