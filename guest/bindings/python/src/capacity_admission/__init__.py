"""Job admission for services in Python, computed by the capacity sentinel's own component.

The math of docs/behaviour.md §9 exists once, in the Rust guest; this package ships its build
(`capacity-admission-3.1.0.wasm`, the `admission-only` world, which imports nothing) and runs
it with wasmtime-py's component API:

    from capacity_admission import AdmissionRequest, BulkFactorReader, resolve_budget

    reader = BulkFactorReader(cache="redis://cache:6379/0", parameter="ssm:/capacity/state")
    reading = reader.read()      # one reader per process: cached, shared, thread-safe
    result = resolve_budget(AdmissionRequest(
        factor=reading.factor, cluster_batches=40, service_batches=12, share=4,
        cluster_in_flight=9, service_in_flight=3, workspace_in_flight=1))
    if result.admit:
        ...  # start result.admit batches

`resolve_budgets([...])` answers many workspaces in one call; `plan(PlanRequest(...))` admits a
queue fairly. No usable document (both channels failed, stale or unreadable) gives
`factor=None`: the component then uses full capacity and says so
(`result.factor_read_failed`), and `reading.error` says why (docs/behaviour.md §9.1).
"""

from .admission import (
    COMPONENT_FILE,
    FACTOR_CHOICE,
    INTERFACE,
    VERSION,
    Admission,
    component_path,
    plan,
    resolve_budget,
    resolve_budgets,
)
from .runtime import ComponentError
from .reader import DEFAULT_CACHE_KEY, DEFAULT_MAX_AGE, DEFAULT_MAX_SKEW, BulkFactorReader, ReaderCounters
from .types import (
    AdmissionOutcome,
    AdmissionPlan,
    AdmissionRequest,
    AdmissionResult,
    FactorReading,
    PlanRequest,
    QueuedBatch,
    WaitingBatch,
    WorkspaceLoad,
)

__version__ = VERSION

__all__ = [
    "Admission",
    "AdmissionOutcome",
    "AdmissionPlan",
    "AdmissionRequest",
    "AdmissionResult",
    "BulkFactorReader",
    "COMPONENT_FILE",
    "ComponentError",
    "DEFAULT_CACHE_KEY",
    "DEFAULT_MAX_AGE",
    "DEFAULT_MAX_SKEW",
    "FACTOR_CHOICE",
    "FactorReading",
    "INTERFACE",
    "PlanRequest",
    "QueuedBatch",
    "ReaderCounters",
    "VERSION",
    "WaitingBatch",
    "WorkspaceLoad",
    "component_path",
    "plan",
    "resolve_budget",
    "resolve_budgets",
]
