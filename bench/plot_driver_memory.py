"""Plot bench/results/driver-memory.csv into driver-memory.png: for each table size, the wall
time and the peak heap of every statement, this extension's and stock delta-spark's, at 1g
where that size was measured at 1g (else at the first heap measured); a statement that did not
finish is marked with how it ended."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Dict, List

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
COLORS = {"delta-lifecycle": "tab:blue", "stock": "tab:gray"}


def main() -> None:
    with open(RESULTS / "driver-memory.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    sizes = sorted({int(r["files"]) for r in rows})
    heaps = {size: next((r["heap"] for r in rows if int(r["files"]) == size and r["heap"] == "1g"),
                        next(r["heap"] for r in rows if int(r["files"]) == size))
             for size in sizes}
    rows = [r for r in rows if r["heap"] == heaps[int(r["files"])]]
    # This extension's statements, each followed by stock's comparable one where stock has it.
    labels: List[str] = []
    for r in rows:
        label = f"{r['engine']}: {r['operation']}"
        if label not in labels:
            labels.append(label)
    fig, axes = plt.subplots(len(sizes), 2, figsize=(16, 0.32 * len(labels) * len(sizes) + 2),
                             squeeze=False)
    for row_axes, size in zip(axes, sizes):
        cell: Dict[str, Dict[str, str]] = {
            f"{r['engine']}: {r['operation']}": r for r in rows if int(r["files"]) == size}
        for ax, (column, unit) in zip(row_axes, [("wall_s", "wall time (s)"),
                                                 ("peak_heap_mb", "peak heap in use (MB)")]):
            for y, label in enumerate(labels):
                r = cell.get(label)
                if r is None:
                    continue
                # A run that did not finish shows how long it ran and what it used, faded.
                value = float(r[column]) if r[column] else 0.0
                ax.barh(y, value, color=COLORS.get(r["engine"], "tab:blue"),
                        alpha=1.0 if r["outcome"] == "ok" else 0.35)
                if r["outcome"] != "ok":
                    ax.text(value, y, f"  {r['outcome']}", va="center", fontsize=7, color="red")
            ax.set_yticks(range(len(labels)))
            ax.set_yticklabels(labels, fontsize=7)
            ax.invert_yaxis()
            ax.set_xlabel(unit)
            ax.set_title(f"{size:,} files, spark.driver.memory={heaps[size]}, local[2]", fontsize=9)
    fig.tight_layout()
    fig.savefig(RESULTS / "driver-memory.png", dpi=100)


if __name__ == "__main__":
    main()
