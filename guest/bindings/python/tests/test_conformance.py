"""The shared conformance vectors (tests/vectors) through this package and the components.

`admission/`, `planner/` and `factor-choice/` run through the package's public functions (the shipped
`capacity-admission-3.2.0.wasm`); `decision/` runs through the policy world
(`target/policies/capacity-policy-1.0.0.wasm`) with the package's runtime. Every result must
equal `expected` exactly: the Rust host checks the same files (tests/tests/conformance_vectors.rs),
so the three runtimes agree case by case.
"""

from pathlib import Path
from typing import Any, Dict

import pytest

from capacity_admission import (
    Admission,
    AdmissionRequest,
    PlanRequest,
    QueuedBatch,
    WorkspaceLoad,
    plan,
    resolve_budget,
    resolve_budgets,
)
from capacity_admission.runtime import ComponentInstance
from conftest import built
from serde_wit import from_wit, to_wit
from vectors import cases, check, serde


def plan_request(d: Dict[str, Any]) -> PlanRequest:
    return PlanRequest(**{
        **d,
        "workspaces": [WorkspaceLoad(**w) for w in d["workspaces"]],
        "queue": [QueuedBatch(**b) for b in d["queue"]],
    })


ADMISSION = cases("admission")
PLANNER = cases("planner")
DECISION = cases("decision")
FACTOR_CHOICE = cases("factor-choice")


@pytest.mark.parametrize("case", [c for _, c in ADMISSION], ids=[i for i, _ in ADMISSION])
def test_admission_vector(case: Dict[str, Any]) -> None:
    check(case["expected"], serde(resolve_budget(AdmissionRequest(**case["input"]))))


def test_admission_vectors_in_one_batch_call() -> None:
    results = resolve_budgets([AdmissionRequest(**c["input"]) for _, c in ADMISSION])
    check([c["expected"] for _, c in ADMISSION], serde(results))


@pytest.mark.parametrize("case", [c for _, c in PLANNER], ids=[i for i, _ in PLANNER])
def test_planner_vector(case: Dict[str, Any]) -> None:
    check(case["expected"], serde(plan(plan_request(case["input"]))))


@pytest.fixture(scope="module")
def exports_only() -> Admission:
    """The component's own exports for every call (no direct core calls, lowering.py)."""
    return Admission(direct=False)


@pytest.mark.parametrize("case", [c for _, c in ADMISSION], ids=[i for i, _ in ADMISSION])
def test_admission_vector_through_the_components_exports(exports_only: Admission, case: Dict[str, Any]) -> None:
    check(case["expected"], serde(exports_only.resolve_budget(AdmissionRequest(**case["input"]))))


@pytest.mark.parametrize("case", [c for _, c in PLANNER], ids=[i for i, _ in PLANNER])
def test_planner_vector_through_the_components_exports(exports_only: Admission, case: Dict[str, Any]) -> None:
    check(case["expected"], serde(exports_only.plan(plan_request(case["input"]))))


@pytest.fixture(scope="module")
def decide():
    policy = ComponentInstance(str(built("capacity-policy-1.0.0.wasm")))
    return policy.export("capacity:sentinel/decision@3.2.0", "decide")


@pytest.mark.parametrize("case", [c for _, c in DECISION], ids=[i for i, _ in DECISION])
def test_decision_vector(decide, case: Dict[str, Any]) -> None:
    result = decide(to_wit(decide.param_types[0], case["input"]))
    check(case["expected"], from_wit(decide.result_type, result))


def channel_read(serde_form: Any) -> Any:
    """A vector's channel read as `Admission.choose_factor` takes it."""
    if serde_form == "not-read":
        return None
    (tag, text), = serde_form.items()
    return (tag, text)


@pytest.fixture(scope="module")
def admission() -> Admission:
    return Admission()


@pytest.mark.parametrize("case", [c for _, c in FACTOR_CHOICE], ids=[i for i, _ in FACTOR_CHOICE])
def test_factor_choice_vector(admission: Admission, case: Dict[str, Any]) -> None:
    i = case["input"]
    reading = admission.choose_factor(channel_read(i["cache"]), channel_read(i["parameter"]),
                                      now=i["now"], max_age=i["max_age_s"], max_skew=i["max_skew_s"])
    actual = serde(reading)
    actual["reason"] = actual.pop("error")
    check(case["expected"], actual)


def test_vectors_cover_every_outcome() -> None:
    seen = {c["expected"]["outcome"] for _, c in ADMISSION}
    seen |= {w["outcome"] for _, c in PLANNER for w in c["expected"]["waiting"]}
    assert seen >= {"admit", "wait-cluster-full", "wait-service-full", "wait-workspace-full", "wait-capacity-zero"}


def test_shipped_component_is_the_built_one() -> None:
    import hashlib

    from capacity_admission import component_path

    shipped = hashlib.sha256(Path(component_path()).read_bytes()).hexdigest()
    current = hashlib.sha256(built("capacity-admission-3.2.0.wasm").read_bytes()).hexdigest()
    assert shipped == current, "the installed package carries an older build: pip install it again"
