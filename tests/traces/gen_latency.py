#!/usr/bin/env python3
"""Writes latency_learnt.jsonl: 27 hours of minute readings whose latency has no baseline_ms,
so replay learns the baselines (docs/behaviour.md §8), then a latency spike on one API.

Run from anywhere: python3 tests/traces/gen_latency.py (the output lands beside this script).
Deterministic; the committed .jsonl is what the tests use.

Timeline (UTC, day 0 = 2026-10-19):
  day 0 00:00 - 00:59  crm p95 100..106 ms, search 200..210 ms; plus a 900 ms crm burst at
                       00:30-00:34 that cannot be assessed (no baseline exists yet)
  day 0 01:10 - 01:11  crm 400 ms, still not assessed (the 01:00 recompute had no samples)
  day 0 02:00          first baselines (the hour 00:00-00:59 has 60 samples per API)
  day 0 02:10 - 02:11  crm 400 ms, now assessed critical (two readings: no escalation)
  day 1 01:30 - 01:39  crm 170 ms (ratio about 1.65: constrained)
  day 1 01:40 - 02:19  crm 300 ms (ratio about 2.9: critical), across the 02:00 recompute,
                       which leaves the newest hour out, so the spike does not raise its own
                       baseline
  day 1 02:20 - 02:59  calm again
"""

import datetime
import json
import pathlib

START = datetime.datetime(2026, 10, 19, 0, 0, tzinfo=datetime.timezone.utc)
MINUTES = 27 * 60


def stamp(minute):
    return (START + datetime.timedelta(minutes=minute)).strftime("%Y-%m-%dT%H:%M:%SZ")


def crm(minute):
    day1 = minute - 24 * 60
    if 30 <= minute < 35:
        return 900.0
    if minute in (70, 71, 130, 131):
        return 400.0
    if 90 <= day1 < 100:
        return 170.0
    if 100 <= day1 < 140:
        return 300.0
    return 100.0 + minute % 7


def search(minute):
    return 200.0 + (minute * 3) % 11


def main():
    lines = []
    for minute in range(MINUTES):
        reading = {
            "cpu_pct": 30.0,
            "latency": [
                {"api": "crm", "p95_ms": crm(minute)},
                {"api": "search", "p95_ms": search(minute)},
            ],
        }
        lines.append(json.dumps({"at": stamp(minute), "reading": reading}, separators=(",", ":")))
    out = pathlib.Path(__file__).with_name("latency_learnt.jsonl")
    out.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
