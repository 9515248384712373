"""Streaming queries by name, in Spark's Hive metastore, that keep running while their tables are
redirected and brought back (docs/redirection.md, "Streaming").

A query reads one table by name and writes another by name; each is redirected with SET REDIRECT
and brought back with UNSET REDIRECT while a feeder appends numbered rows and the query runs on a
ProcessingTime trigger. The sink must end with every fed row exactly once, and stock readers must
read it. The same by path: tests/test_redirect_streaming_paths.py; on a cluster:
tests/cluster/test_cluster.py.
"""

from __future__ import annotations

from pathlib import Path

from delta.tables import DeltaTable
from pyspark.sql import DataFrame, SparkSession

from conftest import delta_rs_ids
from streaming_redirects import StreamUnderRedirects, TableRef, difference, run_through_moves


def test_a_query_by_name_runs_through_redirects_of_its_source_and_sink(
    hive_spark: SparkSession, tmp_path: Path
) -> None:
    spark = hive_spark
    spark.sql("CREATE DATABASE IF NOT EXISTS sales")
    spark.sql("CREATE TABLE sales.feed (id BIGINT) USING delta")
    spark.sql("CREATE TABLE sales.orders (id BIGINT) USING delta")
    stream = StreamUnderRedirects(
        spark, TableRef(name="sales.feed"), TableRef(name="sales.orders"), str(tmp_path / "ck")
    )
    ids = run_through_moves(stream, [
        f"ALTER TABLE sales.orders SET REDIRECT TO '{tmp_path / 'orders-moved'}'",
        f"ALTER TABLE sales.feed SET REDIRECT TO '{tmp_path / 'feed-moved'}'",
        "ALTER TABLE sales.orders UNSET REDIRECT",
        "ALTER TABLE sales.feed UNSET REDIRECT",
    ])

    assert stream.fed > 0 and ids == list(range(stream.fed)), difference(ids, stream.fed)
    # Both tables are back at their own locations, NORMAL, and read the same without this project.
    location = spark.sql("DESCRIBE DETAIL sales.orders").collect()[0]["location"]
    assert delta_rs_ids(Path(location.removeprefix("file:"))) == ids


def test_foreach_batch_merges_follow_a_redirect_of_their_target(
    hive_spark: SparkSession, tmp_path: Path
) -> None:
    spark = hive_spark
    spark.sql("CREATE DATABASE IF NOT EXISTS crm")
    spark.sql("CREATE TABLE crm.events (id BIGINT) USING delta")
    spark.sql("CREATE TABLE crm.customers (id BIGINT) USING delta")

    def merge(batch: DataFrame, batch_id: int) -> None:
        # Resolved by name for every batch: each batch goes where the redirect sends it now.
        target = DeltaTable.forName(batch.sparkSession, "crm.customers")
        (target.alias("t").merge(batch.alias("s"), "t.id = s.id")
         .whenNotMatchedInsertAll().execute())

    stream = StreamUnderRedirects(
        spark, TableRef(name="crm.events"), TableRef(name="crm.customers"), str(tmp_path / "ck"),
        foreach_batch=merge,
    )
    ids = run_through_moves(stream, [
        f"ALTER TABLE crm.customers SET REDIRECT TO '{tmp_path / 'customers-moved'}'",
        "ALTER TABLE crm.customers UNSET REDIRECT",
    ])
    assert stream.fed > 0 and ids == list(range(stream.fed)), difference(ids, stream.fed)
