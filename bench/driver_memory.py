"""Benchmark (issue 15): the driver heap each operation needs on a table of millions of files,
this extension against stock delta-spark.

The tables are "log only": version 0 is a Spark ``CREATE TABLE`` with deletion vectors
enabled, version 1 one commit adding N files (written by a Spark job, so building a table of
millions of files does not need the memory being measured) with delta-spark's checkpoint of
it, version 2 one property change, then 50 small commits of one added file each (as a
writer's appends leave them after a checkpoint); no data file exists, which no operation measured
here reads (the query is a ``count(*)``, which delta-spark answers from the log's statistics).
The tables are cached under ``bench/work/memory``.

Each operation runs in its own JVM (subprocess) with ``spark.driver.memory`` set to each
heap in ``--heaps`` (local mode: the executors share that heap, as a small cluster's driver
does not, so these figures are upper bounds). The JVM reports whether the operation
finished, its wall time, and the peak heap used after the last full GC before the end.

    python bench/driver_memory.py [--files 1000000 3000000] [--heaps 512m 1g 2g]

writes bench/results/driver-memory.csv and, through bench/plot_driver_memory.py,
driver-memory.png.
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
REPO = ROOT.parent
WORK = ROOT / "work" / "memory"
RESULTS = ROOT / "results"

#: (engine, operation name, SQL with {t} for the table)
OPERATIONS = [
    ("stock", "DESCRIBE DETAIL", "DESCRIBE DETAIL {t}"),
    ("stock", "DESCRIBE HISTORY", "DESCRIBE HISTORY {t}"),
    ("stock", "SET TBLPROPERTIES", "ALTER TABLE {t} SET TBLPROPERTIES ('bench.n' = '1')"),
    ("stock", "SELECT count(*)", "SELECT count(*) FROM {t}"),
    ("delta-lifecycle", "DESCRIBE PROTOCOL HISTORY", "DESCRIBE PROTOCOL HISTORY {t}"),
    ("delta-lifecycle", "DROP FEATURE deletionVectors DRY RUN",
     "ALTER TABLE {t} DROP FEATURE deletionVectors DRY RUN"),
    ("delta-lifecycle", "COMPACT LOG", "ALTER TABLE {t} COMPACT LOG"),
    ("delta-lifecycle", "CLEAN LOG DRY RUN", "ALTER TABLE {t} CLEAN LOG DRY RUN"),
    ("delta-lifecycle", "DESCRIBE REDIRECT", "DESCRIBE REDIRECT {t}"),
    ("delta-lifecycle", "SELECT count(*) (routed)", "SELECT count(*) FROM {t}"),
    ("delta-lifecycle", "SET TBLPROPERTIES", "ALTER TABLE {t} SET TBLPROPERTIES ('bench.n' = '1')"),
]

BUILD = r"""
import json, sys, os, shutil
from delta import configure_spark_with_delta_pip
from pyspark.sql import SparkSession, functions as F

path, n = sys.argv[1], int(sys.argv[2])
builder = (SparkSession.builder.master("local[2]")
    .config("spark.ui.enabled", "false")
    .config("spark.driver.memory", "6g")
    .config("spark.sql.shuffle.partitions", "8")
    .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
    .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog"))
spark = configure_spark_with_delta_pip(builder).getOrCreate()
spark.sparkContext.setLogLevel("ERROR")
spark.sql(f"CREATE TABLE delta.`{path}` (id BIGINT, part STRING) USING delta "
          "TBLPROPERTIES ('delta.enableDeletionVectors' = 'true', "
          "'delta.checkpointInterval' = '1000000')")
# One commit adding n files; each add as PROTOCOL.md spells it, with statistics.
adds = spark.range(n).select(F.to_json(F.struct(F.struct(
    F.format_string("part=%d/part-%010d-bench.snappy.parquet", F.col("id") % 100, F.col("id"))
        .alias("path"),
    F.create_map(F.lit("part"), (F.col("id") % 100).cast("string")).alias("partitionValues"),
    (F.col("id") % 100000 + 1000).alias("size"),
    F.lit(1700000000000).alias("modificationTime"),
    F.lit(True).alias("dataChange"),
    F.format_string('{"numRecords":10,"minValues":{"id":%d},"maxValues":{"id":%d},'
                    '"nullCount":{"id":0}}', F.col("id"), F.col("id") + 9).alias("stats"),
).alias("add"))).alias("value"))
commit_info = spark.createDataFrame(
    [(json.dumps({"commitInfo": {"timestamp": 1700000000000, "operation": "WRITE",
                                 "operationParameters": {}}}),)], "value string")
staging = path + "_staging"
commit_info.union(adds).coalesce(1).write.mode("overwrite").text(staging)
part = [f for f in os.listdir(staging) if f.startswith("part-")][0]
shutil.move(os.path.join(staging, part), os.path.join(path, "_delta_log", "%020d.json" % 1))
shutil.rmtree(staging)
log = spark._jvm.org.apache.spark.sql.delta.DeltaLog.forTable(spark._jsparkSession, path)
log.update(False, spark._jvm.scala.Option.empty(), spark._jvm.scala.Option.empty())
log.checkpoint()
spark.sql(f"ALTER TABLE delta.`{path}` SET TBLPROPERTIES ('bench.built' = 'true')")
print("RESULT " + json.dumps({"version": log.update(False, spark._jvm.scala.Option.empty(),
      spark._jvm.scala.Option.empty()).version()}))
"""

MEASURE = r"""
import json, sys, time
from pyspark.sql import SparkSession

engine, path, sql, heap = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
builder = (SparkSession.builder.master("local[2]")
    .config("spark.ui.enabled", "false")
    .config("spark.ui.showConsoleProgress", "false")
    .config("spark.driver.memory", heap)
    .config("spark.driver.extraJavaOptions", "-XX:+ExitOnOutOfMemoryError")
    .config("spark.sql.shuffle.partitions", "8"))
if engine == "stock":
    from delta import configure_spark_with_delta_pip
    builder = (builder
        .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
        .config("spark.sql.catalog.spark_catalog",
                "org.apache.spark.sql.delta.catalog.DeltaCatalog"))
    spark = configure_spark_with_delta_pip(builder).getOrCreate()
else:
    from delta_lifecycle import configure_spark
    spark = configure_spark(builder).getOrCreate()
spark.sparkContext.setLogLevel("ERROR")
jvm = spark._jvm
mf = jvm.java.lang.management.ManagementFactory
for pool in mf.getMemoryPoolMXBeans():
    pool.resetPeakUsage()
started = time.monotonic()
rows = spark.sql(sql.format(t=f"delta.`{path}`")).collect()
wall = time.monotonic() - started
peak = sum(p.getPeakUsage().getUsed() for p in mf.getMemoryPoolMXBeans()
           if str(p.getType()) == "Heap memory")
print("RESULT " + json.dumps({"wall_s": wall, "peak_heap_mb": peak / 2**20, "rows": len(rows)}))
"""


def build(n: int) -> Path:
    """The log-only table of ``n`` files, built once (a copy is used per measurement)."""
    path = WORK / f"files-{n}"
    if (path / "_delta_log" / "_last_checkpoint").is_file():
        if not (path / "_delta_log" / f"{3:020d}.json").is_file():
            append_small_commits(path)  # built before the small commits were part of the table
        return path
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    started = time.monotonic()
    run = subprocess.run([sys.executable, "-c", BUILD, str(path), str(n)],
                         capture_output=True, text=True)
    if run.returncode != 0:
        shutil.rmtree(path, ignore_errors=True)
        raise SystemExit("building the table failed:\n" + run.stderr[-4000:])
    append_small_commits(path)
    print(f"built {path} in {time.monotonic() - started:.0f} s", flush=True)
    return path


def append_small_commits(path: Path, count: int = 50) -> None:
    """Versions 3 to 52: one added file each, written into the log as the big commit is."""
    log = path / "_delta_log"
    for version in range(3, 3 + count):
        add = {"path": f"part=0/part-small-{version:05d}.snappy.parquet",
               "partitionValues": {"part": "0"}, "size": 1000,
               "modificationTime": 1700000000000 + version, "dataChange": True,
               "stats": json.dumps({"numRecords": 10, "minValues": {"id": 0},
                                    "maxValues": {"id": 9}, "nullCount": {"id": 0}})}
        info = {"timestamp": 1700000000000 + version * 1000, "operation": "WRITE",
                "operationParameters": {"mode": "Append"}}
        with open(log / f"{version:020d}.json", "x") as f:
            f.write(json.dumps({"commitInfo": info}) + "\n" + json.dumps({"add": add}) + "\n")


def measure(engine: str, table: Path, sql: str, heap: str) -> Dict[str, Any]:
    # Every run starts from the built table: operations that commit change it.
    work = WORK / "run"
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(table, work)
    started = time.monotonic()
    run = subprocess.run([sys.executable, "-c", MEASURE, engine, str(work), sql, heap],
                         capture_output=True, text=True, timeout=1800)
    lines = [line for line in run.stdout.splitlines() if line.startswith("RESULT ")]
    if run.returncode == 0 and lines:
        result: Dict[str, Any] = json.loads(lines[-1][len("RESULT "):])
        return {"outcome": "ok", **result}
    oom = "OutOfMemoryError" in run.stderr or "Java heap space" in run.stderr
    return {"outcome": "out of memory" if oom else "failed",
            "wall_s": time.monotonic() - started, "peak_heap_mb": "", "rows": "",
            "error": run.stderr.strip().splitlines()[-1][:200] if run.stderr.strip() else ""}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, nargs="+", default=[1_000_000, 3_000_000])
    parser.add_argument("--heaps", nargs="+", default=["512m", "1g", "2g"])
    parser.add_argument("--append", action="store_true",
                        help="keep the rows of driver-memory.csv not measured again")
    args = parser.parse_args()
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / "driver-memory.csv"
    rows: List[Dict[str, Any]] = []
    if args.append and out.is_file():
        with open(out, newline="") as f:
            rows = [r for r in csv.DictReader(f)
                    if not (int(r["files"]) in args.files and r["heap"] in args.heaps)]
    fields = ["files", "engine", "operation", "heap", "outcome", "wall_s", "peak_heap_mb",
              "rows", "error"]
    for n in args.files:
        table = build(n)
        for heap in args.heaps:
            for engine, name, sql in OPERATIONS:
                result = measure(engine, table, sql, heap)
                row = {"files": n, "engine": engine, "operation": name, "heap": heap,
                       "error": "", **result}
                rows.append(row)
                print(json.dumps(row), flush=True)
                with open(out, "w", newline="") as f:
                    writer = csv.DictWriter(f, fieldnames=fields)
                    writer.writeheader()
                    writer.writerows(rows)
    shutil.rmtree(WORK / "run", ignore_errors=True)


if __name__ == "__main__":
    main()
