"""Fixtures for the Unity Catalog suite: one real Unity Catalog OSS server per test process
(``server.py``: built from its source once, cached, started on 127.0.0.1), a catalog of its
own for each test module, and sessions that reach it through UC's Spark connector.

Where no Unity Catalog source can be found, every test here skips with a reason that says
how to provide one (``server.how_to_provide``).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterator, Optional

import pytest
from pyspark.sql import SparkSession

from process_jvm import lifecycle_session
from unitycatalog.server import (
    UC_MAVEN_PACKAGES,
    UnityCatalogServer,
    UnityCatalogUnavailable,
    start_unity_catalog,
)


@pytest.fixture(scope="session")
def unity_catalog() -> Iterator[UnityCatalogServer]:
    """The process's Unity Catalog server (one per pytest-xdist worker that needs it)."""
    try:
        server = start_unity_catalog()
    except UnityCatalogUnavailable as e:
        pytest.skip(str(e))
    try:
        yield server
    finally:
        server.stop()


@dataclass(frozen=True)
class UcCatalog:
    """A catalog of the server with managed storage, and a schema ``s`` in it."""

    server: UnityCatalogServer
    #: The catalog's name, in Unity Catalog and as a Spark catalog.
    name: str
    #: The catalog's managed storage root, a local folder.
    storage_root: Path

    def spark_conf(self) -> Dict[str, str]:
        return self.server.spark_conf(self.name)

    def table(self, name: str) -> str:
        """``<catalog>.s.<name>``"""
        return f"{self.name}.s.{name}"


def new_catalog(server: UnityCatalogServer, root: Path, prefix: str = "lake") -> UcCatalog:
    name = f"{prefix}_{uuid.uuid4().hex[:8]}"
    storage = root / name
    storage.mkdir(parents=True)
    server.create_catalog(name, storage.resolve().as_uri())
    server.create_schema(name, "s")
    return UcCatalog(server, name, storage)


@pytest.fixture(scope="module")
def uc_catalog(
    unity_catalog: UnityCatalogServer, tmp_path_factory: pytest.TempPathFactory
) -> UcCatalog:
    """A fresh catalog (managed storage, schema ``s``) for one test module."""
    return new_catalog(unity_catalog, tmp_path_factory.mktemp("uc-storage"))


def uc_session(
    tmp_path_factory: pytest.TempPathFactory,
    catalog: UcCatalog,
    start_conf: Optional[Dict[str, str]] = None,
    hive: bool = True,
) -> Iterator[SparkSession]:
    """A session with this extension (``configure_spark``), ``catalog`` as a Spark catalog of
    the same name through UC's connector, and the session catalog in a Hive metastore."""
    yield from lifecycle_session(
        tmp_path_factory,
        start_conf={**catalog.spark_conf(), **(start_conf or {})},
        hive=hive,
        extra_packages=UC_MAVEN_PACKAGES,
    )


@pytest.fixture(scope="module")
def uc_spark(
    tmp_path_factory: pytest.TempPathFactory, uc_catalog: UcCatalog
) -> Iterator[SparkSession]:
    """The module's extension session: ``uc_catalog`` by name, spark_catalog in Hive."""
    yield from uc_session(tmp_path_factory, uc_catalog)


def stock_uc_conf(catalog: UcCatalog) -> Dict[str, str]:
    """Settings for a stock delta-spark subprocess (``stock_session.run_stock_script``) that reaches
    ``catalog`` through UC's connector and no extension of this project."""
    return {**catalog.spark_conf(), "spark.jars.packages": ",".join(UC_MAVEN_PACKAGES)}
