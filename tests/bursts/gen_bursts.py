#!/usr/bin/env python3
"""Writes the burst scenario family: days of CPU readings, one a minute, with short bursts above
the critical boundary every hour or two, the shape of a server that flaps under a static policy
(docs/behaviour.md §10.5, "The burst family"). The gate checks on them that a candidate flaps
no more than its base; `sentinel policy tune` may take them as evidence.

Run from anywhere: python3 tests/bursts/gen_bursts.py (the traces land beside this script).
Deterministic (each trace has its own seed); the committed .jsonl files are what the tests use,
and tests/tests/burst_family.rs checks they are what this script writes.

Every trace starts 2026-10-20T00:00:00Z and lasts DAYS days. The background is a daily wave,
BASE + SWING * sin(2 pi (minute - 360) / 1440) plus Gaussian noise of NOISE (lowest at 00:00,
highest at 12:00). Bursts start after a pause drawn uniformly from GAP minutes, last a duration
drawn from LENGTH minutes at a peak drawn from PEAK (% CPU, each minute the peak plus noise of
1.5, at least 85.5: above the critical boundary of every version in policies/), and may be
framed by shoulders of SHOULDER minutes at a level drawn from SHOULDER_LEVEL on each side. With
CLUSTER = (COUNT, PAUSE), bursts come in clusters of COUNT, a pause of PAUSE minutes apart. With
SAMPLE above 1, the minutes are recorded as a monitoring service does at that period (CloudWatch's
basic monitoring: 5 minutes): each SAMPLE minutes' mean, held until the next sample, as
`sentinel trace import` holds a CSV's samples.
Readings are clipped to 0..100 and written with one decimal.
"""

import datetime
import json
import pathlib
import math
import random

START = datetime.datetime(2026, 10, 20, 0, 0, tzinfo=datetime.timezone.utc)
DAYS = 2

# name: seed, BASE, SWING, NOISE, GAP, LENGTH, PEAK, SHOULDER, SHOULDER_LEVEL, CLUSTER, SAMPLE
FAMILY = {
    "bursts_hourly": (1, 35.0, 12.0, 3.0, (45, 90), (3, 6), (87.0, 96.0), (0, 0), None, None, 1),
    "bursts_two_hourly": (2, 35.0, 12.0, 3.0, (90, 150), (3, 8), (86.0, 95.0), (0, 0), None, None, 1),
    "bursts_shouldered": (3, 40.0, 10.0, 3.0, (60, 120), (2, 5), (86.0, 94.0), (3, 8), (72.0, 82.0), None, 1),
    "bursts_busy_base": (4, 58.0, 8.0, 4.0, (60, 120), (3, 6), (87.0, 95.0), (0, 0), None, None, 1),
    "bursts_sampled": (6, 55.0, 8.0, 4.0, (60, 120), (5, 10), (86.0, 95.0), (5, 5), (72.0, 84.5), None, 5),
    "bursts_sampled_hot": (7, 45.0, 8.0, 3.0, (60, 120), (5, 10), (86.0, 95.0), (5, 10), (80.0, 84.5), None, 5),
    "bursts_clustered": (5, 38.0, 10.0, 3.0, (60, 120), (3, 5), (86.0, 95.0), (0, 0), None, ((2, 3), (8, 14)), 1),
}


def stamp(minute):
    return (START + datetime.timedelta(minutes=minute)).strftime("%Y-%m-%dT%H:%M:%SZ")


def readings(seed, base, swing, noise, gap, length, peak, shoulder, shoulder_level, cluster, sample):
    rng = random.Random(seed)
    minutes = DAYS * 1440
    cpu = [base + swing * math.sin(2 * math.pi * (m - 360) / 1440) + rng.gauss(0, noise) for m in range(minutes)]
    m = rng.randint(*gap)
    while m < minutes:
        side = rng.randint(*shoulder)
        level = rng.uniform(*shoulder_level) if shoulder_level else None
        top = rng.uniform(*peak)
        burst = rng.randint(*length)
        for i in range(m, min(m + side, minutes)):
            cpu[i] = level + rng.gauss(0, 1.5)
        for i in range(m + side, min(m + side + burst, minutes)):
            cpu[i] = max(85.5, top + rng.gauss(0, 1.5))
        for i in range(m + side + burst, min(m + 2 * side + burst, minutes)):
            cpu[i] = level + rng.gauss(0, 1.5)
        m += 2 * side + burst
        if cluster:
            # More bursts of the cluster, each after a short pause at the background.
            for _ in range(rng.randint(*cluster[0]) - 1):
                m += rng.randint(*cluster[1])
                top = rng.uniform(*peak)
                burst = rng.randint(*length)
                for i in range(m, min(m + burst, minutes)):
                    cpu[i] = max(85.5, top + rng.gauss(0, 1.5))
                m += burst
        m += rng.randint(*gap)
    if sample > 1:
        # As a monitoring service records it: each SAMPLE minutes' mean, held until the next.
        for start in range(0, minutes, sample):
            window = cpu[start : start + sample]
            cpu[start : start + sample] = [sum(window) / len(window)] * len(window)
    return [min(100.0, max(0.0, round(v, 1))) for v in cpu]


def main():
    here = pathlib.Path(__file__).resolve().parent
    for name, params in FAMILY.items():
        lines = [json.dumps({"at": stamp(m), "reading": {"cpu_pct": v}}, separators=(",", ":")) for m, v in enumerate(readings(*params))]
        (here / f"{name}.jsonl").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
