"""BulkFactorReader against real servers: Redis and moto's SSM on 127.0.0.1 (docs/behaviour.md
§9.1). What a service sees when the cache is fresh, absent, expired or down, when the parameter
is stale, when a document comes from the future or is malformed; that concurrent callers share
one fetch; that trouble is logged once when it starts and once when it ends."""

from __future__ import annotations

import datetime as dt
import json
import logging
import threading
import time

import pytest

from capacity_admission import AdmissionRequest, BulkFactorReader, resolve_budget
from published import NOW, PARAMETER, document, publish

def reader(redis_server, **options) -> BulkFactorReader:
    options.setdefault("refresh", 0)
    options.setdefault("parameter_refresh", 0)
    options.setdefault("clock", lambda: NOW)
    options.setdefault("timeout", 1.0)
    return BulkFactorReader(cache=redis_server.url, parameter=f"ssm:{PARAMETER}", **options)


def test_a_fresh_cache_is_used_and_the_parameter_is_not_read(redis, ssm):
    publish(redis, ssm, cache=document(0.5), parameter=document(0.0, state="critical"))
    with reader(redis) as r:
        got = r.read()
        assert (got.factor, got.source, got.state, got.sequence, got.age_s) == (0.5, "cache", "constrained", 42, 60)
        assert (got.cache, got.parameter, got.error) == ("usable", "not-read", None)
        assert r.counters().reads == {("cache", "usable"): 1}
        # The time as people and code read it: an aware datetime, and RFC 3339 in the repr.
        assert got.decided_at_time == dt.datetime.fromtimestamp(NOW - 60, tz=dt.timezone.utc)
        assert got.decided_at_time.tzinfo is dt.timezone.utc
        stamp = got.decided_at_time.strftime("%Y-%m-%dT%H:%M:%SZ")
        assert f"decided_at={stamp} ({NOW - 60})" in repr(got), repr(got)


def test_an_absent_or_expired_key_falls_to_a_fresh_parameter(redis, ssm):
    publish(redis, ssm, parameter=document(0.0, state="critical", sequence=41))
    with reader(redis) as r:
        got = r.read()
        assert (got.factor, got.source, got.sequence, got.cache) == (0.0, "parameter", 41, "read-failed")
        assert got.error == "cache: no key capacity:state (absent or expired)"
        publish(redis, ssm, cache=document(0.5, sequence=41), expire_ms=1500)
        assert r.read().source == "cache"
        time.sleep(2.0)
        assert (r.read().source, r.read().cache) == ("parameter", "read-failed")


def test_a_stopped_redis_falls_to_the_parameter_and_its_return_is_followed(redis, ssm):
    publish(redis, ssm, cache=document(0.5), parameter=document(0.0, state="critical"))
    with reader(redis) as r:
        assert r.read().source == "cache"
        redis.stop()
        started = time.monotonic()
        got = r.read()
        assert time.monotonic() - started < 5
        assert (got.factor, got.source, got.cache) == (0.0, "parameter", "read-failed")
        assert got.error.startswith("cache: ConnectionError"), got.error
        redis.start()  # the same port, an empty server: publish again, the reader's client reconnects
        publish(redis, ssm, cache=document(0.25))
        assert (r.read().factor, r.read().source) == (0.25, "cache")


def test_a_stale_parameter_with_the_cache_absent_is_full_capacity_naming_both(redis, ssm):
    publish(redis, ssm, parameter=document(0.0, state="critical", age=181))
    with reader(redis) as r:
        got = r.read()
    assert (got.factor, got.source, got.failed, got.cache, got.parameter) == (None, None, True, "read-failed", "stale")
    assert got.error == ("cache: no key capacity:state (absent or expired); parameter: stale: decided_at "
                         "2026-10-20T14:26:59Z is 181 s old (maximum 180 s)")
    result = resolve_budget(AdmissionRequest(factor=got.factor, cluster_batches=10, service_batches=6, share=3))
    assert (result.factor_used, result.factor_read_failed, result.admit) == (1.0, True, 3)


def test_one_clock_reading_judges_both_channels(redis, ssm):
    """The clock moves between the cache's read and the parameter's: the cache is still judged
    at the fetch's one `now` (31 s ahead, refused), not trusted on a second look."""
    publish(redis, ssm, cache=document(0.0, age=-31), parameter=document(0.5))
    ticks = iter([NOW, NOW + 5, NOW + 10])
    with reader(redis, clock=lambda: next(ticks)) as r:
        got = r.read()
    assert (got.source, got.cache, got.factor) == ("parameter", "from-the-future", 0.5)


def test_a_document_from_the_future_is_not_trusted(redis, ssm):
    publish(redis, ssm, cache=document(0.0, age=-31), parameter=document(0.5, age=-30))
    with reader(redis) as r:
        got = r.read()
    assert (got.factor, got.source, got.age_s, got.cache) == (0.5, "parameter", -30, "from-the-future")
    assert "31 s ahead of this clock (allowance 30 s)" in got.error


@pytest.mark.parametrize("cache,parameter,verdicts", [
    ("{not json", "[1]", ("unreadable", "unreadable")),
    (document(1.5), document(-0.25), ("out-of-range", "out-of-range")),
    (json.dumps({"factors": {"bulk": "0.5"}, "decided_at": "2026-10-20T14:29:00Z"}), document(True), ("unreadable", "unreadable")),
    (document(0.5, decided_at="yesterday"), json.dumps({"factors": {"bulk": 0.5}}), ("unreadable", "unreadable")),
])
def test_malformed_documents_and_out_of_range_factors_are_full_capacity(redis, ssm, cache, parameter, verdicts):
    publish(redis, ssm, cache=cache, parameter=parameter)
    with reader(redis) as r:
        got = r.read()
    assert (got.factor, (got.cache, got.parameter)) == (None, verdicts), got.error


def test_a_thousand_concurrent_reads_within_one_refresh_fetch_once_per_channel(redis, ssm):
    publish(redis, ssm, parameter=document(0.25))  # the cache fails, so both channels are read
    before = redis.reads()
    with reader(redis, refresh=60) as r:
        barrier = threading.Barrier(50)
        answers = []

        def caller():
            barrier.wait()
            for _ in range(20):
                answers.append(r.read().factor)

        threads = [threading.Thread(target=caller) for _ in range(50)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        counters = r.counters()
    assert len(answers) == 1000 and set(answers) == {0.25}
    assert (counters.calls, counters.fetches) == (1000, 1)
    assert counters.reads == {("cache", "read-failed"): 1, ("parameter", "usable"): 1}
    assert redis.reads() - before == 1, "the Redis server answered more than one read"


def test_trouble_is_logged_once_when_it_starts_and_once_when_it_ends(redis, ssm, caplog):
    caplog.set_level(logging.INFO, logger="capacity_admission")
    publish(redis, ssm, cache=document(0.5))
    now = [NOW]
    with BulkFactorReader(cache=redis.url, refresh=0, clock=lambda: now[0]) as r:
        assert r.read().factor == 0.5
        with redis.client() as c:
            c.delete("capacity:state")
        now[0] += 121  # past the remembered document's freshness (test_remembered.py has the time before)
        for _ in range(50):
            assert r.read().failed
        publish(redis, ssm, cache=document(0.5, age=-100))
        for _ in range(5):
            assert r.read().factor == 0.5
        assert r.counters().full_capacity == 50
    records = [(rec.levelname, rec.getMessage()) for rec in caplog.records if rec.name == "capacity_admission"]
    assert [level for level, _ in records] == ["WARNING", "ERROR", "INFO", "INFO"], records
    assert "capacity cache redis://127.0.0.1" in records[0][1] and "no key capacity:state" in records[0][1]
    assert "admitting bulk work at full capacity" in records[1][1]
    assert "usable again" in records[2][1] and "read again from the cache" in records[3][1]


def test_an_answer_is_reused_for_the_refresh_interval(tmp_path):
    path = tmp_path / "state.json"
    path.write_text(document(0.5))
    with BulkFactorReader(cache=str(path), refresh=1.5, clock=lambda: NOW) as r:
        assert r.read().factor == 0.5
        path.write_text(document(0.25))
        assert r.read().factor == 0.5
        time.sleep(1.5 * 1.25 + 0.1)  # the longest the answer is reused: refresh, +25 % jitter
        assert r.read().factor == 0.25
        assert r.counters().fetches == 2


def test_a_closed_reader_refuses_to_read(tmp_path):
    path = tmp_path / "state.json"
    path.write_text(document(0.5))
    r = BulkFactorReader(cache=str(path), clock=lambda: NOW)
    assert r.read().factor == 0.5
    r.close()
    with pytest.raises(RuntimeError, match="closed"):
        r.read()


def test_files_work_as_both_channels_for_the_embedded_default(tmp_path):
    cache, parameter = tmp_path / "cache.json", tmp_path / "parameter.json"
    parameter.write_text(document(0.0, state="critical"))
    with BulkFactorReader(cache=str(cache), parameter=f"file:{parameter}", refresh=0, clock=lambda: NOW) as r:
        got = r.read()
    assert (got.factor, got.source, got.cache) == (0.0, "parameter", "read-failed")
    assert "No such file or directory" in got.error


@pytest.mark.parametrize("options,message", [
    ({}, "needs a cache, a parameter or both"),
    ({"cache": "x", "max_age": 0}, "max_age"),
    ({"cache": "x", "max_age": 1.5}, "max_age"),
    ({"cache": "x", "max_skew": -1}, "max_skew"),
    ({"cache": "x", "refresh": -1}, "refresh"),
    ({"cache": "x", "timeout": 0}, "timeout"),
    ({"cache": "x", "cache_key": ""}, "cache_key"),
    ({"cache": ""}, "a channel is"),
    ({"parameter": "ssm:"}, "ssm: needs a parameter name"),
    ({"cache": "file:"}, "file: needs a path"),
    ({"cache": "x", "clock": 5}, "clock"),
    ({"cache": "x", "logger": "log"}, "logger"),
])
def test_bad_settings_are_refused_when_the_reader_is_built(options, message):
    with pytest.raises(ValueError, match=message):
        BulkFactorReader(**options)


def test_an_ssm_parameter_without_a_region_is_refused_when_the_reader_is_built(monkeypatch):
    pytest.importorskip("boto3")
    for name in ("AWS_DEFAULT_REGION", "AWS_REGION", "AWS_PROFILE", "AWS_CONFIG_FILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent")
    with pytest.raises(ValueError, match="cannot create the SSM client.*AWS_DEFAULT_REGION"):
        BulkFactorReader(parameter="ssm:/capacity/state")


def test_a_password_in_the_cache_url_never_reaches_the_log(caplog):
    caplog.set_level(logging.INFO, logger="capacity_admission")
    pytest.importorskip("redis")
    from servers import free_port

    with BulkFactorReader(cache=f"redis://user:s3cret@127.0.0.1:{free_port()}/0", refresh=0, timeout=0.3) as r:
        assert r.read().failed
    text = "\n".join(rec.getMessage() for rec in caplog.records)
    assert "s3cret" not in text and "user:***@127.0.0.1" in text
