"""A reader keeps acting on the newest document it acted on while that one is fresh
(docs/behaviour.md §9.1, "Remembered"), from the table every reader runs
(tests/vectors/reader/remembered.json, also run by the Node package), and the parameter's pace
(`parameter_refresh`, backoff after failures) on a file channel."""

from __future__ import annotations

import json
import logging
from datetime import datetime, timezone
from pathlib import Path

import pytest

from capacity_admission import BulkFactorReader
from capacity_admission.parameter_pace import JITTER, ParameterPace
from conftest import VECTORS

TABLE = json.loads((VECTORS / "reader" / "remembered.json").read_text())


def _write(path: Path, channel) -> None:
    if channel == "absent":
        path.unlink(missing_ok=True)
    elif "text" in channel:
        path.write_text(channel["text"])
    else:
        at = datetime.fromtimestamp(TABLE["start"] + channel["decided"], tz=timezone.utc)
        path.write_text(json.dumps({"state": channel["state"], "factors": {"bulk": channel["bulk"]},
                                    "decided_at": at.strftime("%Y-%m-%dT%H:%M:%SZ"), "sequence": channel["sequence"]}))


@pytest.mark.parametrize("case", TABLE["cases"], ids=[c["name"] for c in TABLE["cases"]])
def test_the_shared_table(case, tmp_path):
    cache, parameter = tmp_path / "cache.json", tmp_path / "parameter.json"
    now = [TABLE["start"]]
    with BulkFactorReader(cache=str(cache), parameter=f"file:{parameter}", refresh=0, parameter_refresh=0,
                          max_age=TABLE["max_age"], max_skew=TABLE["max_skew"], clock=lambda: now[0]) as r:
        for i, step in enumerate(case["steps"]):
            _write(cache, step["cache"])
            _write(parameter, step["parameter"])
            now[0] = TABLE["start"] + step["at"]
            got = r.read()
            actual = {name: getattr(got, name) for name in step["expect"]}
            assert actual == step["expect"], f"step {i} (at {step['at']} s)"
        counters = r.counters()
        assert {name: getattr(counters, name) for name in case["counters"]} == case["counters"]


def test_remembering_is_logged_when_it_starts_and_when_it_ends(tmp_path, caplog):
    cache = tmp_path / "cache.json"
    now = [TABLE["start"]]
    doc = {"bulk": 0.0, "state": "critical", "sequence": 43, "decided": 0}
    with BulkFactorReader(cache=str(cache), refresh=0, clock=lambda: now[0]) as r:
        _write(cache, doc)
        r.read()
        caplog.set_level(logging.INFO, logger="capacity_admission")
        caplog.clear()
        _write(cache, "absent")
        for at in (10, 20, 180):
            now[0] = TABLE["start"] + at
            assert r.read().source == "remembered"
        now[0] += 1
        assert r.read().factor is None
    lines = [m for m in caplog.messages if "capacity cache" not in m]
    assert len(lines) == 2, lines
    assert "acting on the remembered one (sequence 43, critical, bulk 0.0, decided_at 2026-10-20T14:30:00Z) " \
           "until it is stale at 2026-10-20T14:33:00Z" in lines[0]
    assert "admitting bulk work at full capacity" in lines[1]


def test_the_parameter_is_called_once_per_parameter_refresh(tmp_path):
    parameter = tmp_path / "parameter.json"
    _write(parameter, {"bulk": 0.25, "state": "constrained", "sequence": 5, "decided": 0})
    with BulkFactorReader(parameter=str(parameter), refresh=0, parameter_refresh=60,
                          clock=lambda: TABLE["start"]) as r:
        for _ in range(20):
            assert r.read().factor == 0.25
        assert (r.counters().fetches, r.counters().parameter_calls) == (20, 1)


class _Failing:
    label = "a parameter that always fails"

    def __init__(self):
        self.calls = 0

    def fetch(self):
        self.calls += 1
        return ("failed", "ThrottlingException: Rate exceeded")


@pytest.mark.parametrize("draw", [0.0, 0.5, 0.999])
def test_failures_back_off_exponentially_up_to_a_third_of_max_age_with_jitter(draw):
    channel, pace = _Failing(), ParameterPace(10.0, 180, draw=lambda: draw)
    spread = 1.0 - JITTER + 2.0 * JITTER * draw
    now, gaps = 0.0, []
    while len(gaps) < 6:
        fetched, called = pace.fetch(channel, now)
        if called:
            gaps.append(now)
        else:
            assert fetched[0] == "failed" and "next call to the parameter in" in fetched[1]
        now += 0.5
    waits = [round(b - a) for a, b in zip(gaps, gaps[1:])]
    expected = [round(min(60.0, 10.0 * 2 ** k) * spread + 0.25) for k in range(1, 6)]
    assert all(abs(w - e) <= 1 for w, e in zip(waits, expected)), (waits, expected)


@pytest.mark.parametrize("value", [61, 100])
def test_a_parameter_refresh_longer_than_a_third_of_max_age_is_refused(value):
    with pytest.raises(ValueError, match=r"parameter_refresh: expected at most a third of max_age \(60 s\)"):
        BulkFactorReader(cache="x", parameter_refresh=value)


class _Answering:
    label = "a parameter that answers"

    def __init__(self):
        self.calls = 0

    def fetch(self):
        self.calls += 1
        return ("document", "{}")


def test_the_first_call_after_the_cache_fails_is_spread_while_a_remembered_document_is_fresh():
    channel, pace = _Answering(), ParameterPace(30.0, 180, draw=lambda: 0.5)
    # Half of min(interval, half the remaining freshness): 0.5 × min(30, 50) = 15 s.
    assert pace.fetch(channel, 0.0, fresh_for=100) == (None, False)
    assert pace.fetch(channel, 14.9, fresh_for=85) == (None, False)
    assert pace.fetch(channel, 15.0, fresh_for=85) == (("document", "{}"), True)
    # Within the interval, the answer is reused; no second spreading while calls go on.
    assert pace.fetch(channel, 30.0, fresh_for=70) == (("document", "{}"), False)
    assert pace.fetch(channel, 45.0, fresh_for=55)[1] is True
    # Without a remembered document there is nothing to wait on: the call is made at once.
    fresh = ParameterPace(30.0, 180, draw=lambda: 0.5)
    assert fresh.fetch(channel, 0.0, fresh_for=None)[1] is True
    assert channel.calls == 3


def test_retries_after_failures_come_before_the_remembered_document_goes_stale():
    channel, pace = _Failing(), ParameterPace(30.0, 180, draw=lambda: 0.5)
    stale_at, now, calls = 100.0, 0.0, []
    while now < stale_at:
        if pace.fetch(channel, now, fresh_for=stale_at - now)[1]:
            calls.append(now)
        now += 0.25
    # Without the bound, the second call would come 60 s after the first (at 75 s) and the
    # third past the document's staleness; with it, each waits half the time left.
    assert len(calls) >= 5, calls
    assert all(b - a <= max(1.0, (stale_at - a) / 2) + 0.25 for a, b in zip(calls, calls[1:])), calls
