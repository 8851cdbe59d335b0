"""Per-call cost of resolve_budget through the component, next to plain Python doing the same
math (docs/behaviour.md §9), as a ratio.

    python guest/bindings/python/bench.py [--calls N]

Paths measured (each the best of 5 rounds of N calls; a "call" of the batch is one request):
  plain Python        the reimplementation below, on the package's dataclasses
  package (direct)    capacity_admission.resolve_budget: the component's core module with the
                      canonical ABI done in Python (lowering.py), dataclass in and out
  package (exports)   the same through the component's exports: dataclass -> Record ->
                      wasmtime-py's component call -> dataclass (`Admission(direct=False)`)
  export (cached)     the cached export alone, on a prepared Record (no dataclass conversion)
  export (dynamic)    wasmtime-py looking up the function and its types on every call
  batch of 100        resolve_budgets over 100 requests, cost per request
  reader (cached)     BulkFactorReader.read() answered from memory (a file channel, refresh 60 s)
  reader (fetch)      BulkFactorReader.read() with refresh 0: read the file, choose-factor
The plain version is checked against the component on tests/vectors/admission first. Then the
median of 10,000 single calls of `resolve_budget` and of `plan` (10 queued batches, 3 workspaces),
both ways.
"""

import argparse
import json
import math
import tempfile
import time
from pathlib import Path

import capacity_admission as ca
from capacity_admission import AdmissionOutcome, AdmissionRequest, AdmissionResult, PlanRequest, QueuedBatch, WorkspaceLoad


def plain_resolve_budget(r: AdmissionRequest) -> AdmissionResult:
    """docs/behaviour.md §9 in plain Python (for comparison only: services use the component)."""
    f, failed = r.factor, False
    if f is None or not math.isfinite(f) or not 0.0 <= f <= 1.0:
        f, failed = 1.0, True
    if f <= 0.0:
        cluster = service = ceiling = 0
    else:
        cluster = max(1, math.floor(r.cluster_batches * f))
        service = min(cluster, max(1, math.floor(r.service_batches * f)))
        ceiling = min(r.share, 1) if service == 1 else min(r.share, service - 1)
    if f <= 0.0:
        return AdmissionResult(0, AdmissionOutcome.WAIT_CAPACITY_ZERO, f, failed, cluster, service, ceiling)
    rooms = (max(0, cluster - r.cluster_in_flight), max(0, service - r.service_in_flight),
             max(0, ceiling - r.workspace_in_flight))
    admit = min(rooms)
    if admit > 0:
        outcome = AdmissionOutcome.ADMIT
    elif rooms[0] == 0:
        outcome = AdmissionOutcome.WAIT_CLUSTER_FULL
    elif rooms[1] == 0:
        outcome = AdmissionOutcome.WAIT_SERVICE_FULL
    else:
        outcome = AdmissionOutcome.WAIT_WORKSPACE_FULL
    return AdmissionResult(admit, outcome, f, failed, cluster, service, ceiling)


def vectors():
    root = Path(__file__).resolve().parents[3] / "tests" / "vectors" / "admission"
    return [AdmissionRequest(**c["input"]) for f in sorted(root.glob("*.json")) for c in json.loads(f.read_text())]


def best_per_call_us(fn, calls: int, per: int = 1) -> float:
    fn()
    best = float("inf")
    for _ in range(5):
        started = time.perf_counter()
        for _ in range(calls):
            fn()
        best = min(best, time.perf_counter() - started)
    return best / (calls * per) * 1e6


def median_us(fn, calls: int = 10_000) -> float:
    """The median of `calls` single calls, each timed on its own."""
    fn()
    times = []
    for _ in range(calls):
        started = time.perf_counter_ns()
        fn()
        times.append(time.perf_counter_ns() - started)
    times.sort()
    return times[len(times) // 2] / 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=5000)
    calls = parser.parse_args().calls

    requests = vectors()
    admission = ca.Admission()
    exports = ca.Admission(direct=False)
    for r in requests:
        assert plain_resolve_budget(r) == admission.resolve_budget(r), r
    print(f"plain Python agrees with the component on {len(requests)} admission vectors")

    request = AdmissionRequest(factor=0.5, cluster_batches=40, service_batches=12, share=4,
                               cluster_in_flight=9, service_in_flight=3, workspace_in_flight=1)
    raw = ca.admission._request_in(request)
    export = admission._resolve
    batch = [AdmissionRequest(factor=i / 100, cluster_batches=40, service_batches=12, share=4) for i in range(100)]

    plain = best_per_call_us(lambda: plain_resolve_budget(request), calls * 4)
    rows = [
        ("plain Python", plain),
        ("package (direct)", best_per_call_us(lambda: admission.resolve_budget(request), calls)),
        ("package (exports)", best_per_call_us(lambda: exports.resolve_budget(request), calls)),
        ("export (cached)", best_per_call_us(lambda: export(raw), calls)),
        ("export (dynamic)", best_per_call_us(lambda: export.call_dynamic(raw), calls)),
        ("batch of 100", best_per_call_us(lambda: admission.resolve_budgets(batch), max(1, calls // 100), 100)),
    ]
    print(f"resolve_budget per call, wasmtime-py (direct calls {'on' if admission.direct else 'OFF'}, "
          f"cached exports {'on' if export.cached else 'OFF'}):")
    for name, us in rows:
        print(f"  {name:<18} {us:9.2f} µs   {us / plain:7.1f}x plain")

    queue = PlanRequest(factor=0.7, cluster_batches=40, service_batches=12, cluster_in_flight=3, service_in_flight=1,
                        workspaces=[WorkspaceLoad("acme", 3, 0), WorkspaceLoad("globex", 2, 1), WorkspaceLoad("initech", 1, 0)],
                        queue=[QueuedBatch(f"job-{i}", ("acme", "globex", "initech")[i % 3], 1796432870 + i) for i in range(10)])
    assert admission.plan(queue) == exports.plan(queue)
    medians = [
        ("resolve_budget", "direct", median_us(lambda: admission.resolve_budget(request))),
        ("resolve_budget", "exports", median_us(lambda: exports.resolve_budget(request))),
        ("plan, 10 batches", "direct", median_us(lambda: admission.plan(queue))),
        ("plan, 10 batches", "exports", median_us(lambda: exports.plan(queue))),
    ]
    print("median of 10,000 single calls:")
    for call, way, us in medians:
        print(f"  {call:<17} {way:<8} {us:9.2f} µs")

    package = rows[1][1]
    with tempfile.TemporaryDirectory() as folder:
        state = Path(folder) / "state.json"
        decided = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        state.write_text(json.dumps({"state": "constrained", "factors": {"bulk": 0.5}, "decided_at": decided, "sequence": 1}))
        with ca.BulkFactorReader(cache=str(state), refresh=60) as cached, ca.BulkFactorReader(cache=str(state), refresh=0) as fetching:
            assert cached.read().factor == 0.5 and fetching.read().factor == 0.5
            readers = [
                ("reader (cached)", best_per_call_us(cached.read, calls * 4)),
                ("reader (fetch)", best_per_call_us(fetching.read, max(1, calls // 10))),
            ]
    print("BulkFactorReader.read() per call, beside the admission call (package, cached path):")
    for name, us in readers:
        print(f"  {name:<18} {us:9.2f} µs   {us / package:7.2f}x resolve_budget")


if __name__ == "__main__":
    main()
