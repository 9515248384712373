"""Spark's own Hive metastore for tests that keep tables by name.

Users keep their tables in a metastore, not in Spark's in-memory catalog, so tests of anything
that resolves names (routing, DROP FEATURE by name, streams by name, the differential suite)
run against a real one: Hive's metastore as Spark ships it, on embedded Derby in a folder of
the test's own. Nothing is downloaded: pyspark carries the Hive and Derby jars.
"""

from __future__ import annotations

from pathlib import Path
from typing import Dict


def hive_metastore_conf(root: Path) -> Dict[str, str]:
    """Settings for a session whose catalog is a Hive metastore on embedded Derby under ``root``
    (what a builder's ``enableHiveSupport()`` sets, plus where Derby and the warehouse
    live). Derby opens a database once per JVM, so each session needs a ``root`` of its own."""
    return {
        "spark.sql.catalogImplementation": "hive",
        "spark.sql.warehouse.dir": str(root / "warehouse"),
        "spark.hadoop.javax.jdo.option.ConnectionURL":
            f"jdbc:derby:;databaseName={root / 'metastore_db'};create=true",
        # Hive's own metastore schema check would refuse the fresh database.
        "spark.hadoop.hive.metastore.schema.verification": "false",
        "spark.hadoop.datanucleus.schema.autoCreateAll": "true",
        # Derby's own log goes next to its database when this session starts the JVM.
        "spark.driver.extraJavaOptions": f"-Dderby.system.home={root}",
    }
