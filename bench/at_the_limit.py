"""Benchmark: each statement on a log-only table of N files beside its physical limit, measured
in the same JVM, and each of delta-spark's statements that this extension routes beside the same
statement in a stock session.

The tables are driver_memory.py's (tests/log_only_table.py): a checkpoint of N ``add`` actions
(deletion vectors enabled, no file carrying one) and 50 small commits after it, built once into
bench/work/memory/. Every run starts from a fresh copy.

The limits, measured in the JVM of the statement, right before it, each on its own fresh copy:

- ``scan``: one pass over the columns a plan needs. Spark's Parquet reader on the newest
  checkpoint, filtered on ``add.deletionVector IS NOT NULL``, with ``count`` and
  ``sum(add.size)``, plus the JSON commits after it (read and counted).
- ``scan with paths``: the same pass over every add's path, size and deletion vector, which
  a copy's file list needs.
- ``checkpoint``: delta-spark's ``checkpoint()`` of the table (it rebuilds the state and writes
  it): with the scan, the limit of a drop that has nothing to rewrite.
- ``cp -r``: a copy of the table's directory with ``cp -r`` and ``sync``: with the scan, the limit
  of a redirect that copies it.
- ``checkpoint cp``: a copy of the newest checkpoint file with ``cp`` and ``sync``: the bytes a
  checkpoint must write at the least when nothing changed; with the scan, the limit of a drop
  that has nothing to rewrite, and alone, the limit of ``CHECKPOINT``. ``CHECKPOINT`` runs on a
  table with 100 small commits after its checkpoint (layout ``long-tail``).

Each statement runs in a JVM of its own (``local[2]``, ``spark.driver.memory`` of ``--heap``): it
first runs once on the 100-file table (warm-up: classes loaded and compiled), then the limits,
then, with what the limits cached dropped (the statement gets the whole heap), the statement,
timed, with the heap in use sampled twice a second (its peak). On a table of at most 10,000
files the statement's time is the median of 9 runs, each on a fresh copy. A statement of stock
delta-spark's (DESCRIBE DETAIL, SET TBLPROPERTIES) also runs in a stock session, its ratio taken
against that. With ``--baseline DIR`` (a checkout of another commit, its jar built
with ``make jar``) every statement of this extension also runs with that commit's package, in
the same run, for the ratio against it.

    python bench/at_the_limit.py [--files 100 1000000 3000000 10000000] [--heap 1g]
        [--only NAME ...] [--baseline DIR] [--append]

writes bench/results/at-the-limit.csv; bench/plot_at_the_limit.py draws at-the-limit.png.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parent))
from driver_memory import SESSION as DRIVER_MEMORY_SESSION  # noqa: E402
from driver_memory import LONG_TAIL, WORK, build, engine_session, result_of  # noqa: E402

ROOT = Path(__file__).resolve().parent
REPO = ROOT.parent
RESULTS = ROOT / "results"

STOCK = "stock"
LIFECYCLE = "delta-lifecycle"
BASELINE = "baseline"

# A statement on a small table takes tenths of a second, about the noise of one run: there its
# time is the median of this many runs, each on its own fresh copy.
SMALL_TABLE = 10_000
SMALL_TABLE_REPEATS = 9

DV = "deletionVectors"
CLIENT = "deltalake-0.25"
SCAN, PATHS, CHECKPOINT, COPY = "scan", "scan with paths", "checkpoint", "cp -r"
CHECKPOINT_COPY = "checkpoint cp"


@dataclass(frozen=True)
class Statement:
    """A measured statement: ``sql`` run in order with ``{t}`` for the table and ``{dest}`` for
    a fresh location, after ``setup`` (untimed, same JVM); ``limits`` it is compared with (their
    sum); ``stock`` when delta-spark has the same statement, measured in a stock session too."""

    name: str
    sql: Sequence[str]
    limits: Sequence[str] = (SCAN,)
    layout: str = "files"
    setup: Sequence[str] = ()
    stock: bool = False
    expected_errors: Sequence[str] = field(default_factory=tuple)


STATEMENTS: List[Statement] = [
    Statement(f"DROP FEATURE {DV} DRY RUN", [f"ALTER TABLE {{t}} DROP FEATURE {DV} DRY RUN"]),
    Statement(f"DROP FEATURE {DV}", [f"ALTER TABLE {{t}} DROP FEATURE {DV}"],
              (SCAN, CHECKPOINT)),
    Statement(f"DROP FEATURE {DV} vs a byte copy", [f"ALTER TABLE {{t}} DROP FEATURE {DV}"],
              (SCAN, CHECKPOINT_COPY)),
    Statement("CHECKPOINT", ["ALTER TABLE {t} CHECKPOINT"], (CHECKPOINT,), layout=LONG_TAIL),
    Statement("CHECKPOINT vs a byte copy", ["ALTER TABLE {t} CHECKPOINT"], (CHECKPOINT_COPY,),
              layout=LONG_TAIL),
    Statement(f"DROP FEATURE {DV} TRUNCATE HISTORY DRY RUN",
              [f"ALTER TABLE {{t}} DROP FEATURE {DV} TRUNCATE HISTORY DRY RUN"]),
    Statement("DROP FEATURES FOR CLIENT DRY RUN",
              [f"ALTER TABLE {{t}} DROP FEATURES FOR CLIENT '{CLIENT}' DRY RUN"]),
    Statement("DROP FEATURES FOR CLIENT", [f"ALTER TABLE {{t}} DROP FEATURES FOR CLIENT '{CLIENT}'"],
              (SCAN, CHECKPOINT)),
    Statement("DESCRIBE COMPATIBILITY", ["DESCRIBE COMPATIBILITY {t}"]),
    Statement("CLEAN LOG RETAIN 0 HOURS DRY RUN",
              ["ALTER TABLE {t} CLEAN LOG RETAIN 0 HOURS DRY RUN"]),
    Statement("SET REDIRECT DRY RUN", ["ALTER TABLE {t} SET REDIRECT TO '{dest}' DRY RUN"],
              (PATHS,), layout="elsewhere"),
    Statement("SET REDIRECT", ["ALTER TABLE {t} SET REDIRECT TO '{dest}'"], (PATHS, COPY),
              layout="elsewhere"),
    Statement("UNSET REDIRECT DRY RUN", ["ALTER TABLE {t} UNSET REDIRECT DRY RUN"],
              layout="elsewhere", setup=["ALTER TABLE {t} SET REDIRECT TO '{dest}'"]),
    Statement("DESCRIBE DETAIL", ["DESCRIBE DETAIL {t}"], (), stock=True),
    Statement("SET TBLPROPERTIES", ["ALTER TABLE {t} SET TBLPROPERTIES ('bench.n' = '1')"], (),
              stock=True),
]

# The session and error helpers of driver_memory.py, after the package of the commit measured.
SESSION = r"""
import sys
engine, heap, package = sys.argv[1], sys.argv[2], sys.argv[3]
if package:
    sys.path.insert(0, package)
""" + DRIVER_MEMORY_SESSION + r"""
import os, shutil, subprocess
""" + engine_session("heap") + r"""
from pyspark.sql import functions as F

def fresh(source, name):
    target = source.rsplit("/", 1)[0] + f"/run-{os.getpid()}-{name}"
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(source, target)
    return target

def scan(path, paths=False):
    # One pass over what a plan needs: the newest checkpoint's columns, filtered, and the commits
    # after it. A copy's list needs every file's path, size and deletion vector instead.
    log = os.path.join(path, "_delta_log")
    names = sorted(os.listdir(log))
    checkpoint = [n for n in names if ".checkpoint" in n and n.endswith(".parquet")][-1]
    after = [os.path.join(log, n) for n in names
             if n.endswith(".json") and len(n) == 25 and n[:20] > checkpoint[:20]]
    rows = spark.read.parquet(os.path.join(log, checkpoint))
    if paths:
        rows.where("add IS NOT NULL").agg(F.count(F.lit(1)), F.sum(F.length("add.path")),
                                          F.sum("add.size"), F.count("add.deletionVector")).collect()
    else:
        rows.where("add.deletionVector IS NOT NULL") \
            .agg(F.count(F.lit(1)), F.sum("add.size")).collect()
    if after:
        spark.read.json(after).count()

def checkpoint(path):
    spark._jvm.org.apache.spark.sql.delta.DeltaLog.forTable(spark._jsparkSession, path).checkpoint()

def checkpoint_copy(path):
    # The bytes a checkpoint that nothing changed must write at the least: the newest one's.
    log = os.path.join(path, "_delta_log")
    newest = sorted(n for n in os.listdir(log) if ".checkpoint" in n and n.endswith(".parquet"))[-1]
    subprocess.run(["cp", os.path.join(log, newest), os.path.join(path, "checkpoint-copy")],
                   check=True)
    subprocess.run(["sync"], check=True)

def copy(path):
    subprocess.run(["cp", "-r", path, path + "-copy"], check=True)
    subprocess.run(["sync"], check=True)

def forget_limits():
    # The statement gets the heap the limits had: delta-spark's checkpoint() leaves its table's
    # state cached (a 1 GB driver then lacks room for a 10M-file table's next statement).
    spark._jvm.org.apache.spark.sql.delta.DeltaLog.clearCache()
    spark.catalog.clearCache()
    for rdd in spark.sparkContext._jsc.getPersistentRDDs().values():
        rdd.unpersist(True)
    spark._jvm.java.lang.System.gc()

LIMITS = {"scan": scan, "scan with paths": lambda p: scan(p, paths=True),
          "checkpoint": checkpoint, "cp -r": copy, "checkpoint cp": checkpoint_copy}

def run(sqls, path, dest, expected):
    rows = 0
    for sql in sqls:
        try:
            rows += len(spark.sql(sql.format(t=f"delta.`{path}`", dest=dest)).collect())
        except Exception as e:
            if condition(e) not in expected:
                raise
    return rows
"""

MEASURE = SESSION + r"""
spec = json.loads(sys.argv[4])
# Warm-up on the small table: the classes the statement and the limits use are loaded.
small = fresh(spec["small"], "warm")
for name in spec["limits"]:
    LIMITS[name](fresh(spec["small"], "warm-limit"))
for sql in spec["setup"]:
    spark.sql(sql.format(t=f"delta.`{small}`", dest=small + "-dest")).collect()
run(spec["sql"], small, small + "-dest", set(spec["expected"]))
limits = {}
for name in spec["limits"]:
    path = fresh(spec["table"], "limit")
    started = time.monotonic()
    LIMITS[name](path)
    limits[name] = time.monotonic() - started
forget_limits()
walls, peak_mb = [], 0.0
try:
    for attempt in range(spec["repeat"]):
        path = fresh(spec["table"], f"statement-{attempt}")
        dest = path + "-dest"
        for sql in spec["setup"]:
            spark.sql(sql.format(t=f"delta.`{path}`", dest=dest)).collect()
        started = time.monotonic()
        heap_peak = HeapPeak(spark)
        with heap_peak:
            rows = run(spec["sql"], path, dest, set(spec["expected"]))
        walls.append(time.monotonic() - started)
        peak_mb = max(peak_mb, heap_peak.peak_mb)
    outcome, error = "ok", ""
except Exception as e:
    rows, outcome, error = "", "failed", describe(e)
wall = sorted(walls)[len(walls) // 2] if walls else None
print("RESULT " + json.dumps({"outcome": outcome, "wall_s": wall, "error": error, "rows": rows,
                              "peak_heap_mb": peak_mb, "limits": limits}), flush=True)
"""

FIELDS = ["files", "engine", "statement", "outcome", "wall_s", "peak_heap_mb", "limit",
          "limit_s", "vs_limit", "vs_stock", "vs_baseline", "commit", "load_avg", "error"]


def measure(statement: Statement, engine: str, n: int, heap: str,
            package: str) -> Dict[str, Any]:
    table = build(statement.layout, n)
    small = build(statement.layout, 100)
    spec = {"table": str(table), "small": str(small), "sql": list(statement.sql),
            "setup": list(statement.setup), "limits": list(statement.limits),
            "expected": list(statement.expected_errors),
            "repeat": SMALL_TABLE_REPEATS if n <= SMALL_TABLE else 1}
    run = subprocess.run([sys.executable, "-c", MEASURE, engine, heap, package, json.dumps(spec)],
                         capture_output=True, text=True)
    logs = WORK / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    name = f"limit-{n}-{engine}-{statement.name}".replace(" ", "_")
    (logs / f"{name}.log").write_text(run.stdout + "\n" + run.stderr)
    # The copies of the run (each named run-<pid>-...).
    for p in list(WORK.glob("run-*")):
        shutil.rmtree(p, ignore_errors=True)
    result = result_of(run)
    if result is None:
        lines = [line for line in run.stderr.strip().splitlines() if line.strip()]
        result = {"outcome": "failed", "wall_s": "", "peak_heap_mb": "", "limits": {},
                  "error": lines[-1][:300] if lines else ""}
    return result


def commit_of(directory: Path) -> str:
    return subprocess.run(["git", "-C", str(directory), "rev-parse", "--short", "HEAD"],
                          capture_output=True, text=True).stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, nargs="+",
                        default=[100, 1_000_000, 3_000_000, 10_000_000])
    parser.add_argument("--heap", default="1g")
    parser.add_argument("--only", nargs="+", default=[])
    parser.add_argument("--baseline", type=Path,
                        help="a checkout of another commit with its jar built (make jar)")
    parser.add_argument("--baseline-files", type=int, nargs="+", default=[100],
                        help="the sizes at which the baseline runs too")
    parser.add_argument("--append", action="store_true")
    parser.add_argument("--out", type=Path, default=RESULTS / "at-the-limit.csv")
    args = parser.parse_args()
    chosen = [s for s in STATEMENTS if not args.only or s.name in args.only]
    rows: List[Dict[str, Any]] = []
    measured = {(n, s.name) for n in args.files for s in chosen}
    if args.append and args.out.is_file():
        with open(args.out, newline="") as f:
            rows = [r for r in csv.DictReader(f)
                    if (int(r["files"]), r["statement"]) not in measured]
    here = commit_of(REPO)
    for n in args.files:
        for statement in chosen:
            engines = [(LIFECYCLE, "", here)]
            if statement.stock:
                engines.append((STOCK, "", "delta-spark"))
            if args.baseline and n in args.baseline_files:
                engines.append((BASELINE, str(args.baseline / "python"),
                                commit_of(args.baseline)))
            results: Dict[str, Dict[str, Any]] = {}
            for engine, package, commit in engines:
                result = measure(statement, engine, n, args.heap, package)
                results[engine] = result
                limit = sum(result.get("limits", {}).values()) if result.get("limits") else 0.0
                wall = result["wall_s"]
                row = {"files": n, "engine": engine, "statement": statement.name,
                       "outcome": result["outcome"], "wall_s": wall,
                       "peak_heap_mb": result["peak_heap_mb"],
                       "limit": " + ".join(statement.limits), "limit_s": limit,
                       "vs_limit": (wall / limit) if wall and limit else "",
                       "commit": commit, "load_avg": f"{os.getloadavg()[1]:.1f}",
                       "error": result.get("error", "")}
                ours = results.get(LIFECYCLE, {}).get("wall_s")
                if engine == STOCK and ours and wall:
                    row["vs_stock"] = ours / wall
                if engine == BASELINE and ours and wall:
                    row["vs_baseline"] = ours / wall
                rows.append(row)
                print(json.dumps(row), flush=True)
                args.out.parent.mkdir(parents=True, exist_ok=True)
                with open(args.out, "w", newline="") as f:
                    writer = csv.DictWriter(f, fieldnames=FIELDS, extrasaction="ignore")
                    writer.writeheader()
                    writer.writerows(rows)


if __name__ == "__main__":
    main()
