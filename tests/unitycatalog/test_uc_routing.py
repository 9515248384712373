"""A redirect of a table registered in Unity Catalog is followed by name, in every catalog of
the session (docs/redirection.md, "Unity Catalog and other catalogs").

The module's session is set up by ``configure_spark`` with two catalogs of a real Unity Catalog
server on the builder, ``lake_*`` and ``other_*`` (a second Delta catalog under another name),
both through UC's connector: ``configure_spark`` wraps each in this project's
``RoutingCatalog``. A third catalog, registered after the session started, is not wrapped, and
SET REDIRECT refuses its tables before writing anything.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator, List

import pytest
from delta.tables import DeltaTable
from pyspark.sql import SparkSession

from delta_lifecycle.config import ROUTING_CATALOG
from delta_lifecycle.errors import CatalogNotRoutedError, CoordinatedTableError, translate_errors
from streaming_redirects import StreamUnderRedirects, TableRef, difference, run_through_moves
from unitycatalog.conftest import UcCatalog, new_catalog, uc_session
from unitycatalog.server import UnityCatalogServer


@pytest.fixture(scope="module")
def other_catalog(
    unity_catalog: UnityCatalogServer, tmp_path_factory: pytest.TempPathFactory
) -> UcCatalog:
    return new_catalog(unity_catalog, tmp_path_factory.mktemp("uc-other"), prefix="other")


@pytest.fixture(scope="module")
def spark(
    tmp_path_factory: pytest.TempPathFactory, uc_catalog: UcCatalog, other_catalog: UcCatalog
) -> Iterator[SparkSession]:
    yield from uc_session(tmp_path_factory, uc_catalog, start_conf=other_catalog.spark_conf())


def ids(spark: SparkSession, table: str) -> List[int]:
    return sorted(int(r[0]) for r in spark.sql(f"SELECT id FROM {table}").collect())


def test_configure_spark_wraps_each_unity_catalog(
    spark: SparkSession, uc_catalog: UcCatalog, other_catalog: UcCatalog
) -> None:
    for catalog in (uc_catalog, other_catalog):
        assert spark.conf.get(f"spark.sql.catalog.{catalog.name}") == ROUTING_CATALOG
        assert spark.conf.get(
            f"spark.sql.catalog.{catalog.name}.deltaLifecycle.delegate"
        ) == "io.unitycatalog.spark.UCSingleCatalog"


def test_a_unity_catalog_table_redirected_by_name_serves_every_access(
    spark: SparkSession, uc_catalog: UcCatalog, tmp_path: Path
) -> None:
    name, dest = uc_catalog.table("ext"), tmp_path / "moved"
    spark.sql(f"CREATE TABLE {name} (id BIGINT) USING delta LOCATION '{tmp_path / 'ext'}'")
    spark.sql(f"INSERT INTO {name} VALUES (1), (2)")
    status = spark.sql(f"ALTER TABLE {name} SET REDIRECT TO '{dest}'").collect()[0]
    assert status["state"] == "READY" and status["table"] == name

    assert ids(spark, name) == [1, 2]
    spark.sql(f"INSERT INTO {name} VALUES (3)")
    assert ids(spark, f"delta.`{dest}`") == [1, 2, 3], "the INSERT by name went to the destination"
    spark.sql(f"MERGE INTO {name} t USING (SELECT 4L AS id) s ON t.id = s.id "
              "WHEN NOT MATCHED THEN INSERT *")
    spark.sql(f"ALTER TABLE {name} SET TBLPROPERTIES ('team' = 'sales')")
    assert spark.sql(f"SHOW TBLPROPERTIES delta.`{dest}` ('team')").collect()[0]["value"] == "sales"
    assert ids(spark, f"{name} VERSION AS OF 1") == [1, 2]
    assert spark.sql(f"DESCRIBE DETAIL {name}").collect()[0]["location"] == f"file:{dest}"

    # This project's statements: the redirect's own on the table named, the others routed.
    described = spark.sql(f"DESCRIBE REDIRECT {name}").collect()[0]
    assert (described["table"], described["state"]) == (name, "READY")
    history = spark.sql(f"DESCRIBE PROTOCOL HISTORY {name}").collect()
    assert {r["table"] for r in history} == {f"delta.`file:{dest}`"}

    # Three-part names through the DeltaTable API, and the catalog as the current one.
    operations = [r.operation for r in DeltaTable.forName(spark, name).history().collect()]
    assert operations[0] == "SET TBLPROPERTIES"
    spark.sql(f"USE {uc_catalog.name}.s")
    try:
        assert ids(spark, "ext") == [1, 2, 3, 4]
    finally:
        spark.sql("USE spark_catalog.default")

    # A replacement by name replaces the table at the destination.
    spark.createDataFrame([(5,), (6,)], "id BIGINT").write.format("delta").mode("overwrite") \
        .saveAsTable(name)
    assert ids(spark, f"delta.`{dest}`") == [5, 6]

    back = spark.sql(f"ALTER TABLE {name} UNSET REDIRECT").collect()[0]
    assert back["state"] == "NORMAL"
    assert ids(spark, name) == [5, 6]
    assert spark.sql(f"DESCRIBE DETAIL {name}").collect()[0]["location"] == f"file:{tmp_path / 'ext'}"


def test_a_stream_by_name_in_unity_catalog_runs_through_redirects(
    spark: SparkSession, uc_catalog: UcCatalog, tmp_path: Path
) -> None:
    feed, orders = uc_catalog.table("feed"), uc_catalog.table("orders")
    for table in (feed, orders):
        short = table.rsplit(".", 1)[1]
        spark.sql(f"CREATE TABLE {table} (id BIGINT) USING delta LOCATION '{tmp_path / short}'")
    stream = StreamUnderRedirects(
        spark, TableRef(name=feed), TableRef(name=orders), str(tmp_path / "ck")
    )
    moved = run_through_moves(stream, [
        f"ALTER TABLE {feed} SET REDIRECT TO '{tmp_path / 'feed-moved'}'",
        f"ALTER TABLE {orders} SET REDIRECT WRITER ONLY TO '{tmp_path / 'orders-moved'}'",
        f"ALTER TABLE {feed} UNSET REDIRECT",
    ])
    assert stream.fed > 0 and moved == list(range(stream.fed)), difference(moved, stream.fed)
    assert ids(spark, f"delta.`{tmp_path / 'orders-moved'}`") == moved


def test_a_second_catalog_routes_its_tables_too(
    spark: SparkSession, other_catalog: UcCatalog, tmp_path: Path
) -> None:
    name, dest = other_catalog.table("t"), tmp_path / "moved"
    spark.sql(f"CREATE TABLE {name} (id BIGINT) USING delta LOCATION '{tmp_path / 't'}'")
    spark.sql(f"INSERT INTO {name} VALUES (1)")
    spark.sql(f"ALTER TABLE {name} SET REDIRECT WRITER ONLY TO '{dest}'")
    spark.sql(f"INSERT INTO {name} VALUES (2)")
    assert ids(spark, name) == [1, 2]
    assert ids(spark, f"delta.`{dest}`") == [1, 2]


def test_set_redirect_refuses_a_catalog_that_does_not_route(
    spark: SparkSession, unity_catalog: UnityCatalogServer, tmp_path: Path
) -> None:
    """A catalog configured after the session started is UC's connector as it is: its tables
    would be unusable by name after a redirect, so SET REDIRECT refuses before writing."""
    raw = new_catalog(unity_catalog, tmp_path / "storage", prefix="raw")
    for key, value in raw.spark_conf().items():
        if key.startswith(f"spark.sql.catalog.{raw.name}"):
            spark.conf.set(key, value)
    name, source, dest = raw.table("t"), tmp_path / "t", tmp_path / "moved"
    spark.sql(f"CREATE TABLE {name} (id BIGINT) USING delta LOCATION '{source}'")
    versions = len(spark.sql(f"DESCRIBE HISTORY {name}").collect())

    with pytest.raises(CatalogNotRoutedError) as refused, translate_errors():
        spark.sql(f"ALTER TABLE {name} SET REDIRECT TO '{dest}'")
    assert f"spark.sql.catalog.{raw.name}={ROUTING_CATALOG}" in str(refused.value)
    plan = spark.sql(f"ALTER TABLE {name} SET REDIRECT TO '{dest}' DRY RUN").collect()[0]
    assert [r["condition"] for r in plan["refusals"]] == ["DELTA_LIFECYCLE_CATALOG_NOT_ROUTED"]

    assert len(spark.sql(f"DESCRIBE HISTORY {name}").collect()) == versions
    assert not dest.exists()


def test_a_catalog_managed_table_is_not_redirected(
    spark: SparkSession, uc_catalog: UcCatalog, tmp_path: Path
) -> None:
    """Unity Catalog takes the commits of its managed tables: SET REDIRECT refuses, and its
    DRY RUN reports the same refusal."""
    name = uc_catalog.table("managed")
    spark.sql(f"CREATE TABLE {name} (id BIGINT) USING delta "
              "TBLPROPERTIES ('delta.feature.catalogManaged' = 'supported')")
    with pytest.raises(CoordinatedTableError), translate_errors():
        spark.sql(f"ALTER TABLE {name} SET REDIRECT TO '{tmp_path / 'moved'}'")
    plan = spark.sql(f"ALTER TABLE {name} SET REDIRECT TO '{tmp_path / 'moved'}' DRY RUN")
    assert [r["condition"] for r in plan.collect()[0]["refusals"]] == [
        "DELTA_LIFECYCLE_COORDINATED_TABLE"]
    assert not (tmp_path / "moved").exists()
