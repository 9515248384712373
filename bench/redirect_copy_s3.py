"""Benchmark: SET REDIRECT between two buckets of one MinIO server, the store
copying each file itself (server-side) against the executors copying through streams, with
``mc cp --recursive`` (MinIO's client, which also has the server copy) as the reference.

A MinIO server and ``mc`` are built from their Go modules and started by
``tests/objectstore/server.py`` (cached after the first build; the server listens on
127.0.0.1). The table is ``redirect_copy.py``'s kind (four SHA-512 digests a row, which no
codec shrinks), written locally once into ``bench/work/copy/source-<files>`` and uploaded
with ``mc cp --recursive`` into ``s3a://bench-source/table``. Each repetition runs, in turn
(the order reverses every repetition, so drift hits each variant alike):

- ``mc``: ``mc cp --recursive local/bench-source/table/ local/bench-dest/mc-<rep>/``;
- ``server-side``: ``SET REDIRECT`` to ``s3a://bench-dest/r<rep>``;
- ``streams``: ``SET REDIRECT`` to ``s3a://bench-streams/r<rep>``, a bucket of the same
  server whose S3A endpoint is spelled ``localhost`` (per-bucket setting): to S3A's client
  another store, so the executors copy through streams.

Each SET REDIRECT runs in a fresh JVM (a subprocess), which first writes and reads a one-row
table in another bucket (Delta's and the S3 client's classes load outside the timed part),
then times the statement, then UNSETs the redirect (untimed; nothing is copied back). Per run:
wall time; the result row (files, bytes, copy mode, bytes through the executors); the bytes
the statement's Spark tasks read and wrote (their input and output metrics, from the Spark
event log); the bytes the JVM read and wrote on any file or socket (``/proc/<pid>/io``
``rchar``/``wchar``, which holds the local executors: a check on the task metrics); and
MinIO's own request counts and traffic for the statement (its v3 metrics). The destination is
deleted after each run.

    python bench/redirect_copy_s3.py [--gb 2] [--files 1000] [--repetitions 3]

writes bench/results/redirect-copy-s3.csv (one row per run) and, through
bench/plot_redirect_copy_s3.py, redirect-copy-s3-summary.csv and redirect-copy-s3.png.
"""

from __future__ import annotations

import argparse
import csv
import glob
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List

ROOT = Path(__file__).resolve().parent
REPO = ROOT.parent
RESULTS = ROOT / "results"
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(REPO / "tests" / "objectstore"))
sys.path.append(str(REPO / "tests"))

import redirect_copy  # noqa: E402
from server import ObjectStore, build_mc, start_object_store  # noqa: E402
from spark_sessions import SessionSpec, preamble  # noqa: E402

BUCKETS = ("bench-source", "bench-dest", "bench-streams", "bench-warm")
SOURCE = "s3a://bench-source/table"
WRITES = ("PutObject", "CopyObject", "CopyObjectPart", "NewMultipartUpload",
          "PutObjectPart", "CompleteMultipartUpload", "DeleteObject", "DeleteMultipleObjects")

REDIRECT = r"""
import os, time
from delta_lifecycle import hadoop_aws_package

""" + preamble(
    SessionSpec(log_level="ERROR"),
    conf="json.loads(sys.argv[1])",
    packages="(hadoop_aws_package(),)",
) + r"""
src, dest, warm, endpoint, server_dir = sys.argv[2:7]

sys.path.insert(0, server_dir)
from server import request_counts

def requests():
    return request_counts(endpoint)

pid = spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid()
def io():
    fields = dict(l.split(": ") for l in open(f"/proc/{pid}/io").read().splitlines())
    return int(fields["rchar"]), int(fields["wchar"])

# Delta's and the S3 client's classes load here, outside the timed part; the source's log is
# still read cold.
spark.range(1).write.format("delta").mode("overwrite").save(warm)
spark.read.format("delta").load(warm).count()
before_requests, before_io = requests(), io()
started = time.monotonic()
row = spark.sql(f"ALTER TABLE delta.`{src}` SET REDIRECT TO '{dest}'").collect()[0]
wall = time.monotonic() - started
after_io, after_requests = io(), requests()
assert row["state"] == "READY", row
spark.sql(f"ALTER TABLE delta.`{src}` UNSET REDIRECT").collect()
app = spark.sparkContext.applicationId
spark.stop()
print("RESULT " + json.dumps({
    "wall_s": wall, "app": app, "files_copied": row["filesCopied"],
    "bytes_copied": row["bytesCopied"], "copy_mode": row["copyMode"],
    "copy_mode_reason": row["copyModeReason"],
    "bytes_through_executors": row["bytesThroughExecutors"],
    "jvm_read": after_io[0] - before_io[0], "jvm_written": after_io[1] - before_io[1],
    "requests": {k: after_requests.get(k, 0) - before_requests.get(k, 0)
                 for k in set(after_requests) | set(before_requests)},
}))
"""


def task_bytes(event_dir: Path, app: str) -> Dict[str, int]:
    """Input and output bytes of the SET REDIRECT statement's tasks, from the event log: all
    of them, and those of the jobs that copy files."""
    found = glob.glob(str(event_dir / f"{app}*"))
    assert len(found) == 1, (app, os.listdir(event_dir))
    [log] = found
    descriptions: Dict[int, str] = {}
    totals = {"task_read": 0, "task_written": 0, "copy_task_read": 0, "copy_task_written": 0}
    with open(log) as f:
        for line in f:
            event = json.loads(line)
            kind = event.get("Event")
            if kind == "SparkListenerJobStart":
                description = (event.get("Properties") or {}).get("spark.job.description") or ""
                for stage in event.get("Stage IDs", []):
                    descriptions[stage] = description
            elif kind == "SparkListenerTaskEnd":
                description = descriptions.get(event["Stage ID"], "")
                if not description.startswith("SET REDIRECT on"):
                    continue
                metrics = event.get("Task Metrics") or {}
                read = (metrics.get("Input Metrics") or {}).get("Bytes Read", 0)
                written = (metrics.get("Output Metrics") or {}).get("Bytes Written", 0)
                totals["task_read"] += read
                totals["task_written"] += written
                if ": copy " in description:
                    totals["copy_task_read"] += read
                    totals["copy_task_written"] += written
    return totals


def redirect_run(store: ObjectStore, dest: str, warm: str, event_dir: Path) -> Dict[str, Any]:
    settings = {
        **redirect_copy.SESSION_CONF,
        **store.spark_conf(),
        "spark.hadoop.fs.s3a.bucket.bench-streams.endpoint":
            store.endpoint.replace("127.0.0.1", "localhost"),
        "spark.eventLog.enabled": "true",
        "spark.eventLog.dir": str(event_dir),
        # One plain JSON file per application (Spark 4 rolls and compresses by default).
        "spark.eventLog.rolling.enabled": "false",
        "spark.eventLog.compress": "false",
    }
    done = subprocess.run(
        [sys.executable, "-c", REDIRECT, json.dumps(settings), SOURCE, dest, warm, store.endpoint,
         str(REPO / "tests" / "objectstore")],
        capture_output=True, text=True,
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    if done.returncode != 0 or not lines:
        raise SystemExit(f"SET REDIRECT failed:\n{done.stderr[-4000:]}")
    result: Dict[str, Any] = json.loads(lines[-1][len("RESULT "):])
    result.update(task_bytes(event_dir, result.pop("app")))
    return result


def mc_run(store: ObjectStore, dest: str) -> Dict[str, Any]:
    before = store.request_counts()
    started = time.monotonic()
    store.mc("cp", "--recursive", "local/bench-source/table/", dest + "/")
    wall = time.monotonic() - started
    after = store.request_counts()
    return {"wall_s": wall, "requests": {k: after.get(k, 0) - before.get(k, 0)
                                         for k in set(after) | set(before)}}


def row_of(rep: int, variant: str, table: Dict[str, int], result: Dict[str, Any],
           load_before: float) -> Dict[str, Any]:
    requests = result["requests"]
    return {
        "repetition": rep, "variant": variant, "files": table["files"], "bytes": table["bytes"],
        "wall_s": round(result["wall_s"], 2),
        "copy_mode": result.get("copy_mode", "server-side (mc)"),
        "files_copied": result.get("files_copied", ""),
        "bytes_copied": result.get("bytes_copied", ""),
        "bytes_through_executors": result.get("bytes_through_executors", ""),
        "task_read": result.get("task_read", ""), "task_written": result.get("task_written", ""),
        "copy_task_read": result.get("copy_task_read", ""),
        "copy_task_written": result.get("copy_task_written", ""),
        "jvm_read": result.get("jvm_read", ""), "jvm_written": result.get("jvm_written", ""),
        "CopyObject": requests.get("CopyObject", 0),
        "CopyObjectPart": requests.get("CopyObjectPart", 0),
        "GetObject": requests.get("GetObject", 0), "PutObject": requests.get("PutObject", 0),
        "HeadObject": requests.get("HeadObject", 0),
        "ListObjectsV2": requests.get("ListObjectsV2", 0) + requests.get("ListObjectsV1", 0),
        "writes": sum(requests.get(k, 0) for k in WRITES),
        "requests": sum(v for k, v in requests.items() if not k.startswith("traffic_")),
        "server_received": requests.get("traffic_received_bytes", 0),
        "server_sent": requests.get("traffic_sent_bytes", 0),
        "load_before": round(load_before, 2), "load_after": round(os.getloadavg()[0], 2),
    }


def upload(store: ObjectStore, local: Path) -> Dict[str, int]:
    store.mc("cp", "--recursive", f"{local}/", "local/bench-source/table/")
    files = sum(1 for _ in local.glob("*.parquet"))
    return {"files": files, "bytes": sum(f.stat().st_size for f in local.glob("*.parquet"))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gb", type=float, default=2.0)
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--repetitions", type=int, default=3)
    args = parser.parse_args()
    redirect_copy.WORK.mkdir(parents=True, exist_ok=True)
    local = redirect_copy.build(args.gb, args.files)
    build_mc()
    store = start_object_store(BUCKETS)
    rows: List[Dict[str, Any]] = []
    try:
        table = upload(store, local)
        print(f"uploaded {table['files']} files, {table['bytes'] / 2**30:.2f} GiB", flush=True)
        with tempfile.TemporaryDirectory(prefix="redirect-copy-s3-events-") as events:
            for rep in range(args.repetitions):
                order = ["mc", "server-side", "streams"]
                for variant in order if rep % 2 == 0 else reversed(order):
                    load = os.getloadavg()[0]
                    if variant == "mc":
                        dest = f"local/bench-dest/mc-{rep}"
                        result = mc_run(store, dest)
                    else:
                        bucket = "bench-dest" if variant == "server-side" else "bench-streams"
                        dest = f"local/{bucket}/r{rep}"
                        result = redirect_run(store, f"s3a://{bucket}/r{rep}",
                                              f"s3a://bench-warm/w{rep}-{variant}", Path(events))
                    row = row_of(rep, variant, table, result, load)
                    print(json.dumps(row), flush=True)
                    rows.append(row)
                    store.mc("rm", "--recursive", "--force", dest)
    finally:
        store.stop()
    RESULTS.mkdir(exist_ok=True)
    with open(RESULTS / "redirect-copy-s3.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


if __name__ == "__main__":
    main()
