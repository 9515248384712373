"""The full cluster matrix (``make cluster-test``, ``DELTA_LIFECYCLE_CLUSTER=1``): every
statement through the smoke script on a standalone cluster of the primary line and of Spark
3.5 (from that line's own venv and pyspark), faults in the middle of a DROP FEATURE rewrite,
of a COMPACT LOG and of a SET REDIRECT copy (a whole worker killed), typeWidening's rewrite,
and every droppable feature dropped with the cluster session. test_cluster_apps.py runs a Spark
Connect server and spark-submit on a cluster of their own.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Dict

import pytest
from pyspark.sql import SparkSession

from cluster.conftest import (
    CLUSTER_SESSION_CONF,
    completed_or_rerun,
    last_job_id,
    run_in_thread,
    task_executors_since,
    wait_for_executors,
    wait_for_running_job,
)
from cluster.standalone import StandaloneCluster
from stock_session import stock_read_ids
from table_helpers import delta_rs_ids, ids
from delta_lifecycle import LifecycleTable
from test_spark_lines import assert_smoke_result, line_python, run_smoke

pytestmark = pytest.mark.skipif(
    os.environ.get("DELTA_LIFECYCLE_CLUSTER") != "1",
    reason="the full cluster suite runs with DELTA_LIFECYCLE_CLUSTER=1 (make cluster-test)",
)


def smoke_conf(cluster: StandaloneCluster) -> Dict[str, str]:
    return {**CLUSTER_SESSION_CONF, "spark.master": cluster.url, "spark.ui.enabled": "false"}


def test_every_statement_on_the_cluster(cluster: StandaloneCluster, tmp_path: Path) -> None:
    seen = run_smoke(Path(sys.executable), tmp_path, smoke_conf(cluster))
    assert_smoke_result(seen["line"], seen, tmp_path)


def test_every_statement_on_a_spark_3_5_cluster(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    """Spark 3.5's own master and workers (its pyspark's spark-class), its venv's driver."""
    python = line_python("3.5")
    home = subprocess.run(
        [str(python), "-c", "import os, pyspark; print(os.path.dirname(pyspark.__file__))"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()
    cluster = StandaloneCluster.start(tmp_path_factory.mktemp("standalone-3.5"),
                                      spark_home=Path(home))
    try:
        seen = run_smoke(python, tmp_path, smoke_conf(cluster))
    finally:
        cluster.stop()
    assert_smoke_result("3.5", seen, tmp_path)


def dv_table(spark: SparkSession, path: Path, files: int) -> list:
    """``files`` one-file commits of 200 rows; every file then carries a deletion vector."""
    spark.sql(
        f"CREATE TABLE delta.`{path}` (id BIGINT, pad STRING) USING delta "
        "TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')"
    )
    for i in range(files):
        spark.range(i * 200, (i + 1) * 200, numPartitions=1).selectExpr(
            "id", "repeat('x', 200) AS pad"
        ).write.format("delta").mode("append").save(str(path))
    spark.sql(f"DELETE FROM delta.`{path}` WHERE id % 200 = 7")
    return [i for i in range(files * 200) if i % 200 != 7]


def test_drop_feature_rewrite_survives_a_killed_executor(
    spark: SparkSession, cluster: StandaloneCluster, tmp_path: Path
) -> None:
    path = tmp_path / "dv-kill"
    expected = dv_table(spark, path, 12)
    table = LifecycleTable.for_path(spark, str(path))
    thread, outcome = run_in_thread(lambda: table.drop_feature("deletionVectors"))
    wait_for_running_job(spark, thread, "DROP FEATURE deletionVectors")
    cluster.kill_executor(spark.sparkContext.applicationId)
    thread.join(900)
    result = completed_or_rerun(outcome, lambda: table.drop_feature("deletionVectors"))
    assert result.status == "dropped", result
    wait_for_executors(spark, 2)
    assert ids(spark, path) == expected
    assert stock_read_ids({"dv": (str(path), None)})["dv"] == expected
    assert delta_rs_ids(path) == expected


def test_compact_log_with_a_killed_executor(
    spark: SparkSession, cluster: StandaloneCluster, tmp_path: Path
) -> None:
    """COMPACT LOG reads and writes log files on the driver: an executor lost meanwhile
    changes nothing."""
    path = tmp_path / "compact-kill"
    spark.sql(f"CREATE TABLE delta.`{path}` (id BIGINT) USING delta "
              "TBLPROPERTIES ('delta.checkpointInterval' = '1000')")
    for i in range(30):
        spark.sql(f"INSERT INTO delta.`{path}` VALUES ({i})")
    table = LifecycleTable.for_path(spark, str(path))
    thread, outcome = run_in_thread(lambda: table.compact_log(1, 30))
    cluster.kill_executor(spark.sparkContext.applicationId)
    thread.join(600)
    result = completed_or_rerun(outcome, lambda: table.compact_log(1, 30))
    assert result.status in ("written", "exists"), result
    wait_for_executors(spark, 2)
    assert ids(spark, path) == list(range(30))
    assert stock_read_ids({"t": (str(path), None)})["t"] == list(range(30))


def test_set_redirect_survives_a_killed_worker(
    spark: SparkSession, cluster: StandaloneCluster, tmp_path: Path
) -> None:
    src, dest = tmp_path / "worker-src", tmp_path / "worker-dest"
    spark.range(0, 3000, numPartitions=30).write.format("delta").save(str(src))
    table = LifecycleTable.for_path(spark, str(src))
    spark.conf.set("spark.deltaLifecycle.test.copyDelayMillis", "400")
    try:
        thread, outcome = run_in_thread(lambda: table.set_redirect(str(dest)))
        wait_for_running_job(spark, thread, "copy")
        cluster.kill_worker(0)
        thread.join(900)
    finally:
        spark.conf.unset("spark.deltaLifecycle.test.copyDelayMillis")
    status = completed_or_rerun(outcome, lambda: table.set_redirect(str(dest)))
    assert status.state == "READY", status
    cluster.add_worker()
    wait_for_executors(spark, 2)
    assert ids(spark, src) == list(range(3000))
    stock = stock_read_ids({"dest": (str(dest), None), "src_version_0": (str(src), 0)})
    assert stock["dest"] == list(range(3000))
    assert table.unset_redirect().state == "NORMAL"
    assert stock_read_ids({"src": (str(src), None)})["src"] == list(range(3000))


def test_drop_feature_type_widening_rewrites_on_the_executors(
    spark: SparkSession, tmp_path: Path
) -> None:
    path = tmp_path / "widened"
    spark.sql(f"CREATE TABLE delta.`{path}` (id INT) USING delta "
              "TBLPROPERTIES ('delta.enableTypeWidening' = 'true')")
    spark.sql(f"INSERT INTO delta.`{path}` VALUES (1), (2)")
    spark.sql(f"ALTER TABLE delta.`{path}` CHANGE COLUMN id TYPE BIGINT")
    spark.sql(f"INSERT INTO delta.`{path}` VALUES (3)")
    before = last_job_id(spark)
    result = LifecycleTable.for_path(spark, str(path)).drop_feature("typeWidening")
    assert result.status == "dropped" and result.files_rewritten >= 1, result
    ran = set().union(*task_executors_since(spark, before).values())
    assert ran and "driver" not in ran
    assert ids(spark, path) == [1, 2, 3]
    assert stock_read_ids({"t": (str(path), None)})["t"] == [1, 2, 3]
    assert delta_rs_ids(path) == [1, 2, 3]


def test_every_droppable_feature_drops_on_the_cluster(
    spark: SparkSession, tmp_path: Path
) -> None:
    """Each feature the line's delta-spark declares removable, on a table of its own: DRY RUN
    (and TRUNCATE HISTORY DRY RUN), then the drop (checkpointProtection with TRUNCATE
    HISTORY), with the cluster session; stock delta-spark and delta-rs read the results."""
    from test_drop_every_feature import assert_other_clients_read, drop_one, droppable

    outcomes = [drop_one(spark, tmp_path, f, full=True) for f in droppable(spark)]
    dropped = [o for o in outcomes if o.dropped is not None]
    for o in outcomes:
        # As in local mode: only a typed refusal before any write (stock refuses those too).
        assert o.refused is None or o.refused.startswith("DELTA_LIFECYCLE_"), o
    assert {o.feature for o in dropped} >= {"deletionVectors", "rowTracking", "v2Checkpoint"}
    for o in dropped:
        assert o.dropped is not None and o.dropped["status"] == "dropped", o
        assert ids(spark, o.path) == o.rows, o.feature
    assert_other_clients_read(dropped)
