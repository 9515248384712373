"""Benchmark: SET REDIRECT's copy against ``cp -r``, and UNSET REDIRECT's replay.

Copy: a real table of about 5 GB in 2,000 files (incompressible binary columns written by
Spark, cached under ``bench/work/copy``) is redirected to a fresh directory on the same
disk with SET REDIRECT, and copied with ``cp -r`` in the same run. Each repetition then
UNSETs the redirect (nothing was written at the destination, so nothing is copied back), and
deletes the destination, so the next repetition starts from the same table. Reported:

- the statement's wall time, then ``sync`` as after ``cp -r``, against ``cp -r``'s. The session
  first redirects a small table elsewhere and back three times, so the JVM's class loading and
  compiling is not counted (as in a long-lived session); the source's log is still read cold;
- the write-blocked window: from the commit entering ENABLE-REDIRECT-IN-PROGRESS to the
  commit reaching READY (their ``commitInfo`` timestamps), as a fraction of the statement's
  wall time. Nothing is written during the pre-copy here.

UNSET: a small table is redirected, then N commits are written at the destination by delta-rs
(``write_deltalake`` appends: real commits, and quick to make), then UNSET REDIRECT replays them
on the source. Reported: wall time and time per replayed commit, for each N.

    python bench/redirect_copy.py [--gb 5] [--files 2000] [--repetitions 2] [--commits 100 1000]
                                  [--skip-copy] [--skip-unset] [--part NAME]

writes bench/results/redirect-copy.csv and redirect-unset.csv (and, through
bench/plot_redirect_copy.py, redirect-copy.png); with ``--part NAME`` the copy runs go to
redirect-copy-NAME.csv instead (a smaller table, say, next to the committed 5.3 GiB runs).
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
from pathlib import Path
from typing import Any, Dict, List

ROOT = Path(__file__).resolve().parent
sys.path.append(str(ROOT.parent / "tests"))

from spark_sessions import SessionSpec, preamble  # noqa: E402

WORK = ROOT / "work" / "copy"
RESULTS = ROOT / "results"

#: The session of every run (redirect_copy_s3.py's too): small and quiet local Spark.
SESSION_CONF = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.driver.memory": "4g",
    "spark.sql.shuffle.partitions": "2",
    "spark.databricks.delta.snapshotPartitions": "2",
}

SESSION = preamble(SessionSpec(conf=SESSION_CONF, log_level="ERROR")) + r"""
import time
"""

BUILD = SESSION + r"""
from pyspark.sql import functions as F
path, rows, files = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
# Four SHA-512 digests a row: 256 bytes no codec can shrink.
df = spark.range(0, rows, numPartitions=files).select(
    "id", *[F.unhex(F.sha2(F.concat(F.col("id").cast("string"), F.lit(str(k))), 512)).alias(f"b{k}")
            for k in range(4)])
df.write.format("delta").save(path)
"""

REDIRECT = SESSION + r"""
import os
src, dest, warmup = sys.argv[1], sys.argv[2], sys.argv[3]
# A session's first statements load and compile their classes: a small table elsewhere,
# redirected and back three times, warms them, so the time below is the copy's, as in a
# long-lived session, not the JVM's. The source's log is still read cold.
import shutil
spark.range(1000).repartition(20).write.format("delta").mode("overwrite").save(warmup)
for _ in range(3):
    shutil.rmtree(warmup + "-dest", ignore_errors=True)
    spark.sql(f"ALTER TABLE delta.`{warmup}` SET REDIRECT TO '{warmup}-dest'").collect()
    spark.sql(f"ALTER TABLE delta.`{warmup}` UNSET REDIRECT").collect()
spark.read.format("delta").load(warmup).count()
started = time.monotonic()
row = spark.sql(f"ALTER TABLE delta.`{src}` SET REDIRECT TO '{dest}'").collect()[0]
os.sync()  # as after cp -r: the copy is on disk
wall = time.monotonic() - started
assert row["state"] == "READY", row
# The source's commits name the redirect state they enter.
commits = spark.read.json(src + "/_delta_log/*.json").where("commitInfo is not null") \
    .select("commitInfo.timestamp", "commitInfo.operationParameters.state").collect()
states: dict = {}
for r in commits:  # the newest commit of each state (earlier repetitions left theirs)
    if r["state"]:
        key = r["state"].strip('"')
        states[key] = max(states.get(key, 0), r["timestamp"])
blocked = (states["READY"] - states["ENABLE-REDIRECT-IN-PROGRESS"]) / 1000.0
count = spark.read.format("delta").load(src).count()
spark.sql(f"ALTER TABLE delta.`{src}` UNSET REDIRECT").collect()
print("RESULT " + json.dumps({"wall_s": wall, "blocked_s": blocked, "rows": count,
                              "files_copied": row["filesCopied"],
                              "bytes_copied": row["bytesCopied"]}))
"""

UNSET = SESSION + r"""
src, dest, commits = sys.argv[1], sys.argv[2], int(sys.argv[3])
spark.sql(f"CREATE TABLE delta.`{src}` (id BIGINT) USING delta")
spark.range(0, 1000, numPartitions=4).write.format("delta").mode("append").save(src)
spark.sql(f"ALTER TABLE delta.`{src}` SET REDIRECT TO '{dest}'").collect()
import pyarrow as pa
from deltalake import write_deltalake
for i in range(commits):
    write_deltalake(dest, pa.table({"id": pa.array([1000 + i], pa.int64())}), mode="append")
started = time.monotonic()
row = spark.sql(f"ALTER TABLE delta.`{src}` UNSET REDIRECT").collect()[0]
wall = time.monotonic() - started
assert row["state"] == "NORMAL", row
count = spark.read.format("delta").load(src).count()
assert count == 1000 + commits, count
print("RESULT " + json.dumps({"wall_s": wall, "files_copied": row["filesCopied"]}))
"""


def run(script: str, *args: str) -> Dict[str, Any]:
    done = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True)
    lines = [l for l in done.stdout.splitlines() if l.startswith("RESULT ")]
    if done.returncode != 0:
        raise SystemExit(f"failed:\n{done.stderr[-4000:]}")
    return json.loads(lines[-1][len("RESULT "):]) if lines else {}


def du(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def build(gb: float, files: int) -> Path:
    """The source table, built once: `gb` GB of parquet in `files` files."""
    path = WORK / f"source-{files}"
    if (path / "_delta_log").is_dir():
        return path
    rows = int(gb * 2**30 / 264)
    started = time.monotonic()
    run(BUILD, str(path), str(rows), str(files))
    print(f"built {path} ({du(path) / 2**30:.2f} GiB) in {time.monotonic() - started:.0f} s",
          flush=True)
    return path


def copy_runs(source: Path, repetitions: int) -> List[Dict[str, Any]]:
    size = du(source)
    files = sum(1 for _ in source.glob("*.parquet"))
    rows: List[Dict[str, Any]] = []
    for rep in range(repetitions):
        target = WORK / "cp-target"
        shutil.rmtree(target, ignore_errors=True)
        subprocess.run(["sync"], check=True)
        load_before = os.getloadavg()[0]
        started = time.monotonic()
        subprocess.run(["cp", "-r", str(source), str(target)], check=True)
        subprocess.run(["sync"], check=True)
        cp = time.monotonic() - started
        shutil.rmtree(target)

        dest = WORK / "redirect-target"
        shutil.rmtree(dest, ignore_errors=True)
        result = run(REDIRECT, str(source), str(dest), str(WORK / "warmup"))
        shutil.rmtree(dest)
        row = {"repetition": rep, "files": files, "bytes": size, "cp_s": round(cp, 2),
               "set_redirect_s": round(result["wall_s"], 2),
               "ratio_to_cp": round(result["wall_s"] / cp, 3),
               "write_blocked_s": round(result["blocked_s"], 2),
               "write_blocked_fraction": round(result["blocked_s"] / result["wall_s"], 4),
               "files_copied": result["files_copied"], "bytes_copied": result["bytes_copied"],
               "cp_mb_s": round(size / 1e6 / cp, 1),
               "set_redirect_mb_s": round(size / 1e6 / result["wall_s"], 1),
               # The machine is shared: the 1-minute load average around the two copies.
               "load_before": round(load_before, 2), "load_after": round(os.getloadavg()[0], 2)}
        print(json.dumps(row), flush=True)
        rows.append(row)
    return rows


def unset_runs(counts: List[int]) -> List[Dict[str, Any]]:
    rows: List[Dict[str, Any]] = []
    for n in counts:
        src, dest = WORK / f"unset-src-{n}", WORK / f"unset-dest-{n}"
        shutil.rmtree(src, ignore_errors=True)
        shutil.rmtree(dest, ignore_errors=True)
        result = run(UNSET, str(src), str(dest), str(n))
        row = {"destination_commits": n, "unset_s": round(result["wall_s"], 2),
               "ms_per_commit": round(1000 * result["wall_s"] / n, 1),
               "files_copied": result["files_copied"]}
        print(json.dumps(row), flush=True)
        rows.append(row)
        shutil.rmtree(src)
        shutil.rmtree(dest)
    return rows


def write(name: str, rows: List[Dict[str, Any]]) -> None:
    RESULTS.mkdir(exist_ok=True)
    with open(RESULTS / name, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gb", type=float, default=5.0)
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--repetitions", type=int, default=2)
    parser.add_argument("--commits", type=int, nargs="+", default=[100, 1000])
    parser.add_argument("--skip-copy", action="store_true")
    parser.add_argument("--skip-unset", action="store_true")
    parser.add_argument("--part", default="", help="write redirect-copy-<part>.csv")
    args = parser.parse_args()
    WORK.mkdir(parents=True, exist_ok=True)
    if not args.skip_copy:
        name = f"redirect-copy-{args.part}.csv" if args.part else "redirect-copy.csv"
        write(name, copy_runs(build(args.gb, args.files), args.repetitions))
    if not args.skip_unset:
        write("redirect-unset.csv", unset_runs(args.commits))


if __name__ == "__main__":
    main()
