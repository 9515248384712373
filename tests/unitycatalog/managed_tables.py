"""Helpers for Unity Catalog's managed (catalog-managed) tables: where the catalog put one,
and waiting for its writer to copy a ratified commit into ``_delta_log`` (backfill it)."""

from __future__ import annotations

import time
from pathlib import Path

from pyspark.sql import SparkSession

from unitycatalog.conftest import UcCatalog


def table_path(catalog: UcCatalog, name: str) -> Path:
    """The managed table's location, as Unity Catalog allocated it."""
    location: str = catalog.server.get_table(name)["storage_location"]
    return Path(location.removeprefix("file://").removeprefix("file:"))


def await_backfilled(catalog: UcCatalog, name: str, spark: SparkSession) -> int:
    """Wait until the writer has copied the table's latest commit to ``_delta_log`` (delta-spark
    does it right after the catalog ratified it, on a thread of its own); its version."""
    version: int = spark.sql(f"DESCRIBE HISTORY {name}").collect()[0]["version"]
    commit = table_path(catalog, name) / "_delta_log" / f"{version:020d}.json"
    deadline = time.monotonic() + 120
    while not commit.exists():
        assert time.monotonic() < deadline, f"{commit} was never backfilled"
        time.sleep(0.1)
    return version
