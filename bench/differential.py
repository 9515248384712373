"""Benchmark: every operation of the differential corpus with this extension against stock
delta-spark, in the same run.

Two processes stay up for the whole run, each a runner of the differential suite in serve
mode (tests/differential/runner.py): stock delta-spark (its extension and catalog only) and a
session set up by ``configure_spark``, each with its own Hive metastore on Derby. For each
repetition and each operation, by name and by path, the coordinator asks one process and
then the other (the order alternates between repetitions, and only one process works at a
time): each sets up a fresh table with the operation's setup and times the operation alone.
The first repetition is a warm-up and is not counted. Each timing records the error the
operation gave, if any, and the machine's load; a disagreement between the sessions is
printed (the differential suite is where they are compared).

    python bench/differential.py [repetitions] [operation ...]

writes bench/results/differential-runs.csv (every timing), differential-summary.csv (medians,
the ratio of medians and the median of the paired ratios) and differential.png.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

ROOT = Path(__file__).resolve().parent
REPO = ROOT.parent
WORK = ROOT / "work" / "differential"
RESULTS = ROOT / "results"
RUNNER = REPO / "tests" / "differential" / "runner.py"
sys.path.insert(0, str(REPO / "tests"))

from differential.corpus import OPERATIONS  # noqa: E402

SESSIONS = ("stock", "extension")
KINDS = ("name", "path")
GOAL = 1.05

#: The settings of both sessions (the test suite's small local settings).
CONF = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.shuffle.partitions": "2",
    "spark.databricks.delta.snapshotPartitions": "2",
    "spark.sql.sources.parallelPartitionDiscovery.parallelism": "4",
}


class Server:
    """A runner process in serve mode."""

    def __init__(self, session: str) -> None:
        root = WORK / session
        root.mkdir(parents=True)
        spec = {"session": session, "root": str(root), "conf": CONF}
        (WORK / f"{session}-spec.json").write_text(json.dumps(spec))
        self.log = open(WORK / f"{session}.log", "w")
        self.process = subprocess.Popen(
            [sys.executable, str(RUNNER), "serve", str(WORK / f"{session}-spec.json")],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log, text=True,
        )
        self._read_until("READY")

    def _read_until(self, prefix: str) -> str:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            if line.startswith(prefix):
                return line[len(prefix):].strip()
        raise RuntimeError(f"runner exited: see {self.log.name}")

    def time(self, op: str, kind: str, tag: str) -> Dict[str, Any]:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps({"op": op, "kind": kind, "tag": tag}) + "\n")
        self.process.stdin.flush()
        answer: Dict[str, Any] = json.loads(self._read_until("ANSWER "))
        return answer

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=300)


def measure(ops: List[str], repetitions: int) -> List[Dict[str, Any]]:
    servers = {session: Server(session) for session in SESSIONS}
    rows: List[Dict[str, Any]] = []
    try:
        for rep in range(repetitions + 1):
            order = SESSIONS if rep % 2 == 0 else tuple(reversed(SESSIONS))
            started = time.monotonic()
            for op in ops:
                for kind in KINDS:
                    answers = {s: servers[s].time(op, kind, f"r{rep}") for s in order}
                    errors = {s: a["error"] for s, a in answers.items()}
                    if len(set(errors.values())) > 1:
                        print(f"{op} by {kind}: the sessions disagree: {errors}", flush=True)
                    for s, a in answers.items():
                        rows.append({"session": s, "operation": op, "kind": kind,
                                     "repetition": rep, "seconds": a["seconds"],
                                     "error": a["error"] or "", "load": os.getloadavg()[0]})
            print(f"repetition {rep} ({'warm-up' if rep == 0 else 'measured'}): "
                  f"{time.monotonic() - started:.0f} s, load {os.getloadavg()[0]:.1f}", flush=True)
    finally:
        for server in servers.values():
            server.close()
    return rows


def summarize(rows: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    measured = [r for r in rows if r["repetition"] > 0]
    summary = []
    for op in dict.fromkeys(r["operation"] for r in measured):
        for kind in KINDS:
            times = {s: {r["repetition"]: r["seconds"] for r in measured
                         if (r["operation"], r["kind"], r["session"]) == (op, kind, s)}
                     for s in SESSIONS}
            stock, ours = (statistics.median(times[s].values()) for s in SESSIONS)
            pairs = [times["extension"][rep] / times["stock"][rep] for rep in times["stock"]]
            summary.append({"operation": op, "kind": kind, "stock_s": f"{stock:.4f}",
                            "extension_s": f"{ours:.4f}", "ratio": f"{ours / stock:.3f}",
                            "paired_ratio": f"{statistics.median(pairs):.3f}"})
    return summary


def write_csv(path: Path, rows: List[Dict[str, Any]]) -> None:
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def plot(summary: List[Dict[str, Any]]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ops = list(dict.fromkeys(r["operation"] for r in summary))
    fig, axes = plt.subplots(1, 2, figsize=(14, 0.22 * len(ops) + 1.5), sharey=True)
    for ax, kind in zip(axes, KINDS):
        ratio = {r["operation"]: float(r["ratio"]) for r in summary if r["kind"] == kind}
        values = [ratio[op] for op in ops]
        ax.barh(ops, values, color=["#d83b3b" if v > GOAL else "#3b7dd8" for v in values])
        ax.axvline(1.0, color="black", linewidth=0.8)
        ax.axvline(GOAL, color="red", linestyle="--", linewidth=0.8)
        ax.set_title(f"by {kind}")
        ax.set_xlabel("extension / stock (median seconds)")
        ax.tick_params(axis="y", labelsize=7)
    axes[0].invert_yaxis()
    fig.suptitle("Differential corpus: each operation with the extension against stock delta-spark")
    fig.tight_layout()
    fig.savefig(RESULTS / "differential.png", dpi=110)


def main(argv: List[str]) -> int:
    repetitions = int(argv[0]) if argv else 5
    ops: List[str] = argv[1:] or [op.name for op in OPERATIONS]
    shutil.rmtree(WORK, ignore_errors=True)
    WORK.mkdir(parents=True)
    RESULTS.mkdir(exist_ok=True)
    rows = measure(ops, repetitions)
    summary = summarize(rows)
    write_csv(RESULTS / "differential-runs.csv", rows)
    write_csv(RESULTS / "differential-summary.csv", summary)
    plot(summary)
    slower: Optional[List[str]] = [f"{r['operation']} by {r['kind']}: {r['ratio']}x"
                                   for r in summary if float(r["ratio"]) > GOAL]
    print(f"{len(summary)} timings; over {GOAL}x: {slower or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
