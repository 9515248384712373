"""Catalog-managed tables through a real Unity Catalog server: this project's statements read
what the catalog ratified and write through the catalog's commit path, as delta-spark does.

Every table here is created by name in the module's catalog with
``'delta.feature.catalogManaged' = 'supported'``: Unity Catalog makes it a managed table with
deletion vectors, row tracking, column mapping, in-commit timestamps and V2 checkpoints, and
every commit goes through the catalog (staged in ``_delta_log/_staged_commits/``, ratified by
the catalog, then copied to ``_delta_log/<v>.json`` by the writer).
"""

from __future__ import annotations

import json
import os
import time
import uuid
from pathlib import Path
from typing import Any, Dict, List

from pyspark.sql import SparkSession

from unitycatalog.conftest import UcCatalog


def table_path(catalog: UcCatalog, name: str) -> Path:
    """The managed table's location, as Unity Catalog allocated it."""
    location: str = catalog.server.get_table(name)["storage_location"]
    return Path(location.removeprefix("file://").removeprefix("file:"))


def commit_actions(log: Path, version: int) -> List[Dict[str, Any]]:
    with open(log / f"{version:020d}.json", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def ratify_without_backfill(
    catalog: UcCatalog, name: str, actions: List[Dict[str, Any]], version: int
) -> Path:
    """Commit ``actions`` as ``version`` the way a writer does that stops after the catalog
    ratified its commit and before it copied it to ``_delta_log/<version>.json``: stage the
    file, then post it to Unity Catalog's commits API. Returns the staged file."""
    info = catalog.server.get_table(name)
    log = table_path(catalog, name) / "_delta_log"
    staged = log / "_staged_commits" / f"{version:020d}.{uuid.uuid4()}.json"
    staged.write_text("".join(json.dumps(a) + "\n" for a in actions), encoding="utf-8")
    timestamp = next(a["commitInfo"]["inCommitTimestamp"] for a in actions if "commitInfo" in a)
    try:
        catalog.server.api("POST", "/delta/preview/commits", {
            "table_id": info["table_id"],
            "table_uri": info["storage_location"],
            "commit_info": {
                "version": version,
                "timestamp": timestamp,
                "file_name": staged.name,
                "file_size": staged.stat().st_size,
                "file_modification_timestamp": int(staged.stat().st_mtime * 1000),
            },
            "latest_backfilled_version": version - 1,
        })
    except json.JSONDecodeError:
        pass  # the server answers a commit with a body that is not JSON; a refusal raises
    return staged


def latest_backfilled(log: Path) -> int:
    return max(int(n[:20]) for n in os.listdir(log) if n.endswith(".json") and len(n) == 25
               and n[:20].isdigit())


def test_reads_include_a_ratified_commit_not_yet_backfilled(
    uc_spark: SparkSession, uc_catalog: UcCatalog
) -> None:
    """A commit the catalog ratified and no writer backfilled is part of the table for delta-spark;
    DESCRIBE PROTOCOL HISTORY, DESCRIBE LOG FILES and DESCRIBE COMPATIBILITY include it."""
    name = uc_catalog.table("ratified")
    uc_spark.sql(f"CREATE TABLE {name} (id BIGINT) USING delta "
                 "TBLPROPERTIES ('delta.feature.catalogManaged' = 'supported')")
    uc_spark.sql(f"INSERT INTO {name} VALUES (1), (2)")
    log = table_path(uc_catalog, name) / "_delta_log"
    previous = latest_backfilled(log)
    version = previous + 1
    before = commit_actions(log, previous)
    commit_info = next(a["commitInfo"] for a in before if "commitInfo" in a)
    protocol = next(a["protocol"] for a in commit_actions(log, 0) if "protocol" in a)
    # A protocol change: typeWidening becomes supported, as SET TBLPROPERTIES
    # ('delta.feature.typeWidening' = 'supported') would make it.
    widened = {**protocol,
               "readerFeatures": sorted(protocol["readerFeatures"] + ["typeWidening"]),
               "writerFeatures": sorted(protocol["writerFeatures"] + ["typeWidening"])}
    now = int(time.time() * 1000)
    staged = ratify_without_backfill(uc_catalog, name, [
        {"commitInfo": {"inCommitTimestamp": max(now, commit_info["inCommitTimestamp"] + 1),
                        "timestamp": now, "operation": "SET TBLPROPERTIES",
                        "operationParameters": {}, "readVersion": previous,
                        "isolationLevel": "Serializable", "isBlindAppend": True,
                        "engineInfo": "a writer that stopped before backfill",
                        "txnId": str(uuid.uuid4())}},
        {"protocol": widened},
    ], version)
    assert not (log / f"{version:020d}.json").exists()

    history = uc_spark.sql(f"DESCRIBE PROTOCOL HISTORY {name}").collect()
    assert history[-1]["version"] == version
    assert "typeWidening" in history[-1]["readerFeatures"]
    files = uc_spark.sql(f"DESCRIBE LOG FILES {name}").collect()
    commits = {r["version"]: r["file"] for r in files if r["kind"] == "commit"}
    assert commits[version] == f"_staged_commits/{staged.name}"
    verdict = uc_spark.sql(f"DESCRIBE COMPATIBILITY {name} FOR 'delta-spark-3.1'").collect()[0]
    assert "typeWidening" in verdict["readBlockers"]
    assert not (log / f"{version:020d}.json").exists()  # reading backfills nothing
