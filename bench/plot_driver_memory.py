"""Plot bench/results/driver-memory.csv into driver-memory.png: for each table size, the
peak driver heap of each operation at each heap limit, with failed runs marked."""

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
    with open(RESULTS / "driver-memory.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    sizes = sorted({int(r["files"]) for r in rows})
    heaps = list(dict.fromkeys(r["heap"] for r in rows))
    labels = list(dict.fromkeys(f"{r['engine']}: {r['operation']}" for r in rows))
    fig, axes = plt.subplots(1, len(sizes), figsize=(7 * len(sizes), 6), squeeze=False)
    for ax, size in zip(axes[0], sizes):
        cell: Dict[Tuple[str, str], Dict[str, str]] = defaultdict(dict)
        for r in rows:
            if int(r["files"]) == size:
                cell[(f"{r['engine']}: {r['operation']}", r["heap"])] = r
        width = 0.8 / max(1, len(heaps))
        for i, heap in enumerate(heaps):
            ys: List[float] = []
            for label in labels:
                r = cell.get((label, heap), {})
                ys.append(float(r["peak_heap_mb"]) if r.get("outcome") == "ok" else 0.0)
            xs = [j + i * width for j in range(len(labels))]
            bars = ax.barh(xs, ys, height=width, label=f"-Xmx {heap}")
            for x, label, bar in zip(xs, labels, bars):
                r = cell.get((label, heap), {})
                if r and r.get("outcome") != "ok":
                    ax.text(5, x, f"{r['outcome']} at {heap}", va="center", fontsize=7,
                            color="red")
        ax.set_yticks([j + 0.4 - width / 2 for j in range(len(labels))])
        ax.set_yticklabels(labels, fontsize=8)
        ax.set_xlabel("peak driver heap used (MB)")
        ax.set_title(f"{size:,} active files (log only)")
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(RESULTS / "driver-memory.png", dpi=110)


if __name__ == "__main__":
    main()
