"""Tables by name in Spark's own Hive metastore (enableHiveSupport(), Derby in a folder of the
module's own), where users keep them: a redirect and a feature drop by name, this project's
statements following the redirect, and what Spark's Hive session changes for path access
(docs/redirection.md, docs/spark-lines.md).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from py4j.protocol import Py4JJavaError
from pyspark.errors import PySparkException
from delta.tables import DeltaTable
from pyspark.sql import SparkSession

from spark_errors import condition_of
from table_helpers import delta_rs_ids
from delta_lifecycle import LifecycleTable
from delta_lifecycle.errors import InvalidRedirectError, translate_errors


@pytest.fixture(scope="module")
def spark(hive_spark: SparkSession) -> SparkSession:
    assert hive_spark.conf.get("spark.sql.catalogImplementation") == "hive"
    hive_spark.sql("CREATE DATABASE IF NOT EXISTS shop")
    return hive_spark


def names(spark: SparkSession, table: str) -> list[int]:
    return sorted(int(r[0]) for r in spark.sql(f"SELECT id FROM {table}").collect())


def test_a_redirect_by_name_routes_every_statement_and_comes_back(
    spark: SparkSession, tmp_path: Path
) -> None:
    spark.sql("CREATE TABLE shop.orders (id BIGINT) USING delta")
    spark.sql("INSERT INTO shop.orders VALUES (1), (2), (3)")
    dest = tmp_path / "orders-moved"
    spark.sql(f"ALTER TABLE shop.orders SET REDIRECT TO '{dest}'")

    spark.sql("INSERT INTO shop.orders VALUES (4)")
    spark.sql("UPDATE shop.orders SET id = 30 WHERE id = 3")
    spark.sql("MERGE INTO shop.orders t USING (SELECT 5L AS id) s ON t.id = s.id "
              "WHEN NOT MATCHED THEN INSERT *")
    assert names(spark, "shop.orders") == [1, 2, 4, 5, 30]
    assert delta_rs_ids(dest) == [1, 2, 4, 5, 30]  # the rows are at the destination

    # This project's statements act on the destination too, and say so.
    table = LifecycleTable.for_name(spark, "shop.orders")
    assert all(v.table.startswith("delta.`") and v.table.endswith(f"{dest.name}`")
               for v in table.protocol_history())
    assert table.compact_log().table.endswith(f"{dest.name}`")

    spark.sql("ALTER TABLE shop.orders UNSET REDIRECT")
    assert names(spark, "shop.orders") == [1, 2, 4, 5, 30]
    location = spark.sql("DESCRIBE DETAIL shop.orders").collect()[0]["location"]
    assert delta_rs_ids(Path(location.removeprefix("file:"))) == [1, 2, 4, 5, 30]


def test_drop_feature_by_name(spark: SparkSession) -> None:
    spark.sql("CREATE TABLE shop.events (id BIGINT) USING delta "
              "TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')")
    spark.sql("INSERT INTO shop.events SELECT /*+ COALESCE(1) */ id FROM range(10)")
    spark.sql("DELETE FROM shop.events WHERE id = 3")
    result = LifecycleTable.for_name(spark, "shop.events").drop_feature("deletionVectors")
    assert result.status == "dropped" and result.table == "shop.events"
    features = spark.sql("DESCRIBE DETAIL shop.events").collect()[0]["tableFeatures"]
    assert "deletionVectors" not in features
    location = spark.sql("DESCRIBE DETAIL shop.events").collect()[0]["location"]
    assert delta_rs_ids(Path(location.removeprefix("file:"))) == [i for i in range(10) if i != 3]


def test_replacing_a_redirected_table_by_name_replaces_it_at_the_destination(
    spark: SparkSession, tmp_path: Path
) -> None:
    """delta-spark stages a replacement at the catalog entry's location without asking the
    catalog: `saveAsTable` in overwrite mode (with replaceWhere or not) and CREATE OR REPLACE
    TABLE AS SELECT of a redirected source go to the destination, and the entry keeps the
    source's location, so UNSET REDIRECT brings the replaced table back."""
    spark.sql("CREATE TABLE shop.stock (id BIGINT, part STRING) USING delta PARTITIONED BY (part)")
    spark.sql("INSERT INTO shop.stock VALUES (1, 'x'), (2, 'y')")
    source = spark.sql("DESCRIBE DETAIL shop.stock").collect()[0]["location"]
    dest = tmp_path / "stock-moved"
    spark.sql(f"ALTER TABLE shop.stock SET REDIRECT TO '{dest}'")

    rows = spark.createDataFrame([(20, "y")], "id BIGINT, part STRING")
    (rows.write.format("delta").mode("overwrite").option("replaceWhere", "part = 'y'")
     .saveAsTable("shop.stock"))
    assert names(spark, "shop.stock") == [1, 20]
    assert delta_rs_ids(dest) == [1, 20]
    spark.sql("CREATE OR REPLACE TABLE shop.stock USING delta PARTITIONED BY (part) "
              "AS SELECT id * 10 AS id, part FROM VALUES (3, 'x'), (4, 'y') AS v(id, part)")
    assert names(spark, "shop.stock") == [30, 40]
    assert delta_rs_ids(dest) == [30, 40]
    # The metastore's own entry, not the routed table DESCRIBE shows.
    entry = spark._jsparkSession.sharedState().externalCatalog().getTable("shop", "stock")
    assert entry.location().toString() == source
    assert LifecycleTable.for_name(spark, "shop.stock").redirect_status().state == "READY"

    spark.sql("ALTER TABLE shop.stock UNSET REDIRECT")
    assert names(spark, "shop.stock") == [30, 40]
    assert delta_rs_ids(Path(source.removeprefix("file:"))) == [30, 40]


def test_delta_table_api_by_name_and_path_follows_a_redirect(
    spark: SparkSession, tmp_path: Path
) -> None:
    """delta-spark's DeltaTable.forName (one, two and three parts, and delta.`path`) and
    DeltaTable.forPath build their table without asking a catalog; configure_spark makes them
    follow the redirect, so the operations that open the log act on the destination."""
    spark.sql("CREATE TABLE shop.ledger (id BIGINT) USING delta")
    spark.sql("INSERT INTO shop.ledger VALUES (1), (2)")
    source = spark.sql("DESCRIBE DETAIL shop.ledger").collect()[0]["location"]
    dest = tmp_path / "ledger-moved"
    spark.sql(f"ALTER TABLE shop.ledger SET REDIRECT TO '{dest}'")
    spark.sql("INSERT INTO shop.ledger VALUES (3)")  # version 2 of the destination

    spark.sql("USE shop")
    try:
        tables = {
            "ledger": DeltaTable.forName(spark, "ledger"),
            "shop.ledger": DeltaTable.forName(spark, "shop.ledger"),
            "spark_catalog.shop.ledger": DeltaTable.forName(spark, "spark_catalog.shop.ledger"),
            "delta.`source`": DeltaTable.forName(spark, f"delta.`{source}`"),
            "forPath": DeltaTable.forPath(spark, source),
        }
    finally:
        spark.sql("USE default")
    for how, table in tables.items():
        history = table.history().collect()
        assert [r["version"] for r in history][0] == 2, how
        assert table.detail().collect()[0]["location"] == f"file:{dest}", how
        assert sorted(r[0] for r in table.toDF().collect()) == [1, 2, 3], how
    tables["ledger"].optimize().executeCompaction()
    assert DeltaTable.forPath(spark, str(dest)).history(1).collect()[0]["operation"] == "OPTIMIZE"
    assert delta_rs_ids(dest) == [1, 2, 3]
    # A table that is not redirected is delta-spark's own, at its own location.
    spark.sql("CREATE TABLE shop.journal (id BIGINT) USING delta")
    journal = spark.sql("DESCRIBE DETAIL shop.journal").collect()[0]["location"]
    assert DeltaTable.forName(spark, "shop.journal").detail().collect()[0]["location"] == journal


def test_path_access_in_a_hive_session(spark: SparkSession, tmp_path: Path) -> None:
    """Spark's Hive session up to Spark 4.2.0 drops the rules extensions inject before table
    resolution (SPARK-59081); this project's path routing puts itself back there on the session's
    first query, so every later DataFrame path access is routed: writes, and reads (batch and
    streaming) of a writer-only and of a reader-writer source alike. Redirect property changes by
    hand are still intercepted (through the parser)."""
    for mode in ("WRITER ONLY", "READER WRITER"):
        path = tmp_path / mode.replace(" ", "-").lower()
        spark.range(3).write.format("delta").save(str(path))
        spark.sql(f"ALTER TABLE delta.`{path}` SET REDIRECT {mode} TO '{path}-moved'")
        spark.range(3, 4).write.format("delta").mode("append").save(str(path))
        assert delta_rs_ids(Path(f"{path}-moved")) == [0, 1, 2, 3]
        assert names(spark, f"delta.`{path}`") == [0, 1, 2, 3]
        assert spark.read.format("delta").load(str(path)).count() == 4
        streamed = (spark.readStream.format("delta").load(str(path)).writeStream
                    .format("memory").queryName(f"hive_{mode.replace(' ', '_').lower()}")
                    .trigger(availableNow=True).start())
        streamed.awaitTermination(120)
        assert spark.table(f"hive_{mode.replace(' ', '_').lower()}").count() == 4

    # A new session's analyzer is new too: it gets the routing back with its own first query, so
    # a reader-writer source read by path as that very first query is still delta-spark's.
    fresh = spark.newSession()
    with pytest.raises((PySparkException, Py4JJavaError)) as refused:
        fresh.read.format("delta").load(str(tmp_path / "reader-writer")).count()
    assert condition_of(refused.value) == "DELTA_UNSUPPORTED_FEATURES_FOR_READ"
    assert fresh.read.format("delta").load(str(tmp_path / "reader-writer")).count() == 4

    with pytest.raises(InvalidRedirectError), translate_errors():
        spark.sql(f"ALTER TABLE delta.`{tmp_path / 'writer-only'}` SET TBLPROPERTIES "
                  "('delta.redirectWriterOnly' = 'not json')").collect()
