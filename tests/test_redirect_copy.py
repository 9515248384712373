"""SET REDIRECT's copy: the file list comes from the log (deletion vectors, change data,
absolute paths; no garbage), the copy runs as Spark jobs in a cancellable job group whose
progress reaches Python, a re-run resumes it, and copied log files keep their modification
times."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import Any, Dict, Iterator, List, Set

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable
from pyspark.sql import SparkSession

from delta_lifecycle import LifecycleTable, OperationProgress
from delta_lifecycle.progress import reporting_progress, running_jobs

from environment import FULL_MATRIX
from script_runs import run_until_halt, write_crash_script
from stock_session import stock_read_ids
from table_helpers import age_log, ids, redirected_ids


def _files(root: Path) -> Set[str]:
    """Every file under ``root`` except the log and Hadoop's ``.crc`` sidecars."""
    out = set()
    for dirpath, _, names in os.walk(root):
        rel = os.path.relpath(dirpath, root)
        if rel.split(os.sep)[0] == "_delta_log":
            continue
        for n in names:
            if not (n.startswith(".") and n.endswith(".crc")):
                out.add(os.path.normpath(os.path.join(rel, n)))
    return out


def _latest(path: Path) -> int:
    return max(int(n[:20]) for n in os.listdir(path / "_delta_log") if n.endswith(".json")
               and n[:20].isdigit())


def _commit_absolute_add(path: Path, data_file: Path) -> None:
    """A commit, written by hand, whose add names ``data_file`` by an absolute file: URI."""
    version = _latest(path) + 1
    add = {
        "path": data_file.resolve().as_uri(),
        "partitionValues": {},
        "size": data_file.stat().st_size,
        "modificationTime": int(time.time() * 1000),
        "dataChange": True,
    }
    info = {"timestamp": int(time.time() * 1000), "operation": "WRITE",
            "operationParameters": {}}
    (path / "_delta_log" / f"{version:020d}.json").write_text(
        json.dumps({"commitInfo": info}) + "\n" + json.dumps({"add": add}) + "\n"
    )


@pytest.fixture(scope="module")
def copied(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Dict[str, Any]:
    """A table with deletion vectors, change data, a checkpoint, an add outside the root and
    garbage, redirected once."""
    base = tmp_path_factory.mktemp("copy")
    src, dest, outside = base / "src", base / "dest", base / "outside"
    spark.sql(
        f"CREATE TABLE delta.`{src}` (id BIGINT) USING delta TBLPROPERTIES ("
        "'delta.enableDeletionVectors' = 'true', 'delta.enableChangeDataFeed' = 'true', "
        "'delta.checkpointInterval' = '4')"
    )
    for i in range(6):
        spark.sql(f"INSERT INTO delta.`{src}` SELECT /*+ COALESCE(1) */ * "
                  f"FROM VALUES ({i}), ({i + 100}), ({i + 200}) AS t(id)")
    spark.sql(f"DELETE FROM delta.`{src}` WHERE id IN (101, 103)")
    spark.sql(f"UPDATE delta.`{src}` SET id = id + 1000 WHERE id = 200")
    outside.mkdir()
    pq.write_table(pa.table({"id": pa.array([7000, 7001], pa.int64())}), outside / "ext.parquet")
    _commit_absolute_add(src, outside / "ext.parquet")
    spark.sql(f"INSERT INTO delta.`{src}` VALUES (9)")
    (src / "garbage-0000.parquet").write_bytes(b"not referenced")
    (src / "junk").mkdir()
    (src / "junk" / "x.bin").write_bytes(b"not referenced either")
    expected = ids(spark, src)
    table_id = spark.sql(f"DESCRIBE DETAIL delta.`{src}`").first()["id"]
    source_files = _files(src)
    version = _latest(src)
    row = spark.sql(f"ALTER TABLE delta.`{src}` SET REDIRECT TO '{dest}'").first()
    return dict(src=src, dest=dest, outside=outside, expected=expected, table_id=table_id,
                source_files=source_files, version=version, row=row.asDict(recursive=True), base=base)


def test_the_table_has_what_the_copy_must_find(copied: Dict[str, Any]) -> None:
    files = copied["source_files"]
    assert any("deletion_vector_" in f for f in files)
    assert any(f.startswith("_change_data") for f in files)
    assert 7000 in copied["expected"] and 101 not in copied["expected"]


def test_every_referenced_file_is_copied_and_garbage_is_not(copied: Dict[str, Any]) -> None:
    garbage = {"garbage-0000.parquet", os.path.join("junk", "x.bin")}
    assert _files(copied["dest"]) == copied["source_files"] - garbage


def test_a_file_outside_the_root_is_referenced_in_place(copied: Dict[str, Any]) -> None:
    assert (copied["outside"] / "ext.parquet").exists()
    assert not any("ext.parquet" in f for f in _files(copied["dest"]))
    assert any("1 files the log references by absolute paths" in s
               for s in copied["row"]["steps"]), copied["row"]["steps"]


def test_stock_delta_spark_reads_the_destination(copied: Dict[str, Any]) -> None:
    got = stock_read_ids({"dest": (str(copied["dest"]), None)})
    assert got["dest"] == copied["expected"]


def test_stock_delta_spark_reads_the_destinations_change_data(
    spark: SparkSession, copied: Dict[str, Any]
) -> None:
    changes = spark.read.format("delta").option("readChangeFeed", "true") \
        .option("startingVersion", 7).load(str(copied["dest"]))
    kinds = {r[0] for r in changes.select("_change_type").collect()}
    assert {"delete", "update_preimage", "update_postimage"} <= kinds


def test_delta_rs_opens_the_destination_and_finds_every_file(copied: Dict[str, Any]) -> None:
    # The deltalake reader refuses deletion vectors, so it cannot scan this table; it can
    # replay the log, and every file it lists must exist.
    dest = DeltaTable(str(copied["dest"]))
    assert dest.version() == copied["version"]
    # The add actions give the paths as the log does: relative ones, and the absolute file:
    # URI (delta-rs's file_uris() joins that one to the root).
    paths = pa.table(dest.get_add_actions(flatten=True)).column("path").to_pylist()
    assert any(p.startswith("file:") and p.endswith("ext.parquet") for p in paths)
    for p in paths:
        where = Path(p.removeprefix("file://").removeprefix("file:")) if p.startswith("file:") \
            else copied["dest"] / p
        assert where.exists(), p


def test_the_copy_runs_as_spark_jobs_in_its_job_group(
    spark: SparkSession, copied: Dict[str, Any]
) -> None:
    sc = spark.sparkContext
    group = f"delta-lifecycle-copy-{copied['table_id']}"
    assert len(sc.statusTracker().getJobIdsForGroup(group)) >= 2
    # The caller's job group is restored afterwards.
    assert sc.getLocalProperty("spark.jobGroup.id") is None


CRASHING_SET = """
    path, dest = args
    spark.sql(f"ALTER TABLE delta.`{path}` SET REDIRECT TO '{dest}'").collect()
    print("NOT HALTED")
"""


#: CI crashes the copy mid-way; ``make reliability`` (the full matrix) after it too, where the
#: re-run only verifies (tests/test_redirect_crashes.py crashes every step of SET REDIRECT).
COPY_CRASH_STEPS = ["setRedirect.midDataCopy"] + (["setRedirect.afterFileCopy"] if FULL_MATRIX else [])


@pytest.mark.parametrize("step", COPY_CRASH_STEPS)
def test_a_crashed_copy_resumes_and_skips_the_files_already_copied(
    spark: SparkSession, tmp_path: Path, step: str
) -> None:
    src, dest = tmp_path / "src", tmp_path / "dest"
    spark.sql(f"CREATE TABLE delta.`{src}` (id BIGINT) USING delta")
    for i in range(4):
        spark.sql(f"INSERT INTO delta.`{src}` SELECT /*+ COALESCE(1) */ * FROM VALUES ({i}) AS t(id)")
    expected = ids(spark, src)
    data_files = {f for f in _files(src) if f.endswith(".parquet")}
    run = run_until_halt(write_crash_script(tmp_path / "crash.py", CRASHING_SET),
                         [str(src), str(dest)], step)
    assert run.halted, run.stderr
    there = {f for f in _files(dest) if f.endswith(".parquet")}
    assert there and there <= data_files
    if step == "setRedirect.afterFileCopy":
        # The data files and the log were copied in one job; the re-run only verifies.
        assert there == data_files and (dest / "_delta_log").is_dir()
    row = spark.sql(f"ALTER TABLE delta.`{src}` SET REDIRECT TO '{dest}'").first()
    assert row["state"] == "READY"
    log_files = [n for n in os.listdir(dest / "_delta_log")
                 if not n.startswith(".") and os.path.isfile(dest / "_delta_log" / n)]
    copied_log = 0 if step == "setRedirect.afterFileCopy" else len(log_files)
    assert row["filesCopied"] == len(data_files - there) + copied_log
    assert ids(spark, dest) == expected


def test_copied_log_files_keep_their_commit_times(spark: SparkSession, tmp_path: Path) -> None:
    src, dest = tmp_path / "src", tmp_path / "dest"
    spark.sql(f"CREATE TABLE delta.`{src}` (id BIGINT) USING delta")
    for i in range(3):
        spark.sql(f"INSERT INTO delta.`{src}` VALUES ({i})")
    age_log(src, through=3, hours=48)
    history = spark.sql(f"DESCRIBE HISTORY delta.`{src}`").select("version", "timestamp")
    before = sorted((r[0], r[1]) for r in history.collect())
    spark.sql(f"ALTER TABLE delta.`{src}` SET REDIRECT TO '{dest}'").collect()
    after = sorted((r[0], r[1]) for r in spark.sql(f"DESCRIBE HISTORY delta.`{dest}`")
                   .select("version", "timestamp").collect())
    assert after == before
    for name in os.listdir(src / "_delta_log"):
        if name.endswith(".json") and int(name[:20]) <= 3:
            # Hadoop keeps milliseconds.
            assert (dest / "_delta_log" / name).stat().st_mtime_ns // 1_000_000 == \
                (src / "_delta_log" / name).stat().st_mtime_ns // 1_000_000
    at_v1 = dict(before)[1]
    rows = spark.read.format("delta").option("timestampAsOf", str(at_v1)).load(str(dest))
    assert sorted(r[0] for r in rows.collect()) == [0]


def test_the_pre_copy_runs_while_the_source_accepts_writes(
    spark: SparkSession, tmp_path: Path
) -> None:
    """Online redirect: the data files are copied while the source is still NORMAL; once it
    refuses writes, only what was committed since is copied."""
    src, dest = tmp_path / "src", tmp_path / "dest"
    spark.sql(f"CREATE TABLE delta.`{src}` (id BIGINT) USING delta")
    for i in range(3):
        spark.sql(f"INSERT INTO delta.`{src}` VALUES ({i})")
    pre_copied = {f for f in _files(src) if f.endswith(".parquet")}
    run = run_until_halt(write_crash_script(tmp_path / "crash.py", CRASHING_SET),
                         [str(src), str(dest)], "setRedirect.afterPreCopy")
    assert run.halted, run.stderr
    # Cut short after the pre-copy: the data files are there, no log yet, and the source is
    # still NORMAL: it takes a write.
    assert {f for f in _files(dest) if f.endswith(".parquet")} == pre_copied
    assert not (dest / "_delta_log").exists()
    assert spark.sql(f"DESCRIBE REDIRECT delta.`{src}`").first()["state"] == "NORMAL"
    spark.sql(f"INSERT INTO delta.`{src}` VALUES (10)")
    committed_since = {f for f in _files(src) if f.endswith(".parquet")} - pre_copied
    assert len(committed_since) == 1

    # The re-run accepts its own pre-copy and pre-copies again only the file written since;
    # the pass after entering ENABLE-REDIRECT-IN-PROGRESS then finds nothing new.
    row = spark.sql(f"ALTER TABLE delta.`{src}` SET REDIRECT TO '{dest}'").first()
    assert row["state"] == "READY"
    log_files = [n for n in os.listdir(dest / "_delta_log")
                 if not n.startswith(".") and os.path.isfile(dest / "_delta_log" / n)]
    assert row["filesCopied"] == len(committed_since) + len(log_files)
    assert any("pre-copied 1 data files" in s for s in row["steps"]), row["steps"]
    assert any("copied 0 data files" in s for s in row["steps"]), row["steps"]
    assert not (dest / "_delta_lifecycle_precopy").exists()
    assert ids(spark, dest) == [0, 1, 2, 10]
    assert stock_read_ids({"dest": (str(dest), None)})["dest"] == [0, 1, 2, 10]


def test_a_destination_holding_another_sources_pre_copy_is_refused(
    spark: SparkSession, tmp_path: Path
) -> None:
    first, second, dest = tmp_path / "first", tmp_path / "second", tmp_path / "dest"
    for t in (first, second):
        spark.sql(f"CREATE TABLE delta.`{t}` (id BIGINT) USING delta")
        spark.sql(f"INSERT INTO delta.`{t}` VALUES (1)")
    run = run_until_halt(write_crash_script(tmp_path / "crash.py", CRASHING_SET),
                         [str(first), str(dest)], "setRedirect.afterPreCopy")
    assert run.halted, run.stderr
    with pytest.raises(Exception, match="DELTA_LIFECYCLE_REDIRECT_DESTINATION_NOT_EMPTY"):
        spark.sql(f"ALTER TABLE delta.`{second}` SET REDIRECT TO '{dest}'").collect()


def test_the_progress_of_an_operations_jobs_reaches_python(spark: SparkSession) -> None:
    """A job started under an operation's step is listed with its description and task counts,
    and reporting_progress hands each change to the callback; other jobs are not listed."""
    updates: List[OperationProgress] = []

    def slow_step() -> None:
        sc = spark.sparkContext
        sc.setLocalProperty("deltaLifecycle.operation", "TEST OPERATION")
        sc.setJobDescription("TEST OPERATION: step 1 of 1: wait")
        # Tasks of different lengths end seconds apart, so a poll sees the count between
        # them even when a busy driver delivers task events late and in bursts.
        spark.range(0, 4, numPartitions=4).foreach(lambda row: time.sleep(1.5 * (row.id + 1)))

    def other_job() -> None:
        spark.range(0, 2, numPartitions=2).foreach(lambda _: time.sleep(1.5))

    with reporting_progress(spark, updates.append, interval=0.1):
        threads = [threading.Thread(target=slow_step), threading.Thread(target=other_job)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    assert updates, "no progress was reported for a job running for several seconds"
    assert {u.description for u in updates} == {"TEST OPERATION: step 1 of 1: wait"}
    # A job may show before its stage does (0 tasks known); then its 4 tasks.
    assert max(u.tasks_total for u in updates) == 4
    done = [u.tasks_done for u in updates]
    assert done == sorted(done) and done[-1] >= 2
    assert running_jobs(spark) == []


@pytest.fixture()
def slow_copies(spark: SparkSession) -> Iterator[None]:
    """Each file of a table copy waits 300 ms (a test-only setting), so a copy of 20 files
    runs for seconds: long enough to watch it and cancel it."""
    spark.conf.set("spark.deltaLifecycle.test.copyDelayMillis", "300")
    try:
        yield
    finally:
        spark.conf.unset("spark.deltaLifecycle.test.copyDelayMillis")


def test_set_redirect_reports_its_copy_jobs_to_python(
    spark: SparkSession, tmp_path: Path, slow_copies: None
) -> None:
    src, dest = tmp_path / "progress-src", tmp_path / "progress-dest"
    spark.range(0, 2000, numPartitions=20).write.format("delta").save(str(src))
    updates: List[OperationProgress] = []
    status = LifecycleTable.for_path(spark, str(src)).set_redirect(
        str(dest), on_progress=updates.append
    )
    assert status.state == "READY"
    copies = [u for u in updates if "copy 20 data files" in u.description]
    assert copies, updates
    # Only this statement's jobs are reported, under its name; task counts only grow.
    assert all(
        u.description.startswith("SET REDIRECT on ") and str(src) in u.description
        for u in updates
    ), updates
    assert all(0 <= u.tasks_done <= u.tasks_total for u in copies)


def test_a_copy_cancelled_through_its_job_group_fails_the_statement_and_a_rerun_resumes(
    spark: SparkSession, tmp_path: Path, slow_copies: None
) -> None:
    src, dest = tmp_path / "cancel-src", tmp_path / "cancel-dest"
    spark.range(0, 2000, numPartitions=20).write.format("delta").save(str(src))
    table_id = spark.sql(f"DESCRIBE DETAIL delta.`{src}`").collect()[0]["id"]
    table = LifecycleTable.for_path(spark, str(src))
    outcome: Dict[str, Any] = {}

    def redirect() -> None:
        try:
            outcome["status"] = table.set_redirect(str(dest))
        except Exception as e:  # what the cancelled statement raises is checked below
            outcome["error"] = e

    thread = threading.Thread(target=redirect)
    thread.start()
    deadline = time.monotonic() + 120
    while not any("copy 20 data files" in j.description for j in running_jobs(spark) or []):
        assert time.monotonic() < deadline and thread.is_alive(), "the copy job never showed"
        time.sleep(0.05)
    spark.sparkContext.cancelJobGroup(f"delta-lifecycle-copy-{table_id}")
    thread.join(120)

    assert "status" not in outcome, outcome
    assert "cancel" in str(outcome["error"]).lower(), outcome["error"]
    # Cancelled during the pre-copy: the source still takes writes, and nothing was lost.
    assert table.redirect_status() is None
    spark.range(2000, 2010).write.format("delta").mode("append").save(str(src))
    spark.conf.unset("spark.deltaLifecycle.test.copyDelayMillis")
    assert table.set_redirect(str(dest)).state == "READY"
    assert redirected_ids(spark, src) == list(range(2010))
    assert stock_read_ids({"dest": (str(dest), None)})["dest"] == list(range(2010))
