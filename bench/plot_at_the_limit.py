"""Plot bench/results/at-the-limit.csv into at-the-limit.png: for each statement, its wall time
against the table's files on log-log axes, one line per statement, with the physical limits it
is compared with (the column scan; the scan and delta-spark's checkpoint) dashed under them, and
delta-spark's own statements in a stock session beside this extension's."""

from __future__ import annotations

import csv
from collections import defaultdict
from pathlib import Path
from typing import Dict, List, Tuple

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"


def main() -> None:
    with open(RESULTS / "at-the-limit.csv", newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["outcome"] == "ok" and r["wall_s"]]
    lines: Dict[str, List[Tuple[int, float]]] = defaultdict(list)
    limits: Dict[str, List[Tuple[int, float]]] = defaultdict(list)
    for r in rows:
        n = int(r["files"])
        if r["engine"] == "delta-lifecycle":
            lines[r["statement"]].append((n, float(r["wall_s"])))
            if r["limit_s"] and float(r["limit_s"]) > 0:
                limits[r["limit"]].append((n, float(r["limit_s"])))
        elif r["engine"] == "stock":
            lines[f"{r['statement']} (stock)"].append((n, float(r["wall_s"])))
    fig, ax = plt.subplots(figsize=(11, 7))
    cmap = plt.get_cmap("tab20")
    for i, (name, points) in enumerate(sorted(lines.items())):
        points.sort()
        stock = name.endswith("(stock)")
        ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", markersize=3,
                linewidth=1.2, color="black" if stock else cmap(i % 20),
                linestyle=":" if stock else "-", label=name)
    for name, points in sorted(limits.items()):
        # The limit measured beside each statement: the smallest of a size's measurements.
        best: Dict[int, float] = {}
        for n, s in points:
            best[n] = min(s, best.get(n, s))
        xs = sorted(best)
        ax.plot(xs, [best[x] for x in xs], linestyle="--", linewidth=2.5, color="gray",
                alpha=0.6 if name == "scan" else 0.9, label=f"limit: {name}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("files in the table")
    ax.set_ylabel("wall time (s)")
    ax.set_title("Each statement against its physical limit (local[2], 1 GB driver)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="upper left", ncol=2)
    fig.tight_layout()
    fig.savefig(RESULTS / "at-the-limit.png", dpi=100)


if __name__ == "__main__":
    main()
