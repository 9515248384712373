"""Plots bench/results/foundation-runs.csv (written by FoundationBenchmark) as bench/results/foundation.png."""

from __future__ import annotations

import csv
import statistics
import sys
from collections import defaultdict
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"


def main() -> int:
    runs: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    commits = "?"
    with open(RESULTS / "foundation-runs.csv", newline="") as f:
        for row in csv.DictReader(f):
            runs[row["benchmark"]][row["variant"]].append(float(row["seconds"]))
            commits = row["commits"]

    fig, axes = plt.subplots(1, len(runs), figsize=(6 * len(runs), 4.5))
    for ax, (benchmark, variants) in zip(axes, runs.items()):
        names = list(variants)
        medians = [statistics.median(variants[n]) for n in names]
        colors = ["tab:green" if n.startswith("delta-lifecycle") else "tab:gray" for n in names]
        ax.barh(range(len(names)), medians, color=colors)
        ax.set_yticks(range(len(names)), [n.replace(" ", "\n", 1) for n in names], fontsize=8)
        ax.invert_yaxis()
        ax.set_xlabel("median wall time (s), lower is better")
        ax.set_title(benchmark)
        ax.set_xlim(0, max(medians) * 1.2)
        for i, m in enumerate(medians):
            ax.text(m, i, f" {m:.2f}s", va="center", fontsize=8)
    fig.suptitle(f"Delta table with {commits} commits, checkpoint every 100 (green: delta-lifecycle)")
    fig.tight_layout()
    fig.savefig(RESULTS / "foundation.png", dpi=110)
    print(f"wrote {RESULTS / 'foundation.png'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
