"""Benchmark: query latency on a redirected table against querying its destination directly.

One table of 200 files (2,000,000 rows, 60 commits after its last checkpoint, so the
redirect lookup has a log tail to read) is redirected with SET REDIRECT; its destination
is a plain Delta table. In one session with this extension and its catalog, the same
aggregate query runs, round-robin, against:

- ``by name``: the redirected catalog table (routed by LifecycleCatalog);
- ``by path``: ``delta.`<source>``` (routed by LifecycleCatalog);
- ``load(path)``: ``spark.read.format("delta").load(<source>)`` (routed by the analyzer rule);
- the baselines, with no redirect to follow: the destination by name (registered as a
  catalog table), as ``delta.`<destination>``` and by ``load(<destination>)``. Each access
  to the source is compared with the destination accessed the same way.

For reference, in the same run, stock delta-spark (its own process, no extension) and
delta-rs query the destination. Every query's result is checked against the expected
count and sum. Only the query (analysis through collect) is timed.

    python bench/redirect.py [repetitions]

writes bench/results/redirect-runs.csv, redirect-summary.csv and redirect.png.
"""

from __future__ import annotations

import csv
import json
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List

ROOT = Path(__file__).resolve().parent
sys.path.append(str(ROOT.parent / "tests"))

from spark_sessions import SMALL_LOCAL_SESSION, preamble  # noqa: E402

WORK = ROOT / "work" / "redirect"
RESULTS = ROOT / "results"
FILES = 200
ROWS_PER_FILE = 10_000
TAIL_COMMITS = 60

QUERY = "SELECT count(*) AS n, sum(id) AS s FROM {table} WHERE id % 7 = 0"


WORKER = r"""
import json, sys, time

mode, spec = sys.argv[1], json.loads(sys.argv[2])
""" + preamble(
    SMALL_LOCAL_SESSION,
    extension='mode != "stock"',
    conf='{"spark.sql.warehouse.dir": spec["warehouse"]}',
) + r"""
src, dest, query = spec["source"], spec["destination"], spec["query"]

if mode == "delta-lifecycle":
    # The session catalog lives in this process, so the table is built and redirected here.
    spark.sql(f"CREATE TABLE redirected_events (id BIGINT) USING delta LOCATION '{src}' "
              "TBLPROPERTIES ('delta.checkpointInterval' = '1000')")
    files, per_file, tail = spec["files"], spec["rows_per_file"], spec["tail"]
    # The bulk in one commit, checkpointed; then a tail of small commits after the checkpoint.
    (spark.range(0, (files - tail) * per_file, numPartitions=files - tail)
        .write.format("delta").mode("append").save(src))
    spark._jvm.org.apache.spark.sql.delta.DeltaLog.forTable(spark._jsparkSession, src).checkpoint()
    start = (files - tail) * per_file
    for i in range(tail):
        spark.range(start + i * per_file, start + (i + 1) * per_file, numPartitions=1).write.format("delta").mode("append").save(src)
    status = spark.sql(f"ALTER TABLE redirected_events SET REDIRECT TO '{dest}'").collect()[0]
    assert status["state"] == "READY", status
    # The destination by name too, so names are compared with names and paths with paths.
    spark.sql(f"CREATE TABLE destination_events USING delta LOCATION '{dest}'")

TABLES = {"by name": "redirected_events", "by path": f"delta.`{src}`", "destination": f"delta.`{dest}`",
          "destination by name": "destination_events"}

def run(target):
    t0 = time.perf_counter()
    if target in ("load(path)", "destination load(path)"):
        df = spark.read.format("delta").load(src if target == "load(path)" else dest).where("id % 7 = 0")
        row = df.selectExpr("count(*) AS n", "sum(id) AS s").collect()[0]
    else:
        row = spark.sql(query.format(table=TABLES[target])).collect()[0]
    return time.perf_counter() - t0, int(row["n"]), int(row["s"])

targets = spec["targets"]
for _ in range(3):
    for t in targets:
        run(t)
out = []
for rep in range(spec["repetitions"]):
    for t in (targets if rep % 2 == 0 else list(reversed(targets))):
        seconds, n, s = run(t)
        out.append({"client": mode, "target": t, "repetition": rep, "seconds": seconds, "n": n, "s": s})
print("RESULT " + json.dumps(out))
"""


def run_worker(mode: str, spec: Dict[str, Any]) -> Any:
    script = WORK / "worker.py"
    script.write_text(WORKER)
    run = subprocess.run([sys.executable, str(script), mode, json.dumps(spec)], capture_output=True, text=True)
    lines = [l for l in run.stdout.splitlines() if l.startswith("RESULT ")]
    if run.returncode != 0 or not lines:
        raise RuntimeError(f"{mode} worker failed:\n{run.stderr[-4000:]}")
    return json.loads(lines[-1][len("RESULT "):])


def delta_rs_runs(dest: Path, repetitions: int) -> List[Dict[str, Any]]:
    import pyarrow.compute as pc
    from deltalake import DeltaTable

    def once() -> Dict[str, Any]:
        t0 = time.perf_counter()
        ids = DeltaTable(str(dest)).to_pyarrow_table(columns=["id"]).column("id")
        remainder = pc.subtract(ids, pc.multiply(pc.divide(ids, 7), 7))  # integer division
        kept = pc.filter(ids, pc.equal(remainder, 0))
        return {"seconds": time.perf_counter() - t0, "n": len(kept), "s": int(pc.sum(kept).as_py() or 0)}

    for _ in range(3):
        once()
    return [{"client": "delta-rs", "target": "destination", "repetition": i, **once()} for i in range(repetitions)]


def main() -> int:
    repetitions = int(sys.argv[1]) if len(sys.argv) > 1 else 15
    shutil.rmtree(WORK, ignore_errors=True)
    WORK.mkdir(parents=True)
    RESULTS.mkdir(exist_ok=True)
    src, dest = WORK / "source", WORK / "destination"
    spec: Dict[str, Any] = {
        "source": str(src), "destination": str(dest), "warehouse": str(WORK / "warehouse"),
        "files": FILES, "rows_per_file": ROWS_PER_FILE, "tail": TAIL_COMMITS, "query": QUERY,
        "repetitions": repetitions,
    }
    total = FILES * ROWS_PER_FILE
    expected_n = len(range(0, total, 7))
    expected_s = sum(range(0, total, 7))

    ours = run_worker("delta-lifecycle", {**spec, "targets": ["by name", "destination by name", "by path", "destination", "load(path)", "destination load(path)"]})
    stock = run_worker("stock", {**spec, "targets": ["destination"]})
    rs = delta_rs_runs(dest, repetitions)
    rows = ours + stock + rs
    for r in rows:
        assert (r["n"], r["s"]) == (expected_n, expected_s), r

    with open(RESULTS / "redirect-runs.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=["client", "target", "repetition", "seconds", "n", "s"])
        writer.writeheader()
        writer.writerows(rows)
    groups: Dict[str, List[float]] = {}
    for r in rows:
        groups.setdefault(f"{r['client']}: {r['target']}", []).append(r["seconds"])
    median = {k: statistics.median(v) for k, v in groups.items()}
    # Each access is compared with the destination accessed the same way (name, SQL path, load).
    def baseline_of(variant: str) -> str:
        if variant.endswith("by name"):
            return "delta-lifecycle: destination by name"
        if variant.endswith("load(path)"):
            return "delta-lifecycle: destination load(path)"
        return "delta-lifecycle: destination"
    baseline = {k: median[baseline_of(k)] for k in median}
    with open(RESULTS / "redirect-summary.csv", "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["variant", "median_seconds", "baseline", "ratio"])
        for k, v in median.items():
            writer.writerow([k, f"{v:.4f}", baseline_of(k), f"{v / baseline[k]:.3f}"])
    for k, v in median.items():
        print(f"{k:40s} {v:.3f} s  {v / baseline[k]:.2f}x")
    plot(median, baseline)
    return 0


def plot(median: Dict[str, float], baseline: Dict[str, float]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = list(median)
    fig, ax = plt.subplots(figsize=(8, 4))
    bars = ax.barh(labels, [median[k] for k in labels], color=["#3b7dd8" if k.startswith("delta-lifecycle") else "#999999" for k in labels])
    for bar, k in zip(bars, labels):
        ax.text(bar.get_width(), bar.get_y() + bar.get_height() / 2, f" {median[k] / baseline[k]:.2f}x", va="center")
    ax.invert_yaxis()
    ax.set_xlabel("median query latency (s); ratio to the destination queried the same way (name or path)")
    ax.set_title(f"Query on a redirected table ({FILES} files, {TAIL_COMMITS}-commit log tail)")
    fig.tight_layout()
    fig.savefig(RESULTS / "redirect.png", dpi=120)


if __name__ == "__main__":
    sys.exit(main())
