"""Benchmark: the time and heap each statement needs on a table of millions
of files at a small driver, this extension against stock delta-spark's comparable statement.

The tables are "log only": a checkpoint at version 10 holding N ``add`` actions (with
statistics, as delta-spark 4.4 writes them: JSON and parsed), the commit of version 10, and 50
small commits after it (one added file each, as a writer's appends leave them); the commits
before version 10 are gone, as after a log cleanup. The log is written directly: the
checkpoint by one Spark job (in the schema delta-spark wrote for the same table's version 0),
so building a table of ten million files takes minutes and none of the memory measured. No
data file exists; no statement measured reads one. Two layouts:

- ``files-N``: the data files' paths are relative to the table root (a table as writers
  leave it). Every statement but the redirect ones runs on it.
- ``elsewhere-N``: the data files' paths are absolute, outside the table root (as a shallow
  clone's). SET REDIRECT copies the log and leaves such files where they are, so it runs
  here: ten million real files do not fit this machine's inodes twice.

Each statement runs in its own JVM (subprocess) with ``spark.driver.memory`` set to each heap
in ``--heaps``, in ``local[2]`` (the tasks share the driver's heap), on a fresh copy of the
table; a statement's ``setup`` runs first, in a JVM of its own, untimed. The JVM reports the
statement's outcome, its wall time and the heap pools' peak usage during it.

    python bench/driver_memory.py [--files 1000000 3000000 10000000] [--heaps 1g]
        [--only NAME ...] [--append]

writes bench/results/driver-memory.csv and, through bench/plot_driver_memory.py,
driver-memory.png. To add a statement, add a ``Statement`` to ``STATEMENTS``.
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
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

ROOT = Path(__file__).resolve().parent
REPO = ROOT.parent
sys.path.append(str(REPO / "tests"))

from spark_sessions import SessionSpec, preamble  # noqa: E402

WORK = ROOT / "work" / "memory"
RESULTS = ROOT / "results"

#: The checkpoint's version; the small commits follow it.
CHECKPOINT_VERSION = 10
SMALL_COMMITS = 50

STOCK = "stock"
LIFECYCLE = "delta-lifecycle"


@dataclass(frozen=True)
class Statement:
    """One measured statement. ``sql`` runs in order, timed together, with ``{t}`` for the
    table and ``{dest}`` for a fresh location; a statement in ``expected_errors`` may fail with
    that condition (the first run of a TRUNCATE HISTORY drop stops with one). ``setup`` runs
    before, untimed, in a JVM of its own. ``comparable``: the stock statement this one is
    compared with (same engine's name for stock's own rows)."""

    engine: str
    name: str
    sql: Sequence[str]
    comparable: str = ""
    layout: str = "files"
    setup: Sequence[str] = ()
    expected_errors: Sequence[str] = ()
    # The longest a run may take before it counts as hung.
    timeout_s: int = 3 * 3600


# The truncation retention a TRUNCATE HISTORY statement sets first, so its second run drops
# (the same for stock and this extension).
NO_RETENTION = ("ALTER TABLE {t} SET TBLPROPERTIES "
                "('delta.dropFeatureTruncateHistory.retentionDuration' = '0 hours')")
DV = "deletionVectors"
# A client that reads every feature of the table but deletion vectors.
CLIENT = "deltalake-0.25"

STATEMENTS: List[Statement] = [
    # stock delta-spark, in a session without this extension
    Statement(STOCK, "DESCRIBE DETAIL", ["DESCRIBE DETAIL {t}"]),
    Statement(STOCK, "DESCRIBE HISTORY", ["DESCRIBE HISTORY {t}"]),
    Statement(STOCK, "SET TBLPROPERTIES", ["ALTER TABLE {t} SET TBLPROPERTIES ('bench.n' = '1')"]),
    Statement(STOCK, f"DROP FEATURE {DV}", [f"ALTER TABLE {{t}} DROP FEATURE {DV}"]),
    Statement(STOCK, f"DROP FEATURE {DV} TRUNCATE HISTORY",
              [f"ALTER TABLE {{t}} DROP FEATURE {DV} TRUNCATE HISTORY"] * 2,
              setup=[NO_RETENTION],
              expected_errors=["DELTA_FEATURE_DROP_WAIT_FOR_RETENTION_PERIOD"]),
    Statement(STOCK, "SHALLOW CLONE", ["CREATE TABLE delta.`{dest}` SHALLOW CLONE {t}"],
              layout="elsewhere"),
    # this extension
    Statement(LIFECYCLE, "DESCRIBE PROTOCOL HISTORY", ["DESCRIBE PROTOCOL HISTORY {t}"],
              "DESCRIBE HISTORY"),
    Statement(LIFECYCLE, "CLEAN LOG RETAIN 0 HOURS DRY RUN",
              ["ALTER TABLE {t} CLEAN LOG RETAIN 0 HOURS DRY RUN"], "DESCRIBE HISTORY"),
    Statement(LIFECYCLE, "COMPACT LOG", ["ALTER TABLE {t} COMPACT LOG"], "DESCRIBE HISTORY"),
    Statement(LIFECYCLE, "DESCRIBE REDIRECT", ["DESCRIBE REDIRECT {t}"], "DESCRIBE HISTORY"),
    Statement(LIFECYCLE, "DESCRIBE DETAIL", ["DESCRIBE DETAIL {t}"], "DESCRIBE DETAIL"),
    Statement(LIFECYCLE, "SET TBLPROPERTIES",
              ["ALTER TABLE {t} SET TBLPROPERTIES ('bench.n' = '1')"], "SET TBLPROPERTIES"),
    Statement(LIFECYCLE, f"DROP FEATURE {DV} DRY RUN",
              [f"ALTER TABLE {{t}} DROP FEATURE {DV} DRY RUN"], "DESCRIBE DETAIL"),
    Statement(LIFECYCLE, f"DROP FEATURE {DV}", [f"ALTER TABLE {{t}} DROP FEATURE {DV}"],
              f"DROP FEATURE {DV}"),
    Statement(LIFECYCLE, f"DROP FEATURE {DV} TRUNCATE HISTORY DRY RUN",
              [f"ALTER TABLE {{t}} DROP FEATURE {DV} TRUNCATE HISTORY DRY RUN"],
              "DESCRIBE DETAIL"),
    Statement(LIFECYCLE, f"DROP FEATURE {DV} TRUNCATE HISTORY",
              [f"ALTER TABLE {{t}} DROP FEATURE {DV} TRUNCATE HISTORY"] * 2,
              f"DROP FEATURE {DV} TRUNCATE HISTORY", setup=[NO_RETENTION],
              expected_errors=["DELTA_LIFECYCLE_DROP_FEATURE_WAIT"]),
    Statement(LIFECYCLE, "DROP FEATURES FOR CLIENT DRY RUN",
              [f"ALTER TABLE {{t}} DROP FEATURES FOR CLIENT '{CLIENT}' DRY RUN"],
              "DESCRIBE DETAIL"),
    Statement(LIFECYCLE, "DROP FEATURES FOR CLIENT",
              [f"ALTER TABLE {{t}} DROP FEATURES FOR CLIENT '{CLIENT}'"], f"DROP FEATURE {DV}"),
    Statement(LIFECYCLE, "SET REDIRECT", ["ALTER TABLE {t} SET REDIRECT TO '{dest}'"],
              "SHALLOW CLONE", layout="elsewhere"),
    Statement(LIFECYCLE, "UNSET REDIRECT", ["ALTER TABLE {t} UNSET REDIRECT"], "SHALLOW CLONE",
              layout="elsewhere", setup=["ALTER TABLE {t} SET REDIRECT TO '{dest}'"]),
    Statement(LIFECYCLE, "SET REDIRECT DRY RUN",
              ["ALTER TABLE {t} SET REDIRECT TO '{dest}' DRY RUN"], "SHALLOW CLONE",
              layout="elsewhere"),
    Statement(LIFECYCLE, "UNSET REDIRECT DRY RUN", ["ALTER TABLE {t} UNSET REDIRECT DRY RUN"],
              "SHALLOW CLONE", layout="elsewhere",
              setup=["ALTER TABLE {t} SET REDIRECT TO '{dest}'"]),
]

#: Measured only when named with --only: a scan that delta-spark answers from the log's
#: statistics, stock and through this extension's routing (bench/redirect.py measures routing).
OPTIONAL: List[Statement] = [
    Statement(STOCK, "SELECT count(*)", ["SELECT count(*) FROM {t}"]),
    Statement(LIFECYCLE, "SELECT count(*) (routed)", ["SELECT count(*) FROM {t}"],
              "SELECT count(*)"),
]

#: Either engine's session (its heap comes with the run): this project's or stock delta-spark's.
ENGINE_SESSION = SessionSpec(
    conf={
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.shuffle.partitions": "8",
    },
    log_level="ERROR",
)


def engine_session(heap: str) -> str:
    """Source that starts ``spark``: the session of the script's ``engine``, with ``heap`` (a
    Python expression) as its driver's heap."""
    return preamble(
        ENGINE_SESSION,
        extension=f"engine != {STOCK!r}",
        conf=f'{{"spark.driver.memory": {heap}}}',
    )


SESSION = r"""
import json, sys, time

def condition(e):
    # A PySpark error, or a Py4J one whose Java exception (or a cause of it) has a condition.
    chain, j = [e], getattr(e, "java_exception", None)
    while j is not None and len(chain) < 10:
        chain.append(j)
        j = j.getCause()
    for c in chain:
        for name in ("getCondition", "getErrorClass"):
            try:
                found = getattr(c, name)()
                if found:
                    return str(found)
            except Exception:
                pass
    return ""

def describe(e):
    j = getattr(e, "java_exception", None)
    text = (j.toString() if j is not None else str(e)).strip().splitlines()
    return (condition(e) + " " + (text[0] if text else type(e).__name__)).strip()[:300]

class HeapPeak:
    # The heap in use (live data and garbage not yet collected), sampled twice a second from a
    # thread of its own while `with` runs: its peak is at most the heap's limit.
    # It stops at once when `with` ends, so a timed statement does not wait out its sleep.
    def __init__(self, spark):
        import threading
        self.runtime = spark._jvm.java.lang.Runtime.getRuntime()
        self.peak_mb, self.stopped = 0.0, threading.Event()
    def sample(self):
        while not self.stopped.is_set():
            try:
                used = self.runtime.totalMemory() - self.runtime.freeMemory()
                self.peak_mb = max(self.peak_mb, used / 2**20)
            except Exception:
                return
            self.stopped.wait(0.5)
    def __enter__(self):
        import threading
        self.thread = threading.Thread(target=self.sample, daemon=True)
        self.thread.start()
        return self
    def __exit__(self, *exc):
        self.stopped.set()
        self.thread.join()
"""

MEASURE = SESSION + r"""
engine, heap, statements, expected = (sys.argv[1], sys.argv[2], json.loads(sys.argv[3]),
                                      set(json.loads(sys.argv[4])))
""" + engine_session("heap") + r"""
started = time.monotonic()
rows, stopped = 0, []
heap_peak = HeapPeak(spark)
try:
    with heap_peak:
        for sql in statements:
            try:
                rows += len(spark.sql(sql).collect())
            except Exception as e:
                if condition(e) not in expected:
                    raise
                stopped.append(condition(e))
    wall = time.monotonic() - started
    print("RESULT " + json.dumps({"outcome": "ok", "wall_s": wall,
                                  "peak_heap_mb": heap_peak.peak_mb,
                                  "rows": rows, "error": " ".join(stopped)}), flush=True)
except Exception as e:
    wall = time.monotonic() - started
    print("RESULT " + json.dumps({"outcome": "failed", "wall_s": wall,
                                  "peak_heap_mb": heap_peak.peak_mb,
                                  "rows": "", "error": describe(e)}), flush=True)
"""

SETUP = SESSION + r"""
engine, statements = sys.argv[1], json.loads(sys.argv[2])
""" + engine_session('"4g"') + r"""
for sql in statements:
    spark.sql(sql).collect()
print("RESULT {}", flush=True)
"""

BUILD = preamble(SessionSpec(
    extension=False,
    conf={"spark.ui.enabled": "false", "spark.driver.memory": "2g"},
    log_level="ERROR",
)) + r"""
from pathlib import Path

sys.path.insert(0, sys.argv[5])
from log_only_table import write_log_only_table

write_log_only_table(spark, Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3],
                     checkpoint_version=int(sys.argv[4]), small_commits=int(sys.argv[6]))
print("RESULT {}", flush=True)
"""


def table_path(layout: str, n: int) -> Path:
    return WORK / f"{layout}-{n}"


#: Layouts of log-only tables: data files under the table ("files"), outside it ("elsewhere"),
#: or under it with 100 small commits after the checkpoint instead of 50 ("long-tail").
LONG_TAIL = "long-tail"
LONG_TAIL_COMMITS = 100


def build(layout: str, n: int) -> Path:
    """The log-only table of ``n`` files in ``layout``, built once (copied per measurement)."""
    path = table_path(layout, n)
    small_commits = LONG_TAIL_COMMITS if layout == LONG_TAIL else SMALL_COMMITS
    last = CHECKPOINT_VERSION + small_commits
    if (path / "_delta_log" / f"{last:020d}.json").is_file():
        return path
    shutil.rmtree(path, ignore_errors=True)
    shutil.rmtree(str(path) + "_staging", ignore_errors=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    outside = (WORK / "outside").resolve().as_uri() if layout == "elsewhere" else ""
    started = time.monotonic()
    run = subprocess.run([sys.executable, "-c", BUILD, str(path), str(n), outside,
                          str(CHECKPOINT_VERSION), str(REPO / "tests"), str(small_commits)],
                         capture_output=True, text=True)
    if run.returncode != 0 or "RESULT " not in run.stdout:
        shutil.rmtree(path, ignore_errors=True)
        raise SystemExit("building the table failed:\n" + run.stderr[-4000:])
    print(f"built {path} in {time.monotonic() - started:.0f} s", flush=True)
    return path


def result_of(run: subprocess.CompletedProcess) -> Optional[Dict[str, Any]]:
    lines = [line for line in run.stdout.splitlines() if line.startswith("RESULT ")]
    return json.loads(lines[-1][len("RESULT "):]) if lines else None


def measure(statement: Statement, table: Path, heap: str) -> Dict[str, Any]:
    """One run of ``statement`` on a fresh copy of ``table`` at ``heap``."""
    # Per process, so that two runs of the benchmark do not share a table.
    work = WORK / f"run-{os.getpid()}"
    dest = WORK / f"run-{os.getpid()}-destination"
    for p in (work, dest):
        shutil.rmtree(p, ignore_errors=True)
    shutil.copytree(table, work)

    def fill(sqls: Sequence[str]) -> str:
        return json.dumps([s.format(t=f"delta.`{work}`", dest=dest) for s in sqls])

    if statement.setup:
        run = subprocess.run([sys.executable, "-c", SETUP, statement.engine,
                              fill(statement.setup)], capture_output=True, text=True)
        if result_of(run) is None:
            return {"outcome": "setup failed", "wall_s": "", "peak_heap_mb": "", "rows": "",
                    "error": last_line(run.stderr)}
    started = time.monotonic()
    try:
        run = subprocess.run([sys.executable, "-c", MEASURE, statement.engine, heap,
                              fill(statement.sql), json.dumps(list(statement.expected_errors))],
                             capture_output=True, text=True, timeout=statement.timeout_s)
    except subprocess.TimeoutExpired:
        return {"outcome": "timed out", "wall_s": time.monotonic() - started,
                "peak_heap_mb": "", "rows": "", "error": ""}
    # Each run's output, for the stack traces behind a failure.
    logs = WORK / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    name = f"{table.name}-{statement.engine}-{statement.name}-{heap}".replace(" ", "_")
    (logs / f"{name}.log").write_text(run.stdout + "\n" + run.stderr)
    result = result_of(run)
    if result is None:
        # The JVM died before the statement returned (the SparkContext shut down, say).
        oom = "OutOfMemoryError" in run.stderr or "Java heap space" in run.stderr
        result = {"outcome": "out of memory" if oom else "failed",
                  "wall_s": time.monotonic() - started, "peak_heap_mb": "", "rows": "",
                  "error": last_line(run.stderr)}
    elif result["outcome"] == "failed" and ("OutOfMemoryError" in result["error"]
                                            or "Java heap space" in result["error"]):
        result["outcome"] = "out of memory"
    return result


def last_line(stderr: str) -> str:
    lines = [line for line in stderr.strip().splitlines() if line.strip()]
    return lines[-1][:300] if lines else ""


FIELDS = ["files", "engine", "operation", "heap", "outcome", "wall_s", "peak_heap_mb", "rows",
          "comparable", "load_avg", "error"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, nargs="+",
                        default=[1_000_000, 3_000_000, 10_000_000])
    parser.add_argument("--heaps", nargs="+", default=["1g"])
    parser.add_argument("--only", nargs="+", default=[],
                        help="measure only the statements of these names (either engine)")
    parser.add_argument("--engine", choices=[STOCK, LIFECYCLE],
                        help="measure only this engine's statements")
    parser.add_argument("--append", action="store_true",
                        help="keep the rows of driver-memory.csv not measured again")
    parser.add_argument("--build-only", action="store_true")
    parser.add_argument("--out", type=Path, default=RESULTS / "driver-memory.csv",
                        help="the CSV to write (default: the committed one)")
    args = parser.parse_args()
    chosen = [s for s in (STATEMENTS + OPTIONAL if args.only else STATEMENTS)
              if (not args.only or s.name in args.only)
              and (not args.engine or s.engine == args.engine)]
    out = args.out
    out.parent.mkdir(parents=True, exist_ok=True)
    rows: List[Dict[str, Any]] = []
    measured = {(n, s.engine, s.name, h) for n in args.files for s in chosen for h in args.heaps}
    if args.append and out.is_file():
        with open(out, newline="") as f:
            rows = [r for r in csv.DictReader(f)
                    if (int(r["files"]), r["engine"], r["operation"], r["heap"]) not in measured]
    for n in args.files:
        tables = {layout: build(layout, n) for layout in sorted({s.layout for s in chosen})}
        if args.build_only:
            continue
        for heap in args.heaps:
            for statement in chosen:
                result = measure(statement, tables[statement.layout], heap)
                row = {"files": n, "engine": statement.engine, "operation": statement.name,
                       "heap": heap, "comparable": statement.comparable,
                       "load_avg": f"{os.getloadavg()[1]:.1f}", **result}
                rows.append(row)
                print(json.dumps(row), flush=True)
                with open(out, "w", newline="") as f:
                    writer = csv.DictWriter(f, fieldnames=FIELDS, extrasaction="ignore")
                    writer.writeheader()
                    writer.writerows(rows)
    for p in (WORK / f"run-{os.getpid()}", WORK / f"run-{os.getpid()}-destination"):
        shutil.rmtree(p, ignore_errors=True)


if __name__ == "__main__":
    main()
