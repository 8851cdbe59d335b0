"""The admission component's three functions, in the dataclasses of `types`.

`Admission` owns one instance of the shipped `capacity-admission-<version>.wasm` and the three
cached exports. The module functions `resolve_budget`, `resolve_budgets` and `plan` use one
`Admission` per thread (a wasmtime `Store` is not thread-safe), created on first use.

`resolve_budget` and `plan`, the calls a service makes per job, go through the component's own
core module with the canonical ABI done in Python (`lowering.py`): the same code, without
wasmtime-py's per-field conversion. `Admission(direct=False)` (or a wasmtime-py without the
private calls it uses) takes the component's exports for them too; the tests check that both
ways answer every vector and random request alike.
"""

from __future__ import annotations

import threading
from importlib import resources
from typing import Any, Dict, Iterable, List, Optional, Tuple

import wasmtime
from wasmtime.component import Record, Variant

from . import lowering
from .runtime import ComponentError, ComponentInstance, engine, read_component
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
#: admission-outcome's cases in the WIT's order (the canonical ABI's case index).
_OUTCOME_CASES = (AdmissionOutcome.ADMIT, AdmissionOutcome.WAIT_CLUSTER_FULL, AdmissionOutcome.WAIT_SERVICE_FULL,
                  AdmissionOutcome.WAIT_WORKSPACE_FULL, AdmissionOutcome.WAIT_CAPACITY_ZERO)


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


def _text(name: str, value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name}: expected a str, got {type(value).__name__}")
    return value


def _core_module(path: str) -> Optional[Any]:
    """The component's one core module, compiled once per path and process, or None."""
    with _CORE_LOCK:
        if path not in _CORE:
            core = lowering.core_module(read_component(path))
            _CORE[path] = None if core is None else wasmtime.Module(engine(), core)
        return _CORE[path]


_CORE: Dict[str, Any] = {}
_CORE_LOCK = threading.Lock()


def _plan_in(r: PlanRequest) -> Record:
    text = _text
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

    def __init__(self, path: Optional[str] = None, *, direct: bool = True) -> None:
        self.instance = ComponentInstance(path or component_path())
        self._resolve = self.instance.export(INTERFACE, "resolve-budget")
        self._resolve_many = self.instance.export(INTERFACE, "resolve-budgets")
        self._plan = self.instance.export(INTERFACE, "plan")
        self._choose = self.instance.export(FACTOR_CHOICE, "choose-factor")
        #: The component's core module called directly (`lowering.py`), or None: the
        #: component's exports serve every call.
        self.direct: Optional[lowering.CoreAdmission] = None
        if direct and lowering.available():
            module = _core_module(self.instance.path)
            if module is not None:
                self.direct = lowering.CoreAdmission(engine(), module)

    def resolve_budget(self, request: AdmissionRequest) -> AdmissionResult:
        """How many batches one workspace may start now (docs/behaviour.md §9)."""
        direct = self.direct
        if direct is None:
            return _result_out(self._resolve(_request_in(request)))
        r = request
        counts = (_u32("cluster_batches", r.cluster_batches), _u32("service_batches", r.service_batches),
                  _u32("share", r.share), _u32("cluster_in_flight", r.cluster_in_flight),
                  _u32("service_in_flight", r.service_in_flight), _u32("workspace_in_flight", r.workspace_in_flight))
        try:
            admit, outcome, used, failed, cluster, service, ceiling = direct.resolve_budget(_factor(r.factor), counts)
        except lowering.CoreCallError as e:
            raise ComponentError(f"{self.instance.path}: {e}") from e
        return AdmissionResult(admit=admit, outcome=_OUTCOME_CASES[outcome], factor_used=used, factor_read_failed=failed,
                               cluster_budget=cluster, service_budget=service, workspace_ceiling=ceiling)

    def resolve_budgets(self, requests: Iterable[AdmissionRequest]) -> List[AdmissionResult]:
        """`resolve_budget` for each request, in order, in one call into the component."""
        return [_result_out(r) for r in self._resolve_many([_request_in(r) for r in requests])]

    def plan(self, request: PlanRequest) -> AdmissionPlan:
        """Admits a queue fairly: round robin across workspaces ordered by their oldest waiting
        batch, each within its ceiling, all within the service and cluster room."""
        direct = self.direct
        if direct is None:
            return _plan_out(self._plan(_plan_in(request)))
        r = request
        counts = (_u32("cluster_batches", r.cluster_batches), _u32("service_batches", r.service_batches),
                  _u32("cluster_in_flight", r.cluster_in_flight), _u32("service_in_flight", r.service_in_flight))
        workspaces = [(w.workspace, w.share, w.in_flight) for w in r.workspaces]
        queue = [(b.id, b.workspace, b.enqueued_at) for b in r.queue]
        if not _loads_valid(workspaces, queue):
            # The checks that name the field (a message built for each field costs more than
            # the call: only once a value is known to be wrong).
            for i, w in enumerate(r.workspaces):
                _text(f"workspaces[{i}].workspace", w.workspace)
                _u32(f"workspaces[{i}].share", w.share)
                _u32(f"workspaces[{i}].in_flight", w.in_flight)
            for i, b in enumerate(r.queue):
                _text(f"queue[{i}].id", b.id)
                _text(f"queue[{i}].workspace", b.workspace)
                _s64(f"queue[{i}].enqueued_at", b.enqueued_at)
        try:
            admitted, waiting, used, failed, cluster, service = direct.plan(_factor(r.factor), counts, workspaces, queue)
        except lowering.CoreCallError as e:
            raise ComponentError(f"{self.instance.path}: {e}") from e
        return AdmissionPlan(admitted=admitted, waiting=[WaitingBatch(id=i, outcome=_OUTCOME_CASES[o]) for i, o in waiting],
                             factor_used=used, factor_read_failed=failed, cluster_budget=cluster, service_budget=service)

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


def _loads_valid(workspaces: List[Tuple[Any, Any, Any]], queue: List[Tuple[Any, Any, Any]]) -> bool:
    """Whether every (workspace, share, in-flight) and (id, workspace, enqueued-at) holds what
    `_text`, `_u32` and `_s64` accept."""
    low, high = _S64
    for name, share, in_flight in workspaces:
        if not (isinstance(name, str) and type(share) is int and type(in_flight) is int
                and 0 <= share <= _U32_MAX and 0 <= in_flight <= _U32_MAX):
            return False
    for batch_id, workspace, enqueued_at in queue:
        if not (isinstance(batch_id, str) and isinstance(workspace, str) and type(enqueued_at) is int
                and low <= enqueued_at <= high):
            return False
    return True


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

