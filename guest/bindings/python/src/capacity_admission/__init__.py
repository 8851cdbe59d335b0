"""Job admission for services in Python, computed by the capacity sentinel's own component.

The math of docs/behaviour.md §9 exists once, in the Rust guest; this package ships its build
(`capacity-admission-3.2.0.wasm`, the `admission-only` world, which imports nothing) and runs
it with wasmtime-py's component API. Configure once per service, then admit:

    from capacity_admission import BulkAdmission, BulkFactorReader, WorkspaceProfiles

    admission = BulkAdmission(
        reader=BulkFactorReader(cache="redis://cache:6379/0", parameter="ssm:/capacity/state"),
        cluster_batches=40, service_batches=12,
        profiles=WorkspaceProfiles("postgresql://svc@db/app", table="tenant_workload_policies"))
    result = admission.admit("acme", cluster_in_flight=9, service_in_flight=3, workspace_in_flight=1)
    if result.admit:
        ...  # start result.admit batches

`admission.plan(queue, ...)` admits a whole queue fairly. Underneath: `resolve_budget`,
`resolve_budgets` and `plan` take the factor and shares as plain values. No usable document
(both channels failed, stale or unreadable) gives `factor=None`: the component then uses full
capacity and says so (`result.factor_read_failed`), and the reader's `reading.error` says why
(docs/behaviour.md §9.1).
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
from .bulk import BulkAdmission
from .profiles import DEFAULT_TABLE, ProfileCounters, WorkspaceProfiles
from .runtime import ComponentError
from .reader import (
    DEFAULT_CACHE_KEY,
    DEFAULT_MAX_AGE,
    DEFAULT_MAX_SKEW,
    DEFAULT_PARAMETER_REFRESH,
    BulkFactorReader,
    ReaderCounters,
)
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
    "BulkAdmission",
    "BulkFactorReader",
    "COMPONENT_FILE",
    "ComponentError",
    "DEFAULT_CACHE_KEY",
    "DEFAULT_MAX_AGE",
    "DEFAULT_MAX_SKEW",
    "DEFAULT_PARAMETER_REFRESH",
    "DEFAULT_TABLE",
    "FACTOR_CHOICE",
    "FactorReading",
    "INTERFACE",
    "PlanRequest",
    "ProfileCounters",
    "QueuedBatch",
    "ReaderCounters",
    "VERSION",
    "WaitingBatch",
    "WorkspaceLoad",
    "WorkspaceProfiles",
    "component_path",
    "plan",
    "resolve_budget",
    "resolve_budgets",
]
