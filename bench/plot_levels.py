"""Summarizes and plots the levels benchmark (LevelsBenchmark + delta_rs_levels.py, plus the
cold count(*) requests of objectstore_requests.py when present): bench/results/levels-summary.csv
(the ratios bench/README.md reports, each with its goal) and levels.png."""

from __future__ import annotations

import csv
import statistics
import sys
from collections import defaultdict
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from plot_compaction import draw_bytes_and_latency, draw_cold_snapshots  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
REFERENCE = "delta-spark, interval 10 (checkpoint + 9 commits)"
LEVELS = "delta-spark, interval 1000 with levels"
CORE = "log core, interval 1000 with levels"


def read(name: str) -> List[Dict[str, str]]:
    """The rows of one CSV under bench/results.

    Examples:
        >>> read("levels-bytes.csv")[0]["variant"]  # doctest: +SKIP
        'checkpoint every 10 commits'
    """
    with open(RESULTS / name, newline="") as f:
        return list(csv.DictReader(f))


def main() -> int:
    """Write levels-summary.csv and levels.png from the runs' CSVs.

    Examples:
        >>> main()  # doctest: +SKIP
        0
    """
    cold: Dict[str, Dict[int, List[float]]] = defaultdict(lambda: defaultdict(list))
    for name in ("levels-cold-runs.csv", "levels-delta-rs.csv"):
        for row in read(name):
            cold[row["variant"]][int(row["commits_after_checkpoint"])].append(float(row["seconds"]))
    median = {v: {k: statistics.median(xs) for k, xs in ks.items()} for v, ks in cold.items()}
    reference = statistics.median(x for xs in cold[REFERENCE].values() for x in xs)
    bytes_rows = {row["variant"]: row for row in read("levels-bytes.csv")}
    every10 = next(r for v, r in bytes_rows.items() if v.startswith("checkpoint every 10"))
    policy = next(r for v, r in bytes_rows.items() if v.startswith("policy"))
    latency: Dict[str, List[float]] = defaultdict(list)
    for row in read("levels-commit-latency.csv"):
        latency[row["variant"]].append(float(row["seconds"]))
    files_read = {int(r["commits_after_checkpoint"]): int(r["delta_spark_log_files_after_checkpoint"])
                  for r in read("levels-files-read.csv")}

    summary: List[Tuple[str, str, float, Optional[float]]] = []
    for k in sorted(median[LEVELS]):
        summary.append(("cold snapshot", f"delta-spark, interval 1000 with levels, K={k} "
                        f"({files_read.get(k, '?')} log files) / interval 10 worst case "
                        f"(checkpoint + 9 commits)", median[LEVELS][k] / reference, 1.0))
    for k in sorted(median[CORE]):
        summary.append(("cold snapshot", f"log core, interval 1000 with levels, K={k} / "
                        "delta-spark interval 10 worst case", median[CORE][k] / reference, None))
    summary.append(("bytes written", f"policy with levels / checkpoint every 10, over "
                    f"{every10['commits']} commits on {every10['table_files']} files",
                    int(policy["bytes_written"]) / int(every10["bytes_written"]), 0.02))
    summary.append(("commit latency", "median INSERT with the post-commit policy on / off",
                    statistics.median(latency["policy on"]) / statistics.median(latency["policy off"]),
                    1.05))
    requests = RESULTS / "levels-requests.csv"
    if requests.exists():
        by_variant = {r["variant"]: int(r["requests"]) for r in read("levels-requests.csv")}
        for variant, count in sorted(by_variant.items()):
            summary.append(("S3 requests", f"cold count(*): {variant}", float(count), None))
    with open(RESULTS / "levels-summary.csv", "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["benchmark", "ratio", "value", "goal"])
        for bench, ratio, value, goal in summary:
            writer.writerow([bench, ratio, f"{value:.3f}", "" if goal is None else goal])
            verdict = "" if goal is None else (" MET" if value <= goal else " MISSED")
            print(f"{bench}: {ratio}: {value:.3f}" + ("" if goal is None else f" (goal <= {goal}){verdict}"))

    fig, (left, middle, right) = plt.subplots(1, 3, figsize=(18, 5))
    draw_cold_snapshots(left, median, fontsize=7)
    left.axhline(reference, color="gray", linestyle="--", linewidth=0.8)
    left.set_xscale("log")

    draw_bytes_and_latency(middle, right, every10, policy, latency,
                           "levels 10/100,\ncheckpoint every 1000",
                           "INSERT latency (checkpoint interval 1000)")
    fig.tight_layout()
    fig.savefig(RESULTS / "levels.png", dpi=110)
    print("wrote", RESULTS / "levels.png", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
