"""Job admission for services in Python, computed by the capacity sentinel's own component.

The math of docs/behaviour.md §9 exists once, in the Rust guest; this package ships its build
(`capacity-admission-1.0.0.wasm`, the `admission-only` world, which imports nothing) and runs
it with wasmtime-py's component API:

    from capacity_admission import AdmissionRequest, read_bulk_factor, resolve_budget

    reading = read_bulk_factor("redis://cache:6379/0")       # or a file path, or ssm:/name
    result = resolve_budget(AdmissionRequest(
        factor=reading.factor, cluster_batches=40, service_batches=12, share=4,
        cluster_in_flight=9, service_in_flight=3, workspace_in_flight=1))
    if result.admit:
        ...  # start result.admit batches

`resolve_budgets([...])` answers many workspaces in one call; `plan(PlanRequest(...))` admits a
queue fairly. A failed read gives `factor=None`: the component then uses full capacity and
says so (`result.factor_read_failed`), and `reading.error` says why.
"""

from .admission import (
    COMPONENT_FILE,
    INTERFACE,
    VERSION,
    Admission,
    component_path,
    plan,
    resolve_budget,
    resolve_budgets,
)
from .runtime import ComponentError
from .state import FactorReading, read_bulk_factor
from .types import (
    AdmissionOutcome,
    AdmissionPlan,
    AdmissionRequest,
    AdmissionResult,
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
    "COMPONENT_FILE",
    "ComponentError",
    "FactorReading",
    "INTERFACE",
    "PlanRequest",
    "QueuedBatch",
    "VERSION",
    "WaitingBatch",
    "WorkspaceLoad",
    "component_path",
    "plan",
    "read_bulk_factor",
    "resolve_budget",
    "resolve_budgets",
]
