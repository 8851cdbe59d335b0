#!/usr/bin/env python3
"""A simulated fleet's CPU history for tuning at fleet scale (BENCHMARKS.md, "Tuning a fleet"):
SERIES servers × DAYS days of 5-minute CPU samples, each derived from one of the repository's
real series (tests/data/cloudwatch/*.csv and tests/data/known-cause's CPU series, round robin):
started at a random point of it and looped, scaled by a factor in [0.7, 1.3] and raised by 0 to
10 points, clamped to [0, 100]. The same arguments give the same files (seeded).

    bench/fleet/history.py OUT_DIR [--series 200] [--days 90] [--seed 53]

Writes OUT_DIR/server-NNN.csv (timestamp,value), each one series for `sentinel policy tune`.
"""

import argparse
import csv
import random
from datetime import datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted((ROOT / "tests/data/cloudwatch").glob("*.csv")) + [
    ROOT / "tests/data/known-cause/cpu_utilization_asg_misconfiguration.csv"
]
START = datetime(2026, 1, 1)


def values(path: Path) -> list:
    with path.open(newline="") as f:
        return [float(row["value"]) for row in csv.DictReader(f)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--series", type=int, default=200)
    parser.add_argument("--days", type=int, default=90)
    parser.add_argument("--seed", type=int, default=53)
    args = parser.parse_args()
    if args.series < 1 or args.days < 1:
        parser.error("--series and --days must be at least 1")
    rng = random.Random(args.seed)
    sources = [values(p) for p in SOURCES]
    args.out.mkdir(parents=True, exist_ok=True)
    samples = args.days * 288
    for k in range(args.series):
        source = sources[k % len(sources)]
        start, scale, lift = rng.randrange(len(source)), 0.7 + 0.6 * rng.random(), 10.0 * rng.random()
        with (args.out / f"server-{k:03d}.csv").open("w", newline="") as f:
            out = csv.writer(f)
            out.writerow(["timestamp", "value"])
            for i in range(samples):
                v = min(100.0, max(0.0, source[(start + i) % len(source)] * scale + lift))
                out.writerow([(START + timedelta(minutes=5 * i)).strftime("%Y-%m-%d %H:%M:%S"), f"{v:.3f}"])
    print(f"{args.series} series of {args.days} days ({args.series * samples} samples) in {args.out}")


if __name__ == "__main__":
    main()
