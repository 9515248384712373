"""A table of the Hive metastore moves into Unity Catalog online: ``SET REDIRECT TO TABLE
<catalog>.<schema>.<name>`` registers it there (docs/redirection.md, "Moving a table into
Unity Catalog").

One extension session (``spark_catalog`` in a Hive metastore, a Unity Catalog catalog through
UC's connector) and one stock delta-spark subprocess with UC's connector and no extension.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List

import pytest
from pyspark.sql import SparkSession

from stock_session import run_stock_script
from delta_lifecycle import LifecycleTable
from unitycatalog.conftest import UcCatalog, stock_uc_conf
from unitycatalog.server import UnityCatalogError

STOCK_READ_AND_DESCRIBE = """
    out = {}
    for name in json.loads(sys.argv[1]):
        out[name] = sorted(int(r[0]) for r in spark.table(name).select("id").collect())
        out[name + " location"] = spark.sql(f"DESCRIBE DETAIL {name}").collect()[0]["location"]
    emit(out)
"""


def ids(spark: SparkSession, table: str) -> List[int]:
    return sorted(int(r[0]) for r in spark.sql(f"SELECT id FROM {table}").collect())


def redirect_property(table: Path) -> Dict[str, Any]:
    """The redirect property of the latest metadata in ``table``'s log, parsed."""
    for commit in sorted((table / "_delta_log").glob("*.json"), reverse=True):
        for line in commit.read_text().splitlines():
            action = json.loads(line)
            if "metaData" in action:
                value: Dict[str, Any] = json.loads(
                    action["metaData"]["configuration"]["delta.redirectReaderWriter"]
                )
                return value
    raise AssertionError(f"no metadata in {table}")


def test_a_hive_table_moves_into_unity_catalog(
    uc_spark: SparkSession, uc_catalog: UcCatalog, tmp_path: Path
) -> None:
    spark, server = uc_spark, uc_catalog.server
    spark.sql("CREATE TABLE default.legacy (id BIGINT) USING delta")
    spark.sql("INSERT INTO default.legacy VALUES (10), (20)")
    source = Path(spark.sql("DESCRIBE DETAIL default.legacy").collect()[0]["location"]
                  .removeprefix("file:"))
    new_name, dest = uc_catalog.table("legacy"), tmp_path / "in-uc"

    # The plan, with the catalog's storage root as the default location; nothing registered.
    plan = spark.sql(f"ALTER TABLE default.legacy SET REDIRECT TO TABLE {new_name} DRY RUN")
    planned = plan.collect()[0]
    assert planned["refusals"] == []
    assert planned["destinationLocation"].endswith(f"{uc_catalog.name}/s/legacy")
    assert any(f"register {new_name} in Unity Catalog" in step for step in planned["steps"])
    with pytest.raises(UnityCatalogError):
        server.get_table(new_name)

    # ALTER TABLE default.legacy SET REDIRECT TO TABLE <new_name> LOCATION '<dest>'
    status = LifecycleTable.for_name(spark, "default.legacy").set_redirect(
        table=new_name, table_location=str(dest)
    )
    assert (status.state, status.type, status.destination) == ("READY", "Unity Catalog", new_name)

    # Registered as an external table there; the source's redirect records its id (the RFC's
    # Unity Catalog type).
    registered = server.get_table(new_name)
    assert registered["table_type"] == "EXTERNAL"
    assert registered["storage_location"].rstrip("/").endswith(str(dest))
    value = redirect_property(source)
    assert value["Type"] == "Unity Catalog" and value["State"] == "READY"
    assert value["Spec"]["Table"]["TableId"] == registered["table_id"]
    assert value["Spec"]["Table"]["MetastoreId"] == server.api("GET", "/metastore_summary")[
        "metastore_id"]

    # The old name, the old path and the new name serve one table; a write by the old name is
    # seen by the new one.
    spark.sql("INSERT INTO default.legacy VALUES (30)")
    for name in ("default.legacy", f"delta.`{source}`", new_name):
        assert ids(spark, name) == [10, 20, 30], name

    # Renamed in Unity Catalog (its Delta API), the table is found by its id.
    server.api("POST", f"/delta/v1/catalogs/{uc_catalog.name}/schemas/s/tables/legacy/rename",
               {"new-name": "moved"})
    renamed = uc_catalog.table("moved")
    spark.sql("INSERT INTO default.legacy VALUES (40)")
    assert ids(spark, "default.legacy") == [10, 20, 30, 40]
    assert spark.sql("DESCRIBE REDIRECT default.legacy").collect()[0]["destination"] == renamed

    # Stock delta-spark with UC's connector, no extension: the table by its new name.
    stock = run_stock_script(STOCK_READ_AND_DESCRIBE, [json.dumps([renamed])],
                             conf=stock_uc_conf(uc_catalog))
    assert stock[renamed] == [10, 20, 30, 40]
    assert stock[renamed + " location"].rstrip("/").endswith(str(dest))

    # UNSET brings the table back to its own location; the Unity Catalog entry stays, read-only.
    back = spark.sql("ALTER TABLE default.legacy UNSET REDIRECT").collect()[0]
    assert back["state"] == "NORMAL"
    assert ids(spark, "default.legacy") == [10, 20, 30, 40]
    assert server.get_table(renamed)["table_id"] == registered["table_id"]
    assert ids(spark, renamed) == [10, 20, 30, 40]
