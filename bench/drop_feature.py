"""Benchmark: drop deletionVectors on a 1,000-file table where 10% of the files carry
deletion vectors, with this project's DROP FEATURE and with delta-spark's native one.

Each client runs in its own process: delta-spark alone (a session without this extension,
so `ALTER TABLE … DROP FEATURE` is delta-spark's command), and delta-spark with
delta-lifecycle. Both drop the feature from identical copies of one table, after a warm-up
drop on a small table; only the DROP FEATURE statement is timed. Every drop is checked:
the protocol loses deletionVectors and the rows are unchanged.

    python bench/drop_feature.py [repetitions]

writes bench/results/drop-feature-runs.csv, drop-feature-summary.csv and drop-feature.png.
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

WORK = ROOT / "work" / "drop-feature"
RESULTS = ROOT / "results"
FILES = 1000
ROWS_PER_FILE = 100
FILES_WITH_DVS = 100


WORKER = r"""
import json, sys, time

mode, spec = sys.argv[1], json.loads(sys.argv[2])
""" + preamble(SMALL_LOCAL_SESSION, extension='mode == "delta-lifecycle"') + r"""

def protocol_features(path):
    detail = spark.sql(f"DESCRIBE DETAIL delta.`{path}`").collect()[0]
    return sorted(detail["tableFeatures"])

if mode == "build":
    path = spec["path"]
    spark.sql(f"CREATE TABLE delta.`{path}` (id BIGINT) USING delta "
              "TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')")
    (spark.range(0, spec["files"] * spec["rows"], 1, spec["files"])
        .write.format("delta").mode("append").save(path))
    # The first files hold the lowest ids: delete one row in every one of them.
    limit = spec["dv_files"] * spec["rows"]
    spark.sql(f"DELETE FROM delta.`{path}` WHERE id < {limit} AND id % {spec['rows']} = 0")
    print("RESULT " + json.dumps({"rows": spark.read.format("delta").load(path).count()}))
    sys.exit(0)

def drop(path):
    start = time.perf_counter()
    spark.sql(f"ALTER TABLE delta.`{path}` DROP FEATURE deletionVectors").collect()
    return time.perf_counter() - start

drop(spec["warmup"])
out = []
for path in spec["tables"]:
    seconds = drop(path)
    rows = spark.read.format("delta").load(path).count()
    out.append({"path": path, "seconds": seconds, "rows": rows, "features": protocol_features(path)})
print("RESULT " + json.dumps(out))
"""


def run_worker(mode: str, spec: Dict[str, Any]) -> Any:
    script = WORK / "worker.py"
    script.write_text(WORKER)
    run = subprocess.run([sys.executable, str(script), mode, json.dumps(spec)], capture_output=True, text=True)
    if run.returncode != 0:
        raise SystemExit(f"{mode} worker failed:\n{run.stderr[-4000:]}")
    line = [x for x in run.stdout.splitlines() if x.startswith("RESULT ")][-1]
    return json.loads(line[len("RESULT "):])


def count_dv_files(path: Path) -> int:
    # A DELETE re-adds a file with its DV and removes the old entry in the same commit, so
    # each commit's removes apply before its adds.
    with_dv = set()
    for name in sorted((path / "_delta_log").glob("*.json")):
        actions = [json.loads(line) for line in name.read_text().splitlines()]
        for a in actions:
            if "remove" in a:
                with_dv.discard(a["remove"]["path"])
        for a in actions:
            if "add" in a and a["add"].get("deletionVector"):
                with_dv.add(a["add"]["path"])
    return len(with_dv)


def main() -> int:
    repetitions = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    shutil.rmtree(WORK, ignore_errors=True)
    WORK.mkdir(parents=True)
    base, small = WORK / "base", WORK / "small"
    built = run_worker("build", {"path": str(base), "files": FILES, "rows": ROWS_PER_FILE, "dv_files": FILES_WITH_DVS})
    run_worker("build", {"path": str(small), "files": 10, "rows": 10, "dv_files": 2})
    assert count_dv_files(base) == FILES_WITH_DVS, count_dv_files(base)
    print(f"base table: {FILES} files, {FILES_WITH_DVS} with deletion vectors, {built['rows']} rows", flush=True)

    rows: List[Dict[str, Any]] = []
    for client in ("delta-spark", "delta-lifecycle"):
        tables = []
        for i in range(repetitions):
            copy = WORK / f"{client}-{i}"
            shutil.copytree(base, copy)
            tables.append(str(copy))
        warmup = WORK / f"{client}-warmup"
        shutil.copytree(small, warmup)
        started = time.perf_counter()
        results = run_worker(client, {"tables": tables, "warmup": str(warmup)})
        print(f"{client}: {len(results)} drops in {time.perf_counter() - started:.0f} s (with session start)", flush=True)
        for i, r in enumerate(results):
            assert "deletionVectors" not in r["features"], r
            assert r["rows"] == built["rows"], r
            rows.append({"client": client, "repetition": i, "seconds": round(r["seconds"], 3),
                         "features_after": " ".join(r["features"])})

    RESULTS.mkdir(exist_ok=True)
    with open(RESULTS / "drop-feature-runs.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    median = {c: statistics.median(r["seconds"] for r in rows if r["client"] == c)
              for c in ("delta-spark", "delta-lifecycle")}
    ratio = median["delta-lifecycle"] / median["delta-spark"]
    with open(RESULTS / "drop-feature-summary.csv", "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["comparison", "delta_lifecycle_s", "delta_spark_s", "ratio", "goal"])
        writer.writerow([f"DROP FEATURE deletionVectors, {FILES} files, {FILES_WITH_DVS} with DVs (median of {repetitions})",
                         round(median["delta-lifecycle"], 2), round(median["delta-spark"], 2), round(ratio, 2), "<= 1.0"])
    plot(rows, median, ratio)
    print(f"median: delta-lifecycle {median['delta-lifecycle']:.2f} s, delta-spark {median['delta-spark']:.2f} s, "
          f"ratio {ratio:.2f}")
    return 0


def plot(rows: List[Dict[str, Any]], median: Dict[str, float], ratio: float) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    clients = ["delta-spark", "delta-lifecycle"]
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.bar(clients, [median[c] for c in clients], color=["#999999", "#1f77b4"], alpha=0.7, label="median")
    for x, c in enumerate(clients):
        ys = [r["seconds"] for r in rows if r["client"] == c]
        ax.scatter([x] * len(ys), ys, color="black", zorder=3, s=12, label="runs" if x == 0 else None)
    ax.set_ylabel("DROP FEATURE wall time (s)")
    ax.set_title(f"Drop deletionVectors: {FILES} files, {FILES_WITH_DVS} with DVs\nratio {ratio:.2f}x")
    ax.legend()
    fig.tight_layout()
    fig.savefig(RESULTS / "drop-feature.png", dpi=120)


if __name__ == "__main__":
    sys.exit(main())
