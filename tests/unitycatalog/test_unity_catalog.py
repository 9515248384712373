"""A real Unity Catalog server serves Delta tables to a session with this extension as it does
to stock delta-spark: an external table and a catalog-managed one, by name."""

from __future__ import annotations

from pathlib import Path

from pyspark.sql import SparkSession

from conftest import run_stock_script
from unitycatalog.conftest import UcCatalog, stock_uc_conf

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
        STOCK_READ_BY_NAME, ['["%s", "%s"]' % (external, managed)], tmp_path,
        conf=stock_uc_conf(uc_catalog),
    )
    assert stock[external] == [1, 2]
    assert stock[managed] == [3]
