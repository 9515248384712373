"""Summarize bench/results/redirect-copy-s3.csv into redirect-copy-s3-summary.csv and plot it
into redirect-copy-s3.png: wall time of SET REDIRECT server-side and through streams against
``mc cp --recursive`` on the same MinIO server, the bytes the executors' copy tasks read and
wrote, and the S3 requests the server counted.

The ratios pair each SET REDIRECT run with the ``mc cp`` run of the same repetition (the two
ran one after the other), and the summary gives their median."""

from __future__ import annotations

import csv
import statistics
from pathlib import Path
from typing import Dict, List

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
VARIANTS = ("mc", "server-side", "streams")
LABELS = {"mc": "mc cp --recursive", "server-side": "SET REDIRECT, server-side",
          "streams": "SET REDIRECT, streams"}


def number(row: Dict[str, str], key: str) -> float:
    return float(row[key]) if row.get(key) not in (None, "") else 0.0


def summarize(runs: List[Dict[str, str]]) -> List[Dict[str, object]]:
    by_rep: Dict[str, Dict[str, Dict[str, str]]] = {}
    for r in runs:
        by_rep.setdefault(r["repetition"], {})[r["variant"]] = r
    rows: List[Dict[str, object]] = []
    for variant in VARIANTS:
        mine = [r for r in runs if r["variant"] == variant]
        ratios = [number(rep[variant], "wall_s") / number(rep["mc"], "wall_s")
                  for rep in by_rep.values() if variant in rep and "mc" in rep]
        rows.append({
            "variant": variant,
            "runs": len(mine),
            "median_wall_s": round(statistics.median(number(r, "wall_s") for r in mine), 2),
            "min_wall_s": round(min(number(r, "wall_s") for r in mine), 2),
            "max_wall_s": round(max(number(r, "wall_s") for r in mine), 2),
            "median_ratio_to_mc": round(statistics.median(ratios), 3),
            "ratios_to_mc": " ".join(f"{x:.2f}" for x in ratios),
            "copy_task_bytes_read": int(statistics.median(number(r, "copy_task_read") for r in mine)),
            "copy_task_bytes_written":
                int(statistics.median(number(r, "copy_task_written") for r in mine)),
            "task_bytes_read": int(statistics.median(number(r, "task_read") for r in mine)),
            "bytes_through_executors":
                int(statistics.median(number(r, "bytes_through_executors") for r in mine)),
            "jvm_bytes_read": int(statistics.median(number(r, "jvm_read") for r in mine)),
            "jvm_bytes_written": int(statistics.median(number(r, "jvm_written") for r in mine)),
            "requests": int(statistics.median(number(r, "requests") for r in mine)),
            "CopyObject": int(statistics.median(number(r, "CopyObject") for r in mine)),
            "GetObject": int(statistics.median(number(r, "GetObject") for r in mine)),
            "PutObject": int(statistics.median(number(r, "PutObject") for r in mine)),
            "HeadObject": int(statistics.median(number(r, "HeadObject") for r in mine)),
            "ListObjectsV2": int(statistics.median(number(r, "ListObjectsV2") for r in mine)),
            "server_bytes_received":
                int(statistics.median(number(r, "server_received") for r in mine)),
            "server_bytes_sent": int(statistics.median(number(r, "server_sent") for r in mine)),
        })
    return rows


def main() -> None:
    with open(RESULTS / "redirect-copy-s3.csv", newline="") as f:
        runs = list(csv.DictReader(f))
    summary = summarize(runs)
    with open(RESULTS / "redirect-copy-s3-summary.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(summary[0]))
        writer.writeheader()
        writer.writerows(summary)

    fig, (times, moved, requests) = plt.subplots(1, 3, figsize=(16, 5))
    gib = number(runs[0], "bytes") / 2**30
    for i, variant in enumerate(VARIANTS):
        walls = [number(r, "wall_s") for r in runs if r["variant"] == variant]
        times.bar(i, statistics.median(walls), color=f"C{i}")
        times.scatter([i] * len(walls), walls, color="black", s=12, zorder=3)
    times.set_xticks(range(len(VARIANTS)))
    times.set_xticklabels([LABELS[v] for v in VARIANTS], fontsize=8)
    times.set_ylabel("seconds (bars: median; dots: runs)")
    times.set_title(f"Copying {gib:.1f} GiB in {runs[0]['files']} files on MinIO")

    copied = [v for v in VARIANTS if v != "mc"]
    for i, variant in enumerate(copied):
        row = next(s for s in summary if s["variant"] == variant)
        read, written = row["copy_task_bytes_read"], row["copy_task_bytes_written"]
        moved.bar([i - 0.2], [float(str(read)) / 2**20], width=0.4, color="C0",
                  label="read by copy tasks" if i == 0 else None)
        moved.bar([i + 0.2], [float(str(written)) / 2**20], width=0.4, color="C1",
                  label="written by copy tasks" if i == 0 else None)
        moved.annotate(f"{float(str(read)) / 2**20:.2f} / {float(str(written)) / 2**20:.2f} MiB",
                       (i, max(float(str(read)), float(str(written))) / 2**20),
                       ha="center", va="bottom", fontsize=8)
    moved.set_xticks(range(len(copied)))
    moved.set_xticklabels([LABELS[v] for v in copied], fontsize=8)
    moved.set_ylabel("MiB (Spark task input / output metrics)")
    moved.set_title("Bytes through the executors")
    moved.legend(fontsize=8)

    kinds = ("CopyObject", "GetObject", "PutObject", "HeadObject", "ListObjectsV2")
    for k, kind in enumerate(kinds):
        values = [float(str(next(s for s in summary if s["variant"] == v)[kind]))
                  for v in VARIANTS]
        requests.bar([i + (k - 2) * 0.16 for i in range(len(VARIANTS))], values, width=0.16,
                     label=kind)
    requests.set_xticks(range(len(VARIANTS)))
    requests.set_xticklabels([LABELS[v] for v in VARIANTS], fontsize=8)
    requests.set_ylabel("requests MinIO served (median run)")
    requests.set_title("S3 requests")
    requests.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(RESULTS / "redirect-copy-s3.png", dpi=110)


if __name__ == "__main__":
    main()
