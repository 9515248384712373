"""A real Unity Catalog server serves Delta tables to a session with this extension as it does
to stock delta-spark: an external table and a catalog-managed one, by name."""

from __future__ import annotations

from pathlib import Path

import pytest
from pyspark.errors import AnalysisException
from pyspark.sql import SparkSession

from spark_errors import condition_of
from stock_session import run_stock_script
from unitycatalog.conftest import UcCatalog, stock_uc_conf
from unitycatalog.managed_tables import await_backfilled

STOCK_READ_BY_NAME = """
    out = {}
    for name in json.loads(sys.argv[1]):
        out[name] = sorted(int(r[0]) for r in spark.table(name).select("id").collect())
    emit(out)
"""


def test_tables_by_name_in_unity_catalog(
    uc_spark: SparkSession, uc_catalog: UcCatalog, tmp_path: Path
) -> None:
    external, managed = uc_catalog.table("ext"), uc_catalog.table("managed")
    uc_spark.sql(f"CREATE TABLE {external} (id BIGINT) USING delta LOCATION '{tmp_path / 'ext'}'")
    uc_spark.sql(f"INSERT INTO {external} VALUES (1), (2)")
    uc_spark.sql(
        f"CREATE TABLE {managed} (id BIGINT) USING delta "
        "TBLPROPERTIES ('delta.feature.catalogManaged' = 'supported')"
    )
    uc_spark.sql(f"INSERT INTO {managed} VALUES (3)")

    assert sorted(r.id for r in uc_spark.table(external).collect()) == [1, 2]
    history = uc_spark.sql(f"DESCRIBE PROTOCOL HISTORY {managed}").collect()
    assert "catalogManaged" in history[-1]["readerFeatures"]
    table = uc_catalog.server.get_table(managed)
    assert table["table_type"] == "MANAGED"

    stock = run_stock_script(
        STOCK_READ_BY_NAME, ['["%s", "%s"]' % (external, managed)],
        conf=stock_uc_conf(uc_catalog),
    )
    assert stock[external] == [1, 2]
    assert stock[managed] == [3]


def test_catalog_managed_maintenance_is_refused_by_default(
    uc_spark: SparkSession, uc_catalog: UcCatalog
) -> None:
    """Unity Catalog OSS 0.6.0 gives no maintenance permission, and the administrator's
    ``spark.deltaLifecycle.catalogManaged.maintenance`` is not set (``catalog``): deleting a
    catalog-managed table's expired log files is refused, DRY RUN too, naming the setting. A log
    compaction, which the catalogManaged RFC allows every client, is written."""
    name = uc_catalog.table("maintained")
    uc_spark.sql(f"CREATE TABLE {name} (id BIGINT) USING delta "
                 "TBLPROPERTIES ('delta.feature.catalogManaged' = 'supported')")
    uc_spark.sql(f"INSERT INTO {name} VALUES (1)")
    for statement in (f"ALTER TABLE {name} CLEAN LOG RETAIN 0 HOURS DRY RUN",
                      f"ALTER TABLE {name} CLEAN LOG RETAIN 0 HOURS"):
        with pytest.raises(AnalysisException) as caught:
            uc_spark.sql(statement).collect()
        assert condition_of(caught.value) == "DELTA_LIFECYCLE_CATALOG_MANAGED_TABLE"
        message = str(caught.value)
        assert "(METADATA_CLEANUP)" in message and "gives no maintenance permission" in message
        assert "spark.deltaLifecycle.catalogManaged.maintenance=allow" in message
    assert await_backfilled(uc_catalog, name, uc_spark) == 1
    [compaction] = uc_spark.sql(f"ALTER TABLE {name} COMPACT LOG").collect()
    assert (compaction["startVersion"], compaction["endVersion"]) == (0, 1)
    assert compaction["status"] == "written"
    assert sorted(r.id for r in uc_spark.table(name).collect()) == [1]
