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

import pytest
from delta.tables import DeltaTable
from pyspark.errors import StreamingQueryException
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.streaming import StreamingQuery

from table_helpers import delta_rs_ids
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


def test_a_python_foreach_batch_that_raced_a_redirect_stops_typed_then_writes_once(
    hive_spark: SparkSession, tmp_path: Path
) -> None:
    """The race the test above meets by chance, forced: the batch's own transaction reads the
    target, SET REDIRECT commits, then the transaction commits and delta-spark's conflict check
    refuses the redirect feature. The failure reaches the JVM through Py4J's proxy, as a Python
    traceback, and still stops the query with the typed, restartable error."""
    spark = hive_spark
    spark.sql("CREATE DATABASE IF NOT EXISTS billing")
    spark.sql("CREATE TABLE billing.payments (id BIGINT) USING delta")
    spark.sql("CREATE TABLE billing.ledger (id BIGINT) USING delta")
    spark.sql("INSERT INTO billing.payments SELECT id FROM range(0, 5)")
    ledger = spark.sql("DESCRIBE DETAIL billing.ledger").collect()[0]["location"]
    raced: list = []

    def write(batch: DataFrame, batch_id: int) -> None:
        if batch_id == 1 and not raced:
            raced.append(batch_id)
            jvm = spark.sparkContext._jvm
            delta = jvm.org.apache.spark.sql.delta
            txn = delta.DeltaLog.forTable(spark._jsparkSession, ledger).startTransaction()
            spark.sql(f"ALTER TABLE billing.ledger SET REDIRECT TO '{tmp_path / 'ledger-moved'}'")
            manual_update = getattr(getattr(delta, "DeltaOperations$ManualUpdate$"), "MODULE$")
            nothing = getattr(getattr(jvm.scala.collection.immutable, "Nil$"), "MODULE$")
            txn.commit(nothing, manual_update)
        (batch.write.format("delta").mode("append").option("txnAppId", "ledger")
         .option("txnVersion", batch_id).saveAsTable("billing.ledger"))

    def start() -> StreamingQuery:
        return (spark.readStream.table("billing.payments").writeStream
                .option("checkpointLocation", str(tmp_path / "ck")).foreachBatch(write).start())

    query = start()
    query.processAllAvailable()
    spark.sql("INSERT INTO billing.payments SELECT id FROM range(5, 10)")
    with pytest.raises(StreamingQueryException) as stopped:
        query.awaitTermination(120)
    assert "DELTA_LIFECYCLE_STREAM_BATCH_RACED_REDIRECT" in str(stopped.value)
    assert "redirectWriterOnly" in str(stopped.value) or "redirectReaderWriter" in str(stopped.value)

    restarted = start()
    restarted.processAllAvailable()
    restarted.stop()
    ids = sorted(int(r[0]) for r in spark.sql("SELECT id FROM billing.ledger").collect())
    assert ids == list(range(10))
