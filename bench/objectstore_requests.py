"""Benchmark: S3 requests per operation on a real object store, this extension
against stock delta-spark.

A MinIO server (``tests/objectstore/server.py``) is started for the run. Tables of
N = 1,000 and 10,000 commits are built locally once (cached under ``bench/work/objectstore``)
and uploaded to a fresh prefix per JVM, so every JVM starts from the same log:

- version 0 is a Spark ``CREATE TABLE`` with ``delta.checkpointInterval = 100``;
- versions 1 .. N+3 are commit files written directly (``commitInfo`` + one ``add``, and
  from version 2 on the ``remove`` of the previous file: two real one-row parquet files take
  turns, so one data file is live); after every 100th, delta-spark writes the checkpoint from
  its own snapshot (``DeltaLog.checkpoint``), as its hook would;
- version N+4 is a real Spark INSERT (it writes the version checksum, as any commit does).

So the latest version is N+4, the newest checkpoint is at N, no log cleanup ever ran.

Each engine runs in its own JVM (subprocess): ``delta-lifecycle`` (``configure_spark``: delta-spark
plus this extension and its catalog) or ``stock`` (delta-spark only), with the same S3A settings,
under two LogStore setups: ``default`` (delta-spark's S3SingleDriverLogStore: ``listFrom`` lists
the whole ``_delta_log`` directory) and ``fast-listfrom`` (``spark.hadoop.delta.enableFastS3AListFrom
= true``: ``listFrom`` asks S3 to start after the given file). The JVM reads the S3A file
system's IOStatistics counters (the instance Spark uses: ``FileSystem.get`` is cached per bucket)
before and after every operation, waiting until the counters stop moving (the extension's
post-commit policy runs in the background), and prints the differences.

    python bench/objectstore_requests.py [--lengths 1000 10000] [--setups default fast-listfrom]
                                         [--runs 1]
    python bench/objectstore_requests.py --levels   # cold count(*) on LevelsBenchmark's tables

writes bench/results/objectstore-requests.csv (long format: one row per operation, log length,
engine, setup, run and request type), objectstore-requests-summary.csv (extension - stock) and,
through bench/plot_objectstore.py, objectstore-requests.png.

``--levels`` measures only a cold ``count(*)`` on the tables LevelsBenchmark built under
``bench/work/levels`` (a checkpoint at 1000, then K one-file commits with the policy's
levels of compactions, against the interval-10 worst case of the checkpoint plus 9 commits), in
both engines, and writes objectstore-requests-levels.csv.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Dict, List, Tuple

ROOT = Path(__file__).resolve().parent
REPO = ROOT.parent
sys.path.append(str(REPO / "tests"))

from spark_sessions import SMALL_LOCAL_SESSION, start_session  # noqa: E402

WORK = ROOT / "work" / "objectstore"
RESULTS = ROOT / "results"
CHECKPOINT_INTERVAL = 100
TAIL = 4  # commits after the newest checkpoint: the latest version is N + TAIL
BUCKET = "bench"
#: LevelsBenchmark's cold-snapshot tables (bench/README.md) and their K (commits after the
#: checkpoint at version 1000): interval 10's worst case, then interval 1000 with levels.
LEVELS_WORK = ROOT / "work" / "levels"
LEVEL_TABLES = {"interval10-k9": 9, "levels-k10": 10, "levels-k100": 100, "levels-k500": 500,
                "levels-k999": 999}
DEST_BUCKET = "bench-dest"

#: Request types and the S3A IOStatistics counters (hadoop-aws 3.5.0) that make them up.
#: LIST counts requests (pages): the first page of a listing plus each continuation.
REQUEST_TYPES: Dict[str, Tuple[str, ...]] = {
    "LIST": ("object_list_request", "object_continue_list_request"),
    "HEAD": ("action_http_head_request",),
    "GET": ("action_http_get_request",),
    "PUT": ("object_put_request",),
    "DELETE": ("object_delete_request", "object_bulk_delete_request"),
    "COPY": ("object_copy_requests",),
}
BYTE_COUNTERS = {"bytes_read": "stream_read_bytes", "bytes_written": "object_put_bytes",
                 # Every HTTP request S3A sent, whatever its type: a check on the types above.
                 "all_requests": "audit_request_execution"}

ENGINES = ("delta-lifecycle", "stock")
SETUPS = {
    "default": {},
    "fast-listfrom": {"spark.hadoop.delta.enableFastS3AListFrom": "true"},
}


# --------------------------------------------------------------------------------------
# Building the tables (locally, once; a stock delta-spark session without S3A)
# --------------------------------------------------------------------------------------


def table_dir(n: int) -> Path:
    return WORK / f"log-{n}"


def build_tables(lengths: List[int]) -> None:
    todo = [n for n in lengths if not (table_dir(n) / "BUILT").is_file()]
    if not todo:
        return
    run = subprocess.run(
        ["nice", "-n", "5", sys.executable, __file__, "--worker", "build", json.dumps(todo)],
        cwd=REPO,
    )
    if run.returncode != 0:
        raise SystemExit("building the tables failed")


def build_worker(lengths: List[int]) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq
    spark = start_session(SMALL_LOCAL_SESSION.updated(extension=False))
    jvm = spark._jvm
    none = jvm.scala.Option.empty()
    DeltaLog = jvm.org.apache.spark.sql.delta.DeltaLog
    for n in lengths:
        # A Spark job per checkpoint takes far too long on this loaded machine.
        fast = True
        started = time.monotonic()
        path = table_dir(n)
        shutil.rmtree(path, ignore_errors=True)
        path.mkdir(parents=True)
        spark.sql(f"CREATE TABLE delta.`{path}` (id BIGINT) USING delta "
                  f"TBLPROPERTIES ('delta.checkpointInterval' = '{CHECKPOINT_INTERVAL}')")
        files = []
        for name in ("part-00000-bench-a.snappy.parquet", "part-00000-bench-b.snappy.parquet"):
            pq.write_table(pa.table({"id": pa.array([7], pa.int64())}), path / name)
            files.append((name, (path / name).stat().st_size))
        stats = json.dumps({"numRecords": 1, "minValues": {"id": 7}, "maxValues": {"id": 7},
                            "nullCount": {"id": 0}})
        log = path / "_delta_log"
        latest = n + TAIL
        ts = int(time.time() * 1000) - latest * 1000
        for v in range(1, latest):
            t = ts + v * 1000
            name, size = files[v % 2]
            actions: List[Dict[str, Any]] = [
                {"commitInfo": {"timestamp": t, "operation": "WRITE",
                                "operationParameters": {"mode": "Append", "partitionBy": "[]"},
                                "readVersion": v - 1, "isolationLevel": "Serializable",
                                "isBlindAppend": v == 1, "operationMetrics": {},
                                "engineInfo": "delta-lifecycle-bench"}},
                {"add": {"path": name, "partitionValues": {}, "size": size,
                         "modificationTime": t, "dataChange": True, "stats": stats}},
            ]
            if v >= 2:
                old, old_size = files[(v + 1) % 2]
                actions.append({"remove": {"path": old, "deletionTimestamp": t,
                                           "dataChange": True, "extendedFileMetadata": True,
                                           "partitionValues": {}, "size": old_size}})
            (log / f"{v:020d}.json").write_text("\n".join(json.dumps(a) for a in actions) + "\n")
            if v % CHECKPOINT_INTERVAL == 0 and (v in (CHECKPOINT_INTERVAL, n) or not fast):
                dl = DeltaLog.forTable(spark._jsparkSession, str(path))
                snapshot = dl.update(False, none, none)
                assert snapshot.version() == v, (snapshot.version(), v)
                dl.checkpoint(snapshot, none)
            elif v % CHECKPOINT_INTERVAL == 0:
                # The table's state at every even version is the same (file a live, b removed)
                # up to timestamps, so delta-spark's checkpoint at 100 stands for it: a byte
                # copy, with _last_checkpoint pointing at it as delta-spark would have it.
                first = log / f"{CHECKPOINT_INTERVAL:020d}.checkpoint.parquet"
                shutil.copyfile(first, log / f"{v:020d}.checkpoint.parquet")
                last = json.loads((log / "_last_checkpoint").read_text())
                last["version"] = v
                last.pop("checksum", None)
                (log / "_last_checkpoint").write_text(json.dumps(last))
        spark.sql(f"INSERT INTO delta.`{path}` VALUES (7)")
        count = spark.sql(f"SELECT count(*) FROM delta.`{path}`").collect()[0][0]
        assert count == 2, count
        # Hadoop's local file system writes hidden .<name>.crc sidecars: not part of the table.
        for hidden in path.rglob(".*.crc"):
            hidden.unlink()
        (path / "BUILT").write_text(f"{latest}\n")
        print(f"built {path}: latest version {latest} in {time.monotonic() - started:.0f} s",
              flush=True)
    spark.stop()


def _s3(store: Any) -> Any:
    import boto3

    return boto3.client("s3", endpoint_url=store.endpoint, aws_access_key_id=store.access_key,
                        aws_secret_access_key=store.secret_key, region_name=store.region)


def _table_files(local: Path) -> Dict[str, Path]:
    return {p.relative_to(local).as_posix(): p for p in local.rglob("*")
            if p.is_file() and not p.name.startswith(".") and p.name != "BUILT"}


def upload(store: Any, local: Path, bucket: str, prefix: str) -> int:
    """Copy the table at ``local`` to ``s3://bucket/prefix`` (boto3, 32 threads)."""
    s3 = _s3(store)
    files = _table_files(local)

    def put(item: Tuple[str, Path]) -> None:
        s3.upload_file(str(item[1]), bucket, f"{prefix}/{item[0]}")

    with ThreadPoolExecutor(32) as pool:
        list(pool.map(put, files.items()))
    return len(files)


def reset(store: Any, local: Path, bucket: str, prefix: str) -> int:
    """Bring ``s3://bucket/prefix`` back to the table at ``local`` after a JVM changed it:
    delete every object the local table does not have (new commits, checksums, checkpoints,
    compactions, data files) and put ``_last_checkpoint`` back; every other object is
    written once and never changed, so the rest is untouched (same keys, same times)."""
    s3 = _s3(store)
    files = _table_files(local)
    extra = []
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix + "/"):
        for obj in page.get("Contents", []):
            if obj["Key"][len(prefix) + 1:] not in files:
                extra.append(obj["Key"])
    for i in range(0, len(extra), 1000):
        s3.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": k}
                                                             for k in extra[i:i + 1000]]})
    s3.upload_file(str(local / "_delta_log" / "_last_checkpoint"), bucket,
                   f"{prefix}/_delta_log/_last_checkpoint")
    return len(extra)


# --------------------------------------------------------------------------------------
# Measuring (one JVM per engine and setup)
# --------------------------------------------------------------------------------------


def measure_worker(engine: str, spec: Dict[str, Any]) -> None:
    spark = start_session(SMALL_LOCAL_SESSION.updated(
        conf={
            "spark.sql.warehouse.dir": spec["warehouse"],
            "spark.ui.showConsoleProgress": "false",
            **spec["conf"],
        },
        extension=engine != "stock",
        packages=(spec["hadoop_aws"],),
    ))
    extensions = spark.conf.get("spark.sql.extensions")
    assert ("DeltaLifecycle" in extensions) == (engine != "stock"), extensions
    jvm = spark._jvm
    hconf = spark._jsc.hadoopConfiguration()
    FileSystem = jvm.org.apache.hadoop.fs.FileSystem
    filesystems = [FileSystem.get(jvm.java.net.URI(f"s3a://{b}/"), hconf)
                   for b in (BUCKET, DEST_BUCKET)]

    def counters() -> Dict[str, int]:
        total: Dict[str, int] = {}
        for fs in filesystems:
            m = fs.getIOStatistics().counters()
            for k in list(m.keySet().toArray()):
                total[str(k)] = total.get(str(k), 0) + int(m.get(k))
        return total

    if spec.get("print_counters"):
        print("COUNTERS " + json.dumps(sorted(counters())), flush=True)

    def settled() -> Dict[str, int]:
        """The counters once they stop moving (the policy's background work, if any)."""
        last, quiet, deadline = counters(), 0, time.monotonic() + 20
        while quiet < 3 and time.monotonic() < deadline:
            time.sleep(0.5)
            now = counters()
            if now != last:
                moving = {k: now[k] - last.get(k, 0) for k in now if now[k] != last.get(k, 0)}
                print(f"settling: {moving}", file=sys.stderr, flush=True)
            quiet = quiet + 1 if now == last else 0
            last = now
        return last

    def measure(op: str, length: int, sql: str, check: Any = None) -> None:
        before = settled()
        started = time.perf_counter()
        error = None
        value = None
        try:
            rows = spark.sql(sql).collect()
            if rows and len(rows[0]) == 1 and isinstance(rows[0][0], int):
                value = rows[0][0]
            if check is not None:
                check(rows)
        except Exception as e:  # reported, not fatal: e.g. stock refusing a statement
            java = getattr(e, "java_exception", None)
            while java is not None and java.getCause() is not None:
                java = java.getCause()  # the root cause says what went wrong
            text = java.toString() if java is not None else f"{type(e).__name__}: {e}"
            error = text.splitlines()[0][:300]
        wall = time.perf_counter() - started
        after = settled()
        delta = {k: after[k] - before.get(k, 0) for k in after if after[k] != before.get(k, 0)}
        print("RESULT " + json.dumps({"op": op, "length": length, "wall_s": wall,
                                      "error": error, "counters": delta, "value": value}),
              flush=True)

    def count_is(expected: int) -> Any:
        def check(rows: Any) -> None:
            assert rows[0][0] == expected, (rows[0][0], expected)
        return check

    # A table's first access in this JVM: delta-spark (and the extension) know nothing of it.
    for name, k, uri in spec.get("levels", []):
        measure(f"count cold, {'interval 10' if name.startswith('interval') else 'levels'}", k,
                f"SELECT count(*) FROM delta.`{uri}`")

    for length, uri in spec["tables"]:
        t = f"delta.`{uri}`"
        count = f"SELECT count(*) FROM {t}"
        measure("count cold", length, count, count_is(2))
        measure("count warm", length, count, count_is(2))
        measure("count warm", length, count, count_is(2))
        # Both read every commit (about 35 s per 1,000 commits here): only up to a limit.
        if length <= spec["history_max"]:
            measure("DESCRIBE HISTORY", length, f"DESCRIBE HISTORY {t}")
            if engine == "delta-lifecycle":
                measure("DESCRIBE PROTOCOL HISTORY", length, f"DESCRIBE PROTOCOL HISTORY {t}")
        # Latest N+4 (checkpoint at N): the inserts write N+5 .. N+9, nothing due for the
        # policy (fewer than 10 commits since the checkpoint); N+10 is the 10th: a compaction.
        for i in range(5):
            measure("INSERT", length, f"INSERT INTO {t} VALUES ({i})")
        measure("INSERT + compaction", length, f"INSERT INTO {t} VALUES (99)")
        measure("count after inserts", length, count, count_is(8))
        measure("SET TBLPROPERTIES enableDeletionVectors", length,
                f"ALTER TABLE {t} SET TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')")
        measure("DROP FEATURE deletionVectors", length,
                f"ALTER TABLE {t} DROP FEATURE deletionVectors")
        measure("count after drop", length, count, count_is(8))

    if engine == "delta-lifecycle" and spec.get("redirect"):
        src, dest = spec["redirect"]
        spark.range(0, 100, numPartitions=2).write.format("delta").save(src)
        for i in range(5):
            spark.sql(f"INSERT INTO delta.`{src}` VALUES ({i})")
        measure("SET REDIRECT (small table)", 6,
                f"ALTER TABLE delta.`{src}` SET REDIRECT TO '{dest}'")
        measure("count via redirect cold", 6, f"SELECT count(*) FROM delta.`{src}`",
                count_is(105))
        measure("count via redirect warm", 6, f"SELECT count(*) FROM delta.`{src}`",
                count_is(105))
    spark.stop()


def run_jvm(engine: str, setup: str, spec: Dict[str, Any]) -> List[Dict[str, Any]]:
    started = time.monotonic()
    first_table = spec["tables"][0][0] if spec["tables"] else "levels"
    errors = WORK / f"worker-{engine}-{setup}-{first_table}.log"
    with open(errors, "w") as err:
        process = subprocess.Popen(
            ["nice", "-n", "5", sys.executable, __file__, "--worker", engine, json.dumps(spec)],
            cwd=REPO, stdout=subprocess.PIPE, stderr=err, text=True,
        )
    out = []
    assert process.stdout is not None
    for line in process.stdout:
        if line.startswith("RESULT "):
            out.append(json.loads(line[len("RESULT "):]))
            r = out[-1]
            print(f"    {r['op']} ({r['length']}): {r['wall_s']:.1f} s "
                  f"{r['error'] or ''} {r['counters']}", flush=True)
        elif line.startswith("COUNTERS "):
            print(f"  S3A counters available: {line[len('COUNTERS '):]}", flush=True)
    if process.wait() != 0:
        print(errors.read_text()[-6000:], file=sys.stderr)
        raise SystemExit(f"{engine}/{setup} failed")
    print(f"  {engine} / {setup}: {len(out)} measurements in {time.monotonic() - started:.0f} s",
          flush=True)
    return out


def rows_of(result: Dict[str, Any], engine: str, setup: str, run: int) -> List[Dict[str, Any]]:
    c = result["counters"]
    rows = []
    counts = {kind: sum(c.get(n, 0) for n in names) for kind, names in REQUEST_TYPES.items()}
    # S3A's default input stream in hadoop-aws 3.5 (the analytics accelerator) does not count
    # its GETs in action_http_get_request: GET is every request S3A audited minus the others.
    others = sum(v for k, v in counts.items() if k != "GET")
    counts["GET"] = max(counts["GET"], c.get("audit_request_execution", 0) - others)
    for kind, value in counts.items():
        rows.append({"operation": result["op"], "log_length": result["length"],
                     "engine": engine, "logstore": setup, "run": run, "request": kind,
                     "count": value})
    for kind, name in BYTE_COUNTERS.items():
        rows.append({"operation": result["op"], "log_length": result["length"],
                     "engine": engine, "logstore": setup, "run": run, "request": kind,
                     "count": c.get(name, 0)})
    rows.append({"operation": result["op"], "log_length": result["length"], "engine": engine,
                 "logstore": setup, "run": run, "request": "wall_ms",
                 "count": round(result["wall_s"] * 1000)})
    if result["error"]:
        rows.append({"operation": result["op"], "log_length": result["length"],
                     "engine": engine, "logstore": setup, "run": run, "request": "error",
                     "count": result["error"]})
    return rows


def summarize(rows: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """Median over runs and repeats of each (operation, length, setup, request), per engine,
    and the difference extension - stock."""
    groups: Dict[Tuple[str, int, str, str], Dict[str, List[float]]] = {}
    order: List[Tuple[str, int, str, str]] = []
    for r in rows:
        if r["request"] == "error":  # counted as a "failed" row: 1 if the statement failed
            r = {**r, "request": "failed", "count": 1}
        key = (r["operation"], int(r["log_length"]), r["logstore"], r["request"])
        if key not in groups:
            groups[key] = {}
            order.append(key)
        groups[key].setdefault(r["engine"], []).append(float(r["count"]))
    out = []
    for key in order:
        g = groups[key]
        ext = statistics.median(g["delta-lifecycle"]) if "delta-lifecycle" in g else None
        stock = statistics.median(g["stock"]) if "stock" in g else None
        out.append({"operation": key[0], "log_length": key[1], "logstore": key[2],
                    "request": key[3], "delta_lifecycle": ext, "stock": stock,
                    "difference": (ext - stock) if ext is not None and stock is not None
                    else None})
    return out


def write_csv(path: Path, rows: List[Dict[str, Any]]) -> None:
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--worker", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--lengths", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--setups", nargs="+", default=list(SETUPS), choices=list(SETUPS))
    parser.add_argument("--engines", nargs="+", default=list(ENGINES), choices=list(ENGINES))
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--part", default="",
                        help="write objectstore-requests-<part>.csv (for runs side by side)")
    parser.add_argument("--merge", nargs="+", metavar="PART",
                        help="only merge these parts into objectstore-requests.csv + summary")
    parser.add_argument("--history-max", type=int, default=1000,
                        help="DESCRIBE [PROTOCOL] HISTORY only on logs up to this length")
    parser.add_argument("--append", action="store_true",
                        help="keep the rows of objectstore-requests.csv not measured again")
    parser.add_argument("--levels", action="store_true",
                        help="only a cold count(*) on LevelsBenchmark's tables (bench/work/levels)")
    args = parser.parse_args()
    if args.levels:
        missing = [n for n in LEVEL_TABLES if not (LEVELS_WORK / f"{n}.complete").is_file()]
        if missing:
            raise SystemExit(f"run LevelsBenchmark's cold part first: {missing} not built")
        args.lengths, args.part, args.setups = [], args.part or "levels", ["default"]
    if args.merge:
        # From the raw counters each part kept (bench/work/objectstore/raw<part>.jsonl).
        merged: List[Dict[str, Any]] = []
        for part in args.merge:
            with open(WORK / f"raw{part}.jsonl") as f:
                for line in f:
                    r = json.loads(line)
                    merged += rows_of(r, r["engine"], r["logstore"], r["run"])
        write_csv(RESULTS / "objectstore-requests.csv", merged)
        write_csv(RESULTS / "objectstore-requests-summary.csv", summarize(merged))
        return
    if args.worker:
        kind, payload = args.worker
        if kind == "build":
            build_worker(json.loads(payload))
        else:
            measure_worker(kind, json.loads(payload))
        return

    sys.path.insert(0, str(REPO / "tests"))
    from objectstore.server import running_object_store

    from delta_lifecycle import hadoop_aws_package

    started = time.monotonic()
    build_tables(args.lengths)
    print(f"tables ready in {time.monotonic() - started:.0f} s", flush=True)
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / (f"objectstore-requests-{args.part}.csv" if args.part
                     else "objectstore-requests.csv")
    rows: List[Dict[str, Any]] = []
    if args.append and (RESULTS / "objectstore-requests.csv").is_file():
        with open(RESULTS / "objectstore-requests.csv", newline="") as f:
            rows = [r for r in csv.DictReader(f)
                    if not (int(r["log_length"]) in args.lengths and r["logstore"] in args.setups
                            and r["engine"] in args.engines and int(r["run"]) <= args.runs)]
    with running_object_store([BUCKET, DEST_BUCKET]) as store:
        print(f"object store: {store.kind} at {store.endpoint}", flush=True)
        # Each table is uploaded once; before every JVM but the first, what the previous
        # JVM added is deleted again, so every JVM starts from the same log.
        for n in args.lengths:
            t0 = time.monotonic()
            count = upload(store, table_dir(n), BUCKET, f"log-{n}")
            print(f"  uploaded {count} files of log-{n} in {time.monotonic() - t0:.0f} s",
                  flush=True)
        # Read-only: uploaded once, never reset.
        levels = []
        for name, k in LEVEL_TABLES.items() if args.levels else []:
            count = upload(store, LEVELS_WORK / name, BUCKET, f"levels/{name}")
            print(f"  uploaded {count} files of {name}", flush=True)
            levels.append((name, k, f"s3a://{BUCKET}/levels/{name}"))
        values: Dict[Tuple[str, int], set] = {}
        first = True
        for run in range(1, args.runs + 1):
            for setup in args.setups:
                for engine in args.engines:
                    prefix = f"run{run}-{setup}-{engine}{args.part}"
                    tables = []
                    for n in args.lengths:
                        if not first:
                            removed = reset(store, table_dir(n), BUCKET, f"log-{n}")
                            print(f"  reset log-{n}: {removed} objects removed", flush=True)
                        tables.append((n, f"s3a://{BUCKET}/log-{n}"))
                    warehouse = WORK / "warehouse" / prefix
                    shutil.rmtree(warehouse, ignore_errors=True)
                    spec = {
                        "conf": {**store.spark_conf(), **SETUPS[setup]},
                        "hadoop_aws": hadoop_aws_package(),
                        "warehouse": str(warehouse),
                        "tables": tables,
                        "redirect": None if args.levels else [
                            f"s3a://{BUCKET}/{prefix}/small", f"s3a://{DEST_BUCKET}/{prefix}/small"],
                        "print_counters": first,
                        "history_max": args.history_max,
                        "levels": levels,
                    }
                    first = False
                    results = run_jvm(engine, setup, spec)
                    for r in results:
                        if r["op"].startswith("count cold,"):
                            values.setdefault((r["op"], r["length"]), set()).add(r["value"])
                    with open(WORK / f"raw{args.part}.jsonl", "a") as raw:
                        for result in results:
                            rows += rows_of(result, engine, setup, run)
                            raw.write(json.dumps({"engine": engine, "logstore": setup,
                                                  "run": run, **result}) + "\n")
                    # Partial results are better than none.
                    write_csv(out, rows)
    # Both engines must count the same rows on each levels table (and count them at all).
    disagree = {k: v for k, v in values.items() if len(v) != 1 or None in v}
    if disagree:
        raise SystemExit(f"the engines disagree on the levels tables' counts: {disagree}")
    if args.levels:
        write_csv(RESULTS / "objectstore-requests-levels-summary.csv", summarize(rows))
    if not args.part:
        write_csv(RESULTS / "objectstore-requests-summary.csv", summarize(rows))
    print(f"done in {time.monotonic() - started:.0f} s", flush=True)


if __name__ == "__main__":
    main()
