"""Summarizes and plots the compaction benchmark (CompactionBenchmark + delta_rs_open.py):
bench/results/compaction-summary.csv (the ratios the README reports) and compaction.png."""

from __future__ import annotations

import csv
import statistics
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any, Dict, List

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"


def read(name: str) -> List[Dict[str, str]]:
    with open(RESULTS / name, newline="") as f:
        return list(csv.DictReader(f))


def draw_cold_snapshots(axis: Any, median: Dict[str, Dict[int, float]], fontsize: int) -> None:
    """The left panel of both plots: each variant's median cold snapshot per K."""
    for variant, by_k in sorted(median.items()):
        ks = sorted(by_k)
        axis.plot(ks, [by_k[k] for k in ks], marker="o", label=variant)
    axis.set_xlabel("commits after the checkpoint (K)")
    axis.set_ylabel("cold snapshot, median seconds")
    axis.set_title("Cold snapshot: fresh log, then a count of the files")
    axis.legend(fontsize=fontsize)


def draw_bytes_and_latency(
    middle: Any, right: Any, every10: Dict[str, str], policy: Dict[str, str],
    latency: Dict[str, List[float]], policy_label: str, latency_title: str,
) -> None:
    """The bytes-written bars and the INSERT-latency boxes, shared with plot_levels.py.

    Examples:
        >>> draw_bytes_and_latency(ax1, ax2, every10, policy, latency, "policy", "latency")  # doctest: +SKIP
    """
    names = ["checkpoint\nevery 10", policy_label]
    megabytes = [int(every10["bytes_written"]) / 1e6, int(policy["bytes_written"]) / 1e6]
    middle.bar(names, megabytes, color=["tab:gray", "tab:blue"])
    for i, mb in enumerate(megabytes):
        middle.annotate(f"{mb:.2f} MB", (i, mb), ha="center", va="bottom")
    middle.set_ylabel("log-maintenance MB written")
    middle.set_title(f"{every10['commits']} commits on a table of {every10['table_files']} files")

    right.boxplot([latency["policy off"], latency["policy on"]])
    right.set_xticks([1, 2], ["policy off", "policy on"])
    right.set_ylabel("INSERT commit, seconds")
    right.set_title(latency_title)


def main() -> int:
    cold: Dict[str, Dict[int, List[float]]] = defaultdict(lambda: defaultdict(list))
    for name in ("compaction-cold-runs.csv", "compaction-delta-rs.csv"):
        for row in read(name):
            cold[row["variant"]][int(row["commits_after_checkpoint"])].append(float(row["seconds"]))
    median = {v: {k: statistics.median(xs) for k, xs in ks.items()} for v, ks in cold.items()}
    bytes_rows = {row["variant"]: row for row in read("compaction-bytes.csv")}
    every10 = next(r for v, r in bytes_rows.items() if v.startswith("checkpoint every 10"))
    policy = next(r for v, r in bytes_rows.items() if v.startswith("policy"))
    latency: Dict[str, List[float]] = defaultdict(list)
    for row in read("compaction-commit-latency.csv"):
        latency[row["variant"]].append(float(row["seconds"]))

    stock_plain = median["delta-spark, plain commits"]
    stock_compacted = median["delta-spark, with compactions"]
    summary = [
        ("cold snapshot", "delta-spark with compactions, 99 commits after the checkpoint "
         "(interval 100) / delta-spark plain, 9 commits (interval 10)",
         stock_compacted[99] / stock_plain[9], 1.0),
        ("cold snapshot", "delta-spark with compactions / plain, 99 commits after the checkpoint",
         stock_compacted[99] / stock_plain[99], None),
        ("cold snapshot", "log core with compactions, 99 commits / delta-spark plain, 9 commits",
         median["log core, with compactions"][99] / stock_plain[9], None),
        ("bytes written", f"policy / checkpoint every 10, over {every10['commits']} commits on "
         f"{every10['table_files']} files",
         int(policy["bytes_written"]) / int(every10["bytes_written"]), 0.2),
        ("commit latency", "median INSERT with the post-commit policy on / off",
         statistics.median(latency["policy on"]) / statistics.median(latency["policy off"]), None),
    ]
    with open(RESULTS / "compaction-summary.csv", "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["benchmark", "ratio", "value", "goal"])
        for bench, ratio, value, goal in summary:
            writer.writerow([bench, ratio, f"{value:.3f}", "" if goal is None else goal])
            print(f"{bench}: {ratio}: {value:.3f}" + ("" if goal is None else f" (goal <= {goal})"))

    fig, (left, middle, right) = plt.subplots(1, 3, figsize=(18, 5))
    draw_cold_snapshots(left, median, fontsize=8)

    draw_bytes_and_latency(middle, right, every10, policy, latency,
                           "compaction every 10,\ncheckpoint every 100",
                           "Commit latency with the post-commit policy")
    fig.tight_layout()
    fig.savefig(RESULTS / "compaction.png", dpi=110)
    print("wrote", RESULTS / "compaction.png", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
