"""Benchmark: the same statements on a two-worker standalone cluster and in
``local[2]``, with this project and with stock delta-spark, in one run.

- DROP FEATURE deletionVectors on the table of bench/drop_feature.py (1,000 files, 100 of them
  with deletion vectors), on a fresh copy for every run;
- SET REDIRECT on the table of bench/redirect_copy.py (``--gb`` GB in ``--files`` files,
  built once and cached), then UNSET REDIRECT and the destination removed, untimed.

The cluster is tests/cluster/standalone.py's: a master and two workers of one core and 1 GB,
every executor its own JVM. Each (deployment, client) pair runs in a process of its own; only
the statement is timed. Stock delta-spark has no SET REDIRECT; its DROP FEATURE is recorded
with its outcome (on the cluster delta-spark 4.4.0's REORG fails in its tasks).

    python bench/on_cluster.py [--gb 5] [--files 2000] [--repetitions 2]

writes bench/results/cluster.csv and cluster.png.
"""

from __future__ import annotations

import argparse
import csv
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT.parent / "tests"))
sys.path.insert(0, str(ROOT))

import drop_feature  # noqa: E402
from spark_sessions import SessionSpec, preamble  # noqa: E402
import redirect_copy  # noqa: E402
from cluster.standalone import StandaloneCluster, free_port  # noqa: E402

WORK = ROOT / "work" / "cluster"
RESULTS = ROOT / "results"

#: Either client's session on the cluster (its master and UI port come with the run).
CLUSTER_SESSION = SessionSpec(
    conf={
        "spark.ui.showConsoleProgress": "false",
        "spark.driver.host": "127.0.0.1",
        "spark.driver.bindAddress": "127.0.0.1",
        "spark.executor.memory": "768m",
        "spark.driver.memory": "2g",
        "spark.sql.shuffle.partitions": "2",
        "spark.databricks.delta.snapshotPartitions": "2",
    },
    log_level="ERROR",
)

SESSION = r"""
import json, shutil, sys, time

client, master, spec = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
""" + preamble(
    CLUSTER_SESSION,
    extension='client == "delta-lifecycle"',
    master="master",
    conf='{"spark.ui.port": spec["ui_port"]}',
) + r"""

def timed(statement):
    start = time.perf_counter()
    try:
        spark.sql(statement).collect()
        return {"outcome": "ok", "seconds": round(time.perf_counter() - start, 2), "error": ""}
    except Exception as e:
        # Py4J's first line names only the call; the cause is the first line with a condition.
        lines = str(e).splitlines()
        text = next((l.strip() for l in lines if "[" in l and "]" in l), lines[0])[:200]
        return {"outcome": "failed", "seconds": round(time.perf_counter() - start, 2), "error": text}

out = []
for path in spec["dv_tables"]:
    result = timed(f"ALTER TABLE delta.`{path}` DROP FEATURE deletionVectors")
    if result["outcome"] == "ok":
        assert spark.read.format("delta").load(path).count() == spec["dv_rows"]
    out.append({"statement": "DROP FEATURE deletionVectors", **result})
if client == "delta-lifecycle":
    for rep in range(spec["repetitions"]):
        src, dest = spec["redirect_table"], spec["redirect_dest"]
        result = timed(f"ALTER TABLE delta.`{src}` SET REDIRECT TO '{dest}'")
        out.append({"statement": "SET REDIRECT", **result})
        if result["outcome"] == "ok":
            spark.sql(f"ALTER TABLE delta.`{src}` UNSET REDIRECT").collect()
        shutil.rmtree(dest, ignore_errors=True)
print("RESULT " + json.dumps(out))
"""


def run_session(client: str, master: str, spec: Dict[str, Any]) -> List[Dict[str, Any]]:
    done = subprocess.run(
        [sys.executable, "-c", SESSION, client, master, json.dumps(spec)],
        capture_output=True, text=True,
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    if done.returncode != 0 or not lines:
        raise SystemExit(f"{client} on {master} failed:\n{done.stderr[-4000:]}")
    result: List[Dict[str, Any]] = json.loads(lines[-1][len("RESULT "):])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gb", type=float, default=5)
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--repetitions", type=int, default=2)
    args = parser.parse_args()

    shutil.rmtree(WORK, ignore_errors=True)
    WORK.mkdir(parents=True)
    drop_feature.WORK.mkdir(parents=True, exist_ok=True)
    dv_base = WORK / "dv-base"
    built = drop_feature.run_worker("build", {
        "path": str(dv_base), "files": drop_feature.FILES, "rows": drop_feature.ROWS_PER_FILE,
        "dv_files": drop_feature.FILES_WITH_DVS})
    redirect_table = redirect_copy.build(args.gb, args.files)
    size = redirect_copy.du(redirect_table)

    cluster = StandaloneCluster.start(WORK / "standalone", workers=2)
    rows: List[Dict[str, Any]] = []
    try:
        for deployment, master in (("cluster", cluster.url), ("local[2]", "local[2]")):
            for client in ("delta-lifecycle", "delta-spark"):
                tables = []
                for rep in range(args.repetitions):
                    copy = WORK / f"dv-{deployment}-{client}-{rep}"
                    shutil.copytree(dv_base, copy)
                    tables.append(str(copy))
                spec = {"dv_tables": tables, "dv_rows": built["rows"],
                        "repetitions": args.repetitions, "redirect_table": str(redirect_table),
                        "redirect_dest": str(WORK / "redirect-dest"), "ui_port": str(free_port())}
                started = time.monotonic()
                for i, result in enumerate(run_session(client, master, spec)):
                    row = {"deployment": deployment, "client": client, **result,
                           "table": (f"{drop_feature.FILES} files, {drop_feature.FILES_WITH_DVS} "
                                     "with DVs" if result["statement"].startswith("DROP")
                                     else f"{args.files} files, {size / 2**30:.2f} GiB")}
                    rows.append(row)
                    print(row, flush=True)
                print(f"{client} on {deployment}: {time.monotonic() - started:.0f} s", flush=True)
    finally:
        cluster.stop()

    RESULTS.mkdir(exist_ok=True)
    with open(RESULTS / "cluster.csv", "w", newline="") as f:
        writer = csv.DictWriter(
            f, fieldnames=["deployment", "client", "statement", "table", "outcome", "seconds",
                           "error"])
        writer.writeheader()
        writer.writerows(rows)
    plot(rows)


def plot(rows: List[Dict[str, Any]]) -> None:
    import statistics

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    groups = [("DROP FEATURE deletionVectors", "delta-lifecycle"),
              ("DROP FEATURE deletionVectors", "delta-spark"),
              ("SET REDIRECT", "delta-lifecycle")]
    fig, ax = plt.subplots(figsize=(8, 4.5))
    width = 0.38
    for offset, deployment, color in ((-width / 2, "cluster", "#1f77b4"),
                                      (width / 2, "local[2]", "#999999")):
        for x, (statement, client) in enumerate(groups):
            runs = [r for r in rows if (r["statement"], r["client"], r["deployment"]) ==
                    (statement, client, deployment)]
            ok = [r["seconds"] for r in runs if r["outcome"] == "ok"]
            if ok:
                ax.bar(x + offset, statistics.median(ok), width, color=color,
                       label=deployment if x == 0 else None)
            elif runs:
                ax.text(x + offset, 0.5, "fails", ha="center", rotation=90, color="red")
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels([f"{s}\n({c})" for s, c in groups], fontsize=8)
    ax.set_ylabel("median wall time (s)")
    ax.set_title("Two-worker standalone cluster vs local[2]")
    ax.legend()
    fig.tight_layout()
    fig.savefig(RESULTS / "cluster.png", dpi=120)


if __name__ == "__main__":
    main()
