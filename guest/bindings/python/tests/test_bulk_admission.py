"""BulkAdmission: configured once, then `admit` and `plan`, against the real channels (Redis and
moto's SSM, written as the sentinel publishes) and the real profiles (PostgreSQL, the read-only
role `svc`).

The shared vectors run through it: each `tests/vectors/admission` case's share is a row of a
table, its factor is published to both channels (an absent factor: nothing published; one out of
[0, 1]: published, and refused by the reader), and `admit` must give the vector's result; each
`tests/vectors/planner` case's workspaces are a table of their own. Cases the configuration
cannot express are counted (a budget of 0 cannot be configured; a queued workspace without a
profile gets the default share; a table gives a workspace one share, not two). With
CAPACITY_RESULTS_FILE set, the results are written there as JSON, in the form the Node package
writes, so the runner can compare the two files byte for byte.
"""

from __future__ import annotations

import json
import logging
import os
from typing import Any, Dict, Tuple

import pytest

from capacity_admission import (
    AdmissionOutcome,
    BulkAdmission,
    BulkFactorReader,
    QueuedBatch,
    WorkspaceProfiles,
)
from published import NOW, PARAMETER, document, publish, withdraw
from servers import Redis
from vectors import cases, check, serde

ADMISSION = cases("admission")
PLANNER = cases("planner")


def admission_skip(case: Dict[str, Any]) -> str:
    i = case["input"]
    return "a budget of 0 cannot be configured" if min(i["cluster_batches"], i["service_batches"]) < 1 else ""


def planner_skip(case: Dict[str, Any]) -> str:
    i = case["input"]
    listed = [w["workspace"] for w in i["workspaces"]]
    if min(i["cluster_batches"], i["service_batches"]) < 1:
        return "a budget of 0 cannot be configured"
    if len(set(listed)) != len(listed):
        return "a workspace listed twice (a table gives it one share)"
    if not {b["workspace"] for b in i["queue"]} <= set(listed):
        return "a queued workspace without a profile (it would get the default share)"
    return ""


RUN_ADMISSION = [i for i, (_, c) in enumerate(ADMISSION) if not admission_skip(c)]
RUN_PLANNER = [i for i, (_, c) in enumerate(PLANNER) if not planner_skip(c)]


def test_the_vector_cases_left_out_are_the_expected_ones():
    assert [c["name"] for _, c in ADMISSION if admission_skip(c)] == ["zero_batches_configured_still_one"]
    assert [c["name"] for _, c in PLANNER if planner_skip(c)] == [
        "workspace_without_profile_admits_nothing", "duplicate_profile_counts_first"]
    assert (len(RUN_ADMISSION), len(ADMISSION) - len(RUN_ADMISSION)) == (19, 1)
    assert (len(RUN_PLANNER), len(PLANNER) - len(RUN_PLANNER)) == (13, 2)


def portable(kind: str, case: Dict[str, Any], result: Dict[str, Any]) -> Dict[str, Any]:
    """One entry of the results file: `factor_used` as JSON.stringify writes it (1, not 1.0)."""
    factor = round(result["factor_used"], 6)
    return {"case": case["name"], "kind": kind,
            "result": {**result, "factor_used": int(factor) if float(factor).is_integer() else factor}}


@pytest.fixture(scope="module")
def results():
    found: Dict[Tuple[int, int], Dict[str, Any]] = {}
    yield found
    target = os.environ.get("CAPACITY_RESULTS_FILE")
    if target:
        ordered = [found[k] for k in sorted(found)]  # admission cases, then planner cases, in file order
        with open(target, "w", encoding="utf-8") as f:
            f.write(json.dumps(ordered, indent=2, sort_keys=True) + "\n")


class World:
    """The channels, the profiles' tables and one reader, for every vector case."""

    def __init__(self, redis: Redis, ssm: Any, postgres: Any) -> None:
        self.redis, self.ssm, self.postgres = redis, ssm, postgres
        self.reader = self._new_reader()
        postgres.sql("CREATE TABLE admission_vectors (workspace_id text, bulk_share bigint)")
        for i in RUN_ADMISSION:
            case = ADMISSION[i][1]
            postgres.sql("INSERT INTO admission_vectors VALUES (%s, %s)", case["name"], case["input"]["share"])
        self.admission_profiles = WorkspaceProfiles(postgres.dsn(), table="admission_vectors", timeout=2)
        for i in RUN_PLANNER:
            postgres.sql(f"CREATE TABLE plan_{i:02d} (workspace_id text, bulk_share bigint)")
            for w in PLANNER[i][1]["input"]["workspaces"]:
                postgres.sql(f"INSERT INTO plan_{i:02d} VALUES (%s, %s)", w["workspace"], w["share"])

    def _new_reader(self) -> BulkFactorReader:
        return BulkFactorReader(cache=self.redis.url, parameter=f"ssm:{PARAMETER}", refresh=0, parameter_refresh=0,
                                clock=lambda: NOW, timeout=1.0)

    def publish(self, factor: Any) -> Any:
        """The case's factor on both channels; what the reader must make of it. A factor no
        reader may use is met by a reader that has read nothing yet (one that had would act on
        the document it remembers, test_remembered.py)."""
        if factor is None or not 0 <= factor <= 1:
            self.reader.close()
            self.reader = self._new_reader()
        if factor is None:
            withdraw(self.redis, self.ssm)
            return None
        publish(self.redis, self.ssm, cache=document(factor), parameter=document(factor))
        return factor if 0 <= factor <= 1 else None


@pytest.fixture(scope="module")
def world(tmp_path_factory, moto, postgres):
    import boto3

    redis = Redis(tmp_path_factory.mktemp("redis"))
    ssm = boto3.client("ssm")
    w = World(redis, ssm, postgres)
    yield w
    w.reader.close()
    w.admission_profiles.close()
    ssm.close()
    redis.stop()


@pytest.mark.parametrize("index", RUN_ADMISSION, ids=[ADMISSION[i][1]["name"] for i in RUN_ADMISSION])
def test_admission_vector_through_bulk_admission(world: World, results, index: int) -> None:
    case = ADMISSION[index][1]
    i = case["input"]
    readable = world.publish(i["factor"])
    reading = world.reader.read()
    assert (reading.factor, reading.source) == ((readable, "cache") if readable is not None else (None, None))
    admission = BulkAdmission(reader=world.reader, cluster_batches=i["cluster_batches"],
                              service_batches=i["service_batches"], profiles=world.admission_profiles)
    result = serde(admission.admit(case["name"], cluster_in_flight=i["cluster_in_flight"],
                                   service_in_flight=i["service_in_flight"],
                                   workspace_in_flight=i["workspace_in_flight"]))
    results[(0, index)] = portable("admit", case, result)
    check(case["expected"], result)


@pytest.mark.parametrize("index", RUN_PLANNER, ids=[PLANNER[i][1]["name"] for i in RUN_PLANNER])
def test_planner_vector_through_bulk_admission(world: World, results, index: int) -> None:
    case = PLANNER[index][1]
    i = case["input"]
    world.publish(i["factor"])
    with WorkspaceProfiles(world.postgres.dsn(), table=f"plan_{index:02d}", timeout=2) as profiles:
        admission = BulkAdmission(reader=world.reader, cluster_batches=i["cluster_batches"],
                                  service_batches=i["service_batches"], profiles=profiles)
        result = serde(admission.plan(
            [QueuedBatch(**b) for b in i["queue"]], cluster_in_flight=i["cluster_in_flight"],
            service_in_flight=i["service_in_flight"],
            workspace_in_flight={w["workspace"]: w["in_flight"] for w in i["workspaces"]}))
        assert profiles.counters().loads == (1 if i["queue"] else 0)
    results[(1, index)] = portable("plan", case, result)
    check(case["expected"], result)


def test_the_portable_form_writes_factors_as_javascript_does():
    case = {"name": "x"}
    assert json.dumps([portable("admit", case, {"factor_used": f})["result"]["factor_used"]
                       for f in (1.0, 0.0, 0.5, 0.01, 0.1 + 0.2, 0.30000000000000004)]) == "[1, 0, 0.5, 0.01, 0.3, 0.3]"


@pytest.fixture
def channels(redis, ssm, postgres):
    postgres.sql("CREATE TABLE IF NOT EXISTS service_profiles (workspace_id text, bulk_share bigint)")
    postgres.sql("TRUNCATE service_profiles")
    for workspace, share in (("acme", 4), ("beta", 0), ("corp", 2)):
        postgres.sql("INSERT INTO service_profiles VALUES (%s, %s)", workspace, share)
    return redis, ssm, postgres


def service(redis, postgres, clock=lambda: NOW, **options) -> BulkAdmission:
    reader = BulkFactorReader(cache=redis.url, parameter=f"ssm:{PARAMETER}", refresh=0, parameter_refresh=0, clock=clock,
                              timeout=1.0)
    profiles = WorkspaceProfiles(postgres.dsn(), table="service_profiles", default_share=2, timeout=2)
    return BulkAdmission(reader=reader, cluster_batches=options.pop("cluster_batches", 20),
                         service_batches=options.pop("service_batches", 10), profiles=profiles, **options)


def test_admit_takes_the_factor_from_the_channels_and_the_share_from_the_table(channels, caplog):
    redis, ssm, postgres = channels
    caplog.set_level(logging.INFO, logger="capacity_admission")
    now = [NOW]
    with service(redis, postgres, clock=lambda: now[0]) as admission:
        publish(redis, ssm, cache=document(0.5), parameter=document(0.0, state="critical"))
        r = admission.admit("acme", cluster_in_flight=1, service_in_flight=1, workspace_in_flight=1)
        assert (r.factor_used, r.cluster_budget, r.service_budget, r.workspace_ceiling, r.admit) == (0.5, 10, 5, 4, 3)
        assert admission.admit("beta").outcome == AdmissionOutcome.WAIT_WORKSPACE_FULL  # share 0
        assert admission.admit("nobody").workspace_ceiling == 2  # no row: the default share
        # The parameter's factor, then the one remembered while it is fresh, then full capacity.
        redis.stop()
        assert admission.admit("acme").factor_used == 0.0
        ssm.delete_parameter(Name=PARAMETER)
        r = admission.admit("acme")
        assert (r.factor_used, r.factor_read_failed, r.admit) == (0.0, False, 0)
        now[0] += 121  # the parameter's document was 60 s old: now past the 180 s maximum age
        r = admission.admit("acme")
        assert (r.factor_used, r.factor_read_failed, r.admit) == (1.0, True, 4)
        assert admission.profiles.counters().loads == 1
    lines = [r.levelname for r in caplog.records if r.name == "capacity_admission"]
    # The reader's own (the profiles had nothing to say): the cache, the parameter, the remembered
    # document, full capacity.
    assert lines == ["WARNING", "WARNING", "WARNING", "ERROR"]


def test_plan_takes_each_queued_workspace_once_with_its_share_and_in_flight(channels):
    redis, ssm, postgres = channels
    publish(redis, ssm, cache=document(1.0))
    queue = [QueuedBatch("a1", "acme", 100), QueuedBatch("b1", "beta", 101), QueuedBatch("a2", "acme", 102),
             QueuedBatch("c1", "corp", 103), QueuedBatch("c2", "corp", 104), QueuedBatch("n1", "nobody", 105)]
    with service(redis, postgres) as admission:
        p = admission.plan(queue, workspace_in_flight={"corp": 1, "elsewhere": 7})
        assert p.admitted == ["a1", "c1", "n1", "a2"]
        assert [(w.id, w.outcome.value) for w in p.waiting] == [
            ("b1", "wait-workspace-full"), ("c2", "wait-workspace-full")]
        assert admission.plan([]).admitted == []


@pytest.mark.parametrize("call,error,message", [
    (lambda a: a.admit("acme", cluster_in_flight=-1), ValueError, "cluster_in_flight"),
    (lambda a: a.admit("acme", service_in_flight=1.5), TypeError, "service_in_flight"),
    (lambda a: a.admit("acme", workspace_in_flight=2**32), ValueError, "workspace_in_flight"),
    (lambda a: a.admit(7), TypeError, "workspace"),
    (lambda a: a.admit("acme", 1), TypeError, "positional"),
    (lambda a: a.plan([QueuedBatch("a1", "acme", 1)], workspace_in_flight={"acme": -1}), ValueError,
     r"workspace_in_flight\['acme'\]"),
    (lambda a: a.plan([QueuedBatch("a1", "acme", 1)], workspace_in_flight=[("acme", 1)]), TypeError,
     "workspace_in_flight"),
    (lambda a: a.plan([QueuedBatch("a1", "acme", 1.5)]), ValueError, r"queue\[0\].enqueued_at"),
    (lambda a: a.plan([QueuedBatch("a1", None, 1)]), TypeError, r"queue\[0\].workspace"),
    (lambda a: a.plan([{"id": "a1", "workspace": "acme", "enqueued_at": 1}]), TypeError,
     r"queue\[0\]: expected a QueuedBatch\(id, workspace, enqueued_at\) \(from capacity_admission import QueuedBatch"),
    (lambda a: a.plan([], service_in_flight=-1), ValueError, "service_in_flight"),
])
def test_bad_counts_are_refused_before_anything_is_read(channels, call, error, message):
    redis, ssm, postgres = channels
    with service(redis, postgres) as admission:
        with pytest.raises(error, match=message):
            call(admission)
        assert (admission.reader.counters().calls, admission.profiles.counters().loads) == (0, 0)


def test_a_given_admission_instance_is_used(channels):
    from capacity_admission import Admission

    redis, ssm, postgres = channels
    publish(redis, ssm, cache=document(0.5))
    calls = []

    class Counting(Admission):
        def resolve_budget(self, request):
            calls.append(request)
            return super().resolve_budget(request)

    with service(redis, postgres, admission=Counting()) as admission:
        assert admission.admit("corp").admit == 2
    assert [(r.factor, r.share, r.cluster_batches, r.service_batches) for r in calls] == [(0.5, 2, 20, 10)]


@pytest.mark.parametrize("options,error,key", [
    ({"cluster_batches": 0}, ValueError, "cluster_batches"),
    ({"service_batches": 0}, ValueError, "service_batches"),
    ({"cluster_batches": -3}, ValueError, "cluster_batches"),
    ({"service_batches": 1.5}, ValueError, "service_batches"),
    ({"cluster_batches": True}, ValueError, "cluster_batches"),
    ({"service_batches": 2**32}, ValueError, "service_batches"),
    ({"reader": None}, ValueError, "reader"),
    ({"profiles": {"acme": 4}}, ValueError, "profiles"),
    ({"admission": "component.wasm"}, ValueError, "admission"),
    ({"colour": "blue"}, TypeError, "colour"),
    ({"profiles_default_share": 0}, ValueError, "default_share"),
    ({"profiles_table": "x; drop"}, ValueError, "table"),
])
def test_bad_configuration_is_refused_when_built_naming_the_key(psycopg_installed, tmp_path, options, error, key):
    options = dict(options)

    def build():
        settings = {"default_share": options.pop("profiles_default_share", 1),
                    "table": options.pop("profiles_table", "tenant_workload_policies")}
        given = {"reader": BulkFactorReader(cache=str(tmp_path / "state.json")),
                 "profiles": WorkspaceProfiles("postgresql://svc:pw@127.0.0.1:1/postgres", **settings),
                 "cluster_batches": 40, "service_batches": 12}
        return BulkAdmission(**{**given, **options})

    with pytest.raises(error, match=key):
        build()


def test_the_constructor_takes_keywords_only(psycopg_installed, tmp_path):
    reader = BulkFactorReader(cache=str(tmp_path / "state.json"))
    profiles = WorkspaceProfiles("postgresql://svc@127.0.0.1:1/postgres")
    with pytest.raises(TypeError):
        BulkAdmission(reader, 40, 12, profiles)  # type: ignore[misc]
    assert BulkAdmission(reader=reader, cluster_batches=40, service_batches=12, profiles=profiles).cluster_batches == 40
