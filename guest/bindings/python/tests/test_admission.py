"""The package's own behaviour: docs/behaviour.md §9 through the typed API, input checks, the batch
export, the cached call path, threads and recovery."""

import threading

import pytest

import capacity_admission as ca
from capacity_admission import (
    Admission,
    AdmissionOutcome,
    AdmissionRequest,
    PlanRequest,
    QueuedBatch,
    WorkspaceLoad,
    plan,
    resolve_budget,
    resolve_budgets,
)


def request(**overrides):
    base = dict(factor=1.0, cluster_batches=10, service_batches=6, share=3)
    return AdmissionRequest(**{**base, **overrides})


def test_half_factor_halves_the_budgets_and_keeps_a_workspace_below_the_service():
    r = resolve_budget(request(factor=0.5, cluster_in_flight=1, service_in_flight=1))
    assert (r.cluster_budget, r.service_budget, r.workspace_ceiling) == (5, 3, 2)
    assert (r.admit, r.outcome) == (2, AdmissionOutcome.ADMIT)
    assert r.outcome.value == "admit" and not r.factor_read_failed


def test_absent_factor_uses_full_capacity_and_reports_the_failed_read():
    r = resolve_budget(request(factor=None))
    assert r.factor_read_failed and r.factor_used == 1.0 and r.admit == 3


@pytest.mark.parametrize("factor", [float("nan"), float("inf"), -0.1, 1.5])
def test_invalid_factor_is_a_failed_read_not_an_error(factor):
    r = resolve_budget(request(factor=factor))
    assert r.factor_read_failed and r.factor_used == 1.0


def test_zero_factor_is_a_wait_not_an_error():
    r = resolve_budget(request(factor=0.0))
    assert (r.admit, r.outcome, r.factor_read_failed) == (0, AdmissionOutcome.WAIT_CAPACITY_ZERO, False)


def test_an_int_factor_is_accepted():
    assert resolve_budget(request(factor=1)).factor_used == 1.0


@pytest.mark.parametrize("field,value,error", [
    ("share", -1, ValueError),
    ("share", 2**32, ValueError),
    ("cluster_batches", 1.5, TypeError),
    ("service_in_flight", True, TypeError),
    ("factor", "0.5", TypeError),
])
def test_a_count_outside_u32_is_refused_before_the_call(field, value, error):
    with pytest.raises(error, match=field.split("_")[0]):
        resolve_budget(request(**{field: value}))


def test_batch_equals_one_call_per_request_in_order():
    requests = [request(factor=f / 10, workspace_in_flight=w) for f in range(11) for w in range(4)]
    assert resolve_budgets(requests) == [resolve_budget(r) for r in requests]
    assert resolve_budgets([]) == []
    assert resolve_budgets(iter(requests[:3])) == [resolve_budget(r) for r in requests[:3]]


def test_plan_admits_round_robin_and_says_why_the_rest_wait():
    p = plan(PlanRequest(
        factor=1.0, cluster_batches=20, service_batches=3,
        workspaces=[WorkspaceLoad("acme", 5), WorkspaceLoad("beta", 5)],
        queue=[QueuedBatch("a1", "acme", 100), QueuedBatch("a2", "acme", 101), QueuedBatch("a3", "acme", 102),
               QueuedBatch("b1", "beta", 105), QueuedBatch("x1", "nobody", 50)],
    ))
    assert p.admitted == ["a1", "b1", "a2"]
    assert [(w.id, w.outcome) for w in p.waiting] == [
        ("a3", AdmissionOutcome.WAIT_SERVICE_FULL), ("x1", AdmissionOutcome.WAIT_SERVICE_FULL)]


def test_plan_refuses_a_non_integer_instant():
    with pytest.raises(ValueError, match=r"queue\[0\].enqueued_at"):
        plan(PlanRequest(factor=1.0, cluster_batches=2, service_batches=2, queue=[QueuedBatch("a", "w", 1.5)]))


@pytest.mark.parametrize("workspaces,queue,error,field", [
    ([WorkspaceLoad("w", -1, 0)], [], ValueError, r"workspaces\[0\].share"),
    ([WorkspaceLoad("w", 1, 0), WorkspaceLoad("v", 1, 2**32)], [], ValueError, r"workspaces\[1\].in_flight"),
    ([WorkspaceLoad(7, 1, 0)], [], TypeError, r"workspaces\[0\].workspace"),
    ([], [QueuedBatch("a", "w", 1), QueuedBatch(3, "w", 1)], TypeError, r"queue\[1\].id"),
    ([], [QueuedBatch("a", None, 1)], TypeError, r"queue\[0\].workspace"),
    ([], [QueuedBatch("a", "w", 2**63)], ValueError, r"queue\[0\].enqueued_at"),
])
def test_plan_refuses_a_bad_value_naming_its_field_on_both_paths(workspaces, queue, error, field):
    request = PlanRequest(factor=1.0, cluster_batches=2, service_batches=2, workspaces=workspaces, queue=queue)
    for admission in (Admission(), Admission(direct=False)):
        with pytest.raises(error, match=field):
            admission.plan(request)


def test_the_fast_path_is_in_use_and_agrees_with_the_dynamic_one():
    a = Admission()
    assert a._resolve.cached, "wasmtime-py's type classes changed shape: the cached path is off"
    raw = ca.admission._request_in(request(factor=0.3, share=2))
    assert vars(a._resolve(raw)) == vars(a._resolve.call_dynamic(raw))


def test_each_thread_gets_its_own_instance():
    seen, errors = [], []

    def work():
        try:
            # The instance itself: an id alone could be reused once a finished thread's
            # instance is freed.
            seen.append(ca.admission.default())
            for f in range(50):
                assert resolve_budget(request(factor=f / 50)).factor_used == f / 50
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len({id(a) for a in seen}) == 4


def test_a_trap_discards_the_instance_and_the_next_call_rebinds_to_a_fresh_one(monkeypatch):
    import wasmtime

    a = Admission(direct=False)
    first = a.instance._state
    export = a._resolve

    def trap(store, args):
        raise wasmtime.WasmtimeError("wasm trap: unreachable")

    monkeypatch.setattr(export, "_call_cached", trap)
    with pytest.raises(ca.ComponentError, match="resolve-budget failed"):
        a.resolve_budget(request())
    assert a.instance._state is None
    monkeypatch.undo()
    assert a.resolve_budget(request()).admit == 3
    assert a.instance._state is not first and export._generation == a.instance._generation


def test_a_missing_component_is_a_clear_error(tmp_path):
    with pytest.raises(ca.ComponentError, match="loading component"):
        Admission(str(tmp_path / "absent.wasm"))


def test_the_component_imports_nothing_and_exports_admission():
    assert Admission().instance.exports() == [
        "capacity:sentinel/admission-types@3.2.0", "capacity:sentinel/admission@3.2.0",
        "capacity:sentinel/factor-choice@3.2.0"]


def random_request(rng):
    factor = rng.choice([None, float("nan"), float("inf"), -0.0, 0.0, 1.0, 1.5, -0.2, rng.random(), rng.random()])
    count = lambda: rng.choice([0, 1, rng.randrange(50), rng.randrange(2**32), 2**32 - 1])  # noqa: E731
    return AdmissionRequest(factor=factor, cluster_batches=count(), service_batches=count(), share=count(),
                            cluster_in_flight=count(), service_in_flight=count(), workspace_in_flight=count())


def random_plan(rng):
    names = ["acme", "globex", "", "ünïcødé-ẅ", "x" * 300, "acme"]
    workspaces = [WorkspaceLoad(rng.choice(names), rng.randrange(6), rng.randrange(4)) for _ in range(rng.randrange(5))]
    queue = [QueuedBatch(rng.choice(["job-%d" % i, "", "bätch-%d" % i]), rng.choice(names),
                         rng.choice([0, -1, 2**63 - 1, -(2**63), 1796432870 + rng.randrange(100)]))
             for i in range(rng.randrange(30))]
    return PlanRequest(factor=rng.choice([None, 0.0, 0.5, 1.0, float("nan"), rng.random()]),
                       cluster_batches=rng.randrange(60), service_batches=rng.randrange(30),
                       cluster_in_flight=rng.randrange(10), service_in_flight=rng.randrange(10),
                       workspaces=workspaces, queue=queue)


def same(a, b):
    """Equal, NaN equal to NaN (a failed read reports the factor it was given)."""
    import dataclasses
    import math
    da, db = dataclasses.asdict(a), dataclasses.asdict(b)
    nan = [k for k, v in da.items() if isinstance(v, float) and math.isnan(v)]
    return all(math.isnan(db[k]) for k in nan) and {k: v for k, v in da.items() if k not in nan} == {
        k: v for k, v in db.items() if k not in nan}


def test_the_direct_calls_answer_every_random_request_as_the_components_exports_do():
    import random

    direct, exports = Admission(), Admission(direct=False)
    assert direct.direct is not None, "the direct calls are off: lowering.available() or core_module() said no"
    rng = random.Random(49)
    for _ in range(2000):
        r = random_request(rng)
        assert same(direct.resolve_budget(r), exports.resolve_budget(r)), r
    for _ in range(300):
        p = random_plan(rng)
        assert direct.plan(p) == exports.plan(p), p


def test_a_plan_larger_than_the_scratch_area_grows_it_and_answers_as_the_exports_do():
    from capacity_admission import lowering

    direct, exports = Admission(), Admission(direct=False)
    workspaces = [WorkspaceLoad("w%03d-%s" % (i, "ü" * 40), 1 + i % 5, i % 3) for i in range(60)]
    queue = [QueuedBatch("batch-%04d-%s" % (i, "x" * 60), workspaces[i % 60].workspace, 1796432870 - i)
             for i in range(400)]
    p = PlanRequest(factor=0.7, cluster_batches=300, service_batches=200, cluster_in_flight=3, service_in_flight=1,
                    workspaces=workspaces, queue=queue)
    answer = direct.plan(p)
    assert direct.direct._scratch_size > lowering.SCRATCH_BYTES, "the values fitted: the test proves nothing"
    assert answer == exports.plan(p)
    assert len(answer.admitted) > 0 and len(answer.admitted) + len(answer.waiting) == 400
    small = random_plan(__import__("random").Random(7))
    assert direct.plan(small) == exports.plan(small), "a small plan after the growth"


def test_a_trap_in_a_direct_call_discards_the_core_instance_and_the_next_call_gets_a_fresh_one():
    from capacity_admission import lowering

    a = Admission()
    a.resolve_budget(request())
    first = a.direct._store
    # An allocation wasm32 memory cannot hold: the guest's allocator aborts (a real trap).
    with pytest.raises(lowering.CoreCallError, match="cabi_realloc trapped"):
        a.direct._scratch(2**32 - 16)
    assert a.direct._store is None
    assert a.resolve_budget(request()).admit == 3
    assert a.direct._store is not None and a.direct._store is not first


def test_without_the_private_calls_every_call_takes_the_components_exports(monkeypatch):
    from capacity_admission import lowering

    monkeypatch.setattr(lowering, "available", lambda: False)
    a = Admission()
    assert a.direct is None
    assert a.resolve_budget(request(factor=0.5)).service_budget == 3


def test_only_a_component_with_one_core_module_is_called_directly():
    from capacity_admission import lowering
    from capacity_admission.admission import component_path

    with open(component_path(), "rb") as f:
        component = f.read()
    core = lowering.core_module(component)
    assert core is not None and core.startswith(b"\x00asm\x01\x00\x00\x00")
    assert lowering.core_module(core) is None, "a core module is no component"
    section = bytes([1, len(b"\x00asm\x01\x00\x00\x00")]) + b"\x00asm\x01\x00\x00\x00"
    assert lowering.core_module(component + section) is None, "two core modules: not called directly"
