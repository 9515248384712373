"""Helpers for the ``s3a://`` tests: readers this project did not write (stock delta-spark
in a subprocess with :func:`s3_stock_conf`, delta-rs), and an independent S3 client (pyarrow's)
for listing and fetching what the tables hold."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Dict, List, Optional

from deltalake import DeltaTable
from pyspark.sql import SparkSession

from spark_sessions import SESSION_CONF
from delta_lifecycle import hadoop_aws_package
from objectstore.server import ObjectStore

#: CI runs the smoke module only; ``DELTA_LIFECYCLE_OBJECTSTORE=1`` (``make
#: objectstore-test``) or ``DELTA_LIFECYCLE_FULL_MATRIX=1`` runs every module.
FULL_OBJECTSTORE_SUITE = (
    os.environ.get("DELTA_LIFECYCLE_OBJECTSTORE") == "1"
    or os.environ.get("DELTA_LIFECYCLE_FULL_MATRIX") == "1"
)
FULL_SUITE_ONLY = (
    "the full object-store suite runs with DELTA_LIFECYCLE_OBJECTSTORE=1 (make objectstore-test)"
)


def s3_session_conf(store: ObjectStore) -> Dict[str, str]:
    """The tests' small-Spark settings plus S3A's for ``store``."""
    return {**SESSION_CONF, **store.spark_conf()}


def ids(spark: SparkSession, uri: str, version: Optional[int] = None) -> List[int]:
    reader = spark.read.format("delta")
    if version is not None:
        reader = reader.option("versionAsOf", version)
    return sorted(int(r[0]) for r in reader.load(uri).select("id").collect())


def delta_rs_ids(store: ObjectStore, uri: str, version: Optional[int] = None) -> List[int]:
    """The ``id`` column as delta-rs reads it (it takes ``s3a://`` as S3 too)."""
    table = DeltaTable(uri, version=version, storage_options=store.storage_options())
    return sorted(int(v) for v in table.to_pyarrow_table().column("id").to_pylist())


def log_names(store: ObjectStore, uri: str) -> List[str]:
    """The names in the table's ``_delta_log``, as an S3 listing shows them."""
    return [n for n in store.list_prefix(f"{uri}/_delta_log") if "/" not in n]


def latest_version(store: ObjectStore, uri: str) -> int:
    return max(int(n[:20]) for n in log_names(store, uri) if n.endswith(".json") and n[:20].isdigit())


def mirror_log(store: ObjectStore, uri: str, destination: Path) -> Path:
    """Copy the table's ``_delta_log`` to ``destination/_delta_log`` with each object's
    last-modified time as the file's mtime, and return ``destination``: the local-log
    checks in ``tests/deltalog.py`` then apply to the S3 table as they are."""
    from pyarrow import fs

    s3 = store.filesystem()
    log = destination / "_delta_log"
    log.mkdir(parents=True)
    prefix = uri.split("://", 1)[1].rstrip("/") + "/_delta_log"
    infos = s3.get_file_info(fs.FileSelector(prefix, recursive=False))
    for info in infos:
        if info.type != fs.FileType.File:
            continue
        target = log / info.base_name
        with s3.open_input_stream(info.path) as source:
            target.write_bytes(source.read())
        os.utime(target, ns=(info.mtime_ns, info.mtime_ns))
    return destination


def s3_stock_conf(store: ObjectStore) -> Dict[str, str]:
    """Settings for a stock delta-spark script (``stock_session.run_stock_script``,
    ``stock_read_ids``) that reaches ``store``: hadoop-aws and S3A's settings."""
    return {**store.spark_conf(), "spark.jars.packages": hadoop_aws_package()}
