"""Every kind of statement once on a real standalone cluster, where the executors are other
JVMs than the driver: a plain Delta write in a session set up by configure_spark,
the log statements, DROP FEATURE deletionVectors (a rewrite), SET/UNSET REDIRECT with an
executor JVM killed by SIGKILL in the middle of the copy, and a streaming query that keeps
running while its source and sink are redirected and brought back. The application's REST API shows
that the work ran as tasks on the executors; stock delta-spark and delta-rs check every
table. ``make cluster-test`` also runs test_cluster_full.py, the full matrix.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Dict, List

from pyspark.sql import SparkSession

from cluster.conftest import (
    completed_or_rerun,
    last_job_id,
    live_executors,
    run_in_thread,
    task_executors_since,
    wait_for_executors,
    wait_for_running_job,
)
from cluster.standalone import StandaloneCluster
from environment import behind_switch
from stock_session import stock_read_ids
from table_helpers import deletion_vector_table, delta_rs_ids, ids
from delta_lifecycle import LifecycleTable
from delta_lifecycle.config import bundled_coordinate, delta_maven_coordinate
from streaming_redirects import difference, moves_by_path, run_through_moves, stream_between_paths

pytestmark = behind_switch("DELTA_LIFECYCLE_CLUSTER", "make cluster-test")


def jar_names(spark: SparkSession) -> List[str]:
    jars = spark.sparkContext._jsc.sc().listJars()  # type: ignore[union-attr]
    return [jars.apply(i).rsplit("/", 1)[-1] for i in range(jars.size())]


def assert_ran_on_executors(spark: SparkSession, after_job: int) -> Dict[str, Any]:
    """Every job since ``after_job`` ran its tasks on executors (never in the driver), and
    there was at least one; returns the jobs, for messages."""
    jobs = task_executors_since(spark, after_job)
    ran = set().union(*jobs.values()) if jobs else set()
    assert ran, f"no tasks ran: {jobs}"
    assert "driver" not in ran, jobs
    return jobs


def test_a_plain_delta_write_works_and_every_jar_reaches_the_executors(
    spark: SparkSession, tmp_path: Path
) -> None:
    """The failure this module was written for: configure_spark's spark.jars replaced the jars
    Spark resolved for spark.jars.packages, so the executors had no delta-spark."""
    names = jar_names(spark)
    delta_artifact = delta_maven_coordinate().split(":")[1]
    _, artifact, version = bundled_coordinate().split(":")
    assert any(n.startswith(f"io.delta_{delta_artifact}-") for n in names), names
    assert any(n.startswith("io.delta_delta-storage-") for n in names), names
    assert f"io.github.deltalifecycle_{artifact}-{version}.jar" in names, names

    before = last_job_id(spark)
    path = tmp_path / "plain"
    spark.range(1000).repartition(4).write.format("delta").save(str(path))
    assert spark.read.format("delta").load(str(path)).count() == 1000
    assert_ran_on_executors(spark, before)
    assert len(live_executors(spark)) == 2
    assert stock_read_ids({"plain": (str(path), None)})["plain"] == list(range(1000))


def test_log_statements(spark: SparkSession, tmp_path: Path) -> None:
    path = tmp_path / "log"
    # The post-commit policy compacts every 3 commits, in the background on the driver.
    spark.sql(
        f"CREATE TABLE delta.`{path}` (id BIGINT) USING delta "
        "TBLPROPERTIES ('deltaLifecycle.logCompaction.interval' = '3')"
    )
    for i in range(6):
        spark.sql(f"INSERT INTO delta.`{path}` VALUES ({i})")
    table = LifecycleTable.for_path(spark, str(path))
    assert [v.version for v in table.protocol_history()] == list(range(7))
    deadline = time.monotonic() + 120
    while not list((path / "_delta_log").glob("*.compacted.json")):
        assert time.monotonic() < deadline, "the policy wrote no compaction"
        time.sleep(0.5)
    compaction = table.compact_log()
    assert compaction.status in ("written", "nothing-to-compact"), compaction
    cleanup = table.clean_log(retain_hours=0, dry_run=True)
    assert cleanup.dry_run, cleanup
    assert ids(spark, path) == list(range(6))
    assert delta_rs_ids(path) == list(range(6))
    assert stock_read_ids({"log": (str(path), None)})["log"] == list(range(6))


def test_drop_feature_deletion_vectors_rewrites_on_the_executors(
    spark: SparkSession, tmp_path: Path
) -> None:
    """delta-spark 4.4's own REORG reads the session inside its tasks and fails on a cluster;
    this project's drop rewrites with delta-spark's writer from session-free tasks."""
    path = tmp_path / "dv"
    deletion_vector_table(spark, path)
    expected = sorted(set(range(10)) | {i + 100 for i in range(10)} - {101, 103, 105})
    before = last_job_id(spark)
    result = LifecycleTable.for_path(spark, str(path)).drop_feature("deletionVectors")
    assert result.status == "dropped" and result.files_rewritten == 3, result
    jobs = assert_ran_on_executors(spark, before)
    assert any("DROP FEATURE deletionVectors" in name for name in jobs), jobs

    assert ids(spark, path) == expected
    stock = stock_read_ids({"dv": (str(path), None)})
    assert stock["dv"] == expected
    assert delta_rs_ids(path) == expected


def test_set_redirect_survives_an_executor_killed_mid_copy(
    spark: SparkSession, cluster: StandaloneCluster, tmp_path: Path
) -> None:
    src, dest = tmp_path / "redirect-src", tmp_path / "redirect-dest"
    spark.range(0, 2000, numPartitions=20).write.format("delta").save(str(src))
    spark.sql(f"CREATE TABLE moved USING delta LOCATION '{src}'")
    table = LifecycleTable.for_path(spark, str(src))

    spark.conf.set("spark.deltaLifecycle.test.copyDelayMillis", "400")
    before = last_job_id(spark)
    try:
        thread, outcome = run_in_thread(lambda: table.set_redirect(str(dest)))
        wait_for_running_job(spark, thread, "copy")
        killed = cluster.kill_executor(spark.sparkContext.applicationId)
        thread.join(600)
    finally:
        spark.conf.unset("spark.deltaLifecycle.test.copyDelayMillis")
    assert not thread.is_alive()
    status = completed_or_rerun(outcome, lambda: table.set_redirect(str(dest)))
    assert status.state == "READY", (killed, outcome)
    jobs = assert_ran_on_executors(spark, before)
    assert any("copy" in name for name in jobs), jobs
    wait_for_executors(spark, 2)

    # Reads by name, by path and by DataFrame follow the redirect; so do writes.
    spark.sql("INSERT INTO moved VALUES (2000)")
    expected = list(range(2001))
    assert ids(spark, src) == expected
    assert sorted(int(r[0]) for r in spark.sql("SELECT id FROM moved").collect()) == expected
    assert sorted(
        int(r[0]) for r in spark.sql(f"SELECT id FROM delta.`{src}`").collect()
    ) == expected
    assert stock_read_ids({"dest": (str(dest), None)})["dest"] == expected

    assert table.unset_redirect().state == "NORMAL"
    assert ids(spark, src) == expected
    stock = stock_read_ids({"src": (str(src), None)})
    assert stock["src"] == expected
    assert delta_rs_ids(src) == expected



def test_a_streaming_query_runs_through_redirects_of_its_source_and_sink(
    spark: SparkSession, tmp_path: Path
) -> None:
    """tests/test_redirect_streaming_paths.py on the cluster: the query's batches, the feeder's
    commits and the redirect copies all run on the executors."""
    feed, orders, stream = stream_between_paths(spark, tmp_path)
    before = last_job_id(spark)
    ids_written = run_through_moves(stream, moves_by_path(orders, feed))
    assert stream.fed > 0 and ids_written == list(range(stream.fed)), difference(
        ids_written, stream.fed
    )
    assert delta_rs_ids(orders) == ids_written
    assert_ran_on_executors(spark, before)
