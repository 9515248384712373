"""Plots the object-store request benchmark (bench/objectstore_requests.py): for each
LogStore setup and log length, the S3 requests of each operation, delta-lifecycle beside
stock delta-spark, stacked by request type. Reads objectstore-requests-summary.csv (medians),
writes objectstore-requests.png."""

from __future__ import annotations

import csv
from collections import defaultdict
from pathlib import Path
from typing import Dict, List, Tuple

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
TYPES = ["LIST", "HEAD", "GET", "PUT", "DELETE", "COPY"]
COLORS = {"LIST": "#d62728", "HEAD": "#ff7f0e", "GET": "#1f77b4", "PUT": "#2ca02c",
          "DELETE": "#7f7f7f", "COPY": "#9467bd"}
#: DESCRIBE HISTORY reads every commit: thousands of GETs would flatten every other bar.
SKIP = {"DESCRIBE HISTORY", "DESCRIBE PROTOCOL HISTORY"}


def _num(v: str) -> float:
    return float(v) if v not in ("", "None") else float("nan")


def markdown(rows: List[Dict[str, str]]) -> str:
    """The README table: per operation, log length and LogStore setup, the requests of each
    engine as LIST/HEAD/GET/PUT/DELETE (total), and the difference in totals."""
    cells: Dict[Tuple[str, str, str], Dict[str, Dict[str, float]]] = defaultdict(
        lambda: defaultdict(dict))
    order: List[Tuple[str, str, str]] = []
    for r in rows:
        key = (r["logstore"], r["log_length"], r["operation"])
        if key not in cells:
            order.append(key)
        for engine, column in (("ext", "delta_lifecycle"), ("stock", "stock")):
            cells[key][engine][r["request"]] = _num(r[column])

    def fmt(c: Dict[str, float]) -> str:
        if c.get("failed", 0) == c.get("failed", 0) and c.get("failed", 0) > 0:
            return "failed (NoSuchMethodError, see below)"
        if not c or c.get("LIST", float("nan")) != c.get("LIST", float("nan")):
            return "—"
        total = sum(c.get(t, 0) for t in TYPES)
        parts = "/".join(f"{c.get(t, 0):.0f}" for t in TYPES[:5])
        return f"{parts} (**{total:.0f}**), {c.get('wall_ms', 0) / 1000:.1f} s"

    lines = ["| LogStore | commits | operation | delta-lifecycle: LIST/HEAD/GET/PUT/DELETE (total), "
             "wall | stock delta-spark: same | difference |",
             "| --- | --- | --- | --- | --- | --- |"]
    for key in order:
        ext, stock = cells[key]["ext"], cells[key]["stock"]
        diff = "—"
        if fmt(ext)[0].isdigit() and fmt(stock)[0].isdigit():
            d = sum(ext.get(t, 0) for t in TYPES) - sum(stock.get(t, 0) for t in TYPES)
            diff = f"{d:+.0f}"
        lines.append(f"| {key[0]} | {int(key[1]):,} | {key[2]} | {fmt(ext)} | {fmt(stock)} "
                     f"| {diff} |")
    return "\n".join(lines)


def main() -> int:
    with open(RESULTS / "objectstore-requests-summary.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    print(markdown(rows))
    data: Dict[Tuple[str, int], Dict[str, Dict[str, Dict[str, float]]]] = defaultdict(
        lambda: defaultdict(lambda: defaultdict(dict)))
    ops: Dict[Tuple[str, int], List[str]] = defaultdict(list)
    failed = {(r["logstore"], r["log_length"], r["operation"]) for r in rows
              if r["request"] == "failed"}
    for r in rows:
        if r["request"] not in TYPES or r["operation"] in SKIP:
            continue
        if (r["logstore"], r["log_length"], r["operation"]) in failed:
            continue  # a failed statement's requests say nothing (fast-listfrom)
        key = (r["logstore"], int(r["log_length"]))
        if r["operation"] not in ops[key]:
            ops[key].append(r["operation"])
        for engine, column in (("delta-lifecycle", "delta_lifecycle"), ("stock", "stock")):
            if r[column] not in ("", "None"):
                data[key][r["operation"]][engine][r["request"]] = float(r[column])
    panels = sorted(data, key=lambda k: (k[0], k[1]))
    fig, axes = plt.subplots(len(panels), 1, figsize=(12, 3.6 * len(panels)), squeeze=False)
    for ax, key in zip(axes[:, 0], panels):
        labels, x = [], 0.0
        for op in ops[key]:
            for engine, hatch in (("delta-lifecycle", ""), ("stock", "//")):
                counts = data[key][op].get(engine)
                if not counts:
                    continue
                bottom = 0.0
                for t in TYPES:
                    v = counts.get(t, 0.0)
                    if v:
                        ax.bar(x, v, bottom=bottom, color=COLORS[t], hatch=hatch,
                               edgecolor="white", width=0.8)
                    bottom += v
                ax.text(x, bottom, f"{bottom:.0f}", ha="center", va="bottom", fontsize=7)
                labels.append((x, f"{op}\n{'ext' if engine == 'delta-lifecycle' else 'stock'}"))
                x += 1
            x += 0.6
        ax.set_xticks([p for p, _ in labels])
        ax.set_xticklabels([t for _, t in labels], fontsize=6, rotation=90)
        ax.set_ylabel("S3 requests")
        ax.set_title(f"LogStore {key[0]}, {key[1]:,} commits (hatched: stock delta-spark)")
    handles = [plt.Rectangle((0, 0), 1, 1, color=COLORS[t]) for t in TYPES]
    axes[0, 0].legend(handles, TYPES, fontsize=7, ncol=6, loc="upper left")
    fig.tight_layout()
    fig.savefig(RESULTS / "objectstore-requests.png", dpi=110)
    print(f"wrote {RESULTS / 'objectstore-requests.png'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
