"""Verified, not claimed: every "verified" entry of the capability file is checked here by
running the client against tables that carry one feature each, and comparing what it could do
with what ``DESCRIBE COMPATIBILITY`` predicts. A disagreement fails the test; an "unknown"
prediction is not checked (there is no claim to check).

Default CI runs deltalake 1.x (the main venv's version, in a venv of its own) on every table,
which takes about a minute once its venv is built; ``DELTA_LIFECYCLE_FULL_MATRIX=1`` (``make
compat-matrix``) adds deltalake 0.25, Polars, delta-spark 3.3 on pyspark 3.5 and delta-spark
2.4 on pyspark 3.4, each in its own venv (tests/client_venvs.py), and delta-spark 4.4, the
session's own, reading and appending to every table. Measured on this 2-core machine under a
load average of about 14: building the tables 218 s, the delta-spark 2.4 probe 180 s, the
end-to-end drop for delta-spark 2.4 128 s; the default run (deltalake 1.x) is the table build
plus seconds per probe.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Dict, Iterator, List

import pytest
from pyspark.sql import SparkSession

from compat_clients import RUNNABLE, TABLES, build_tables, probe
from environment import FULL_MATRIX
from delta_lifecycle import ClientCompatibility, LifecycleTable

CHEAP_CLIENTS = ["deltalake-1.x"]
CLIENTS = list(RUNNABLE) if FULL_MATRIX else CHEAP_CLIENTS


@pytest.fixture(scope="module")
def feature_tables(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One table per feature, built once per module; each client probes a copy of them."""
    root = tmp_path_factory.mktemp("feature-tables")
    build_tables(spark, root, list(TABLES))
    return root


def _predictions(
    spark: SparkSession, root: Path, client: str
) -> Dict[str, ClientCompatibility]:
    return {
        name: LifecycleTable.for_path(spark, str(root / name)).compatibility(client)[0]
        for name in TABLES
    }


@pytest.mark.parametrize("client", CLIENTS)
def test_client_matches_its_capability_entry(
    spark: SparkSession, feature_tables: Path, tmp_path: Path, client: str
) -> None:
    copy = tmp_path / "tables"
    shutil.copytree(feature_tables, copy)
    predicted = _predictions(spark, copy, client)
    actual = probe(client, {name: str(copy / name) for name in TABLES})
    disagreements: List[str] = []
    checked = 0
    for name, p in predicted.items():
        for what, claim in (("read", p.can_read), ("write", p.can_write)):
            if claim == "unknown":
                continue
            checked += 1
            if actual[name][what] != (claim == "yes"):
                error = actual[name].get(f"{what}Error", "")
                disagreements.append(f"{name}: predicted {what}={claim}, client: {error or 'ok'}")
    assert not disagreements, f"{client} disagrees with clients.json:\n" + "\n".join(disagreements)
    assert checked > 0, f"nothing of {client}'s entry was checked"


@pytest.mark.skipif(not FULL_MATRIX, reason="full matrix only (DELTA_LIFECYCLE_FULL_MATRIX=1)")
def test_the_session_delta_spark_reads_and_writes_every_table(
    spark: SparkSession, feature_tables: Path, tmp_path: Path
) -> None:
    # delta-spark 4.4 is the "verified" delta-spark-4.4 entry: it knows every feature here.
    copy = tmp_path / "tables"
    shutil.copytree(feature_tables, copy)
    for name, p in _predictions(spark, copy, "delta-spark-4.4").items():
        assert (p.can_read, p.can_write) == ("yes", "yes"), name
        df = spark.read.format("delta").load(str(copy / name))
        rows = df.limit(1).collect()
        spark.createDataFrame(rows, df.schema).write.format("delta").mode("append").save(
            str(copy / name)
        )


@pytest.mark.parametrize(
    "client",
    ["deltalake-1.x"] + (["delta-spark-2.4"] if FULL_MATRIX else []),
)
def test_drop_features_for_client_makes_the_table_readable_by_that_client(
    spark: SparkSession, tmp_path: Path, client: str
) -> None:
    # End to end: a table the client cannot read, DROP FEATURES FOR CLIENT, then that very
    # client reads it. typeWidening blocks both delta-rs 1.x and delta-spark 2.4.
    path = tmp_path / "t"
    TABLES["typeWidening"](spark, str(path))
    spark.sql(f"INSERT INTO delta.`{path}` VALUES (2)")
    table = LifecycleTable.for_path(spark, str(path))
    [before] = table.compatibility(client)
    assert before.can_read == "no"
    assert probe(client, {"t": str(path)})["t"]["read"] is False
    plan = table.drop_features_for(client, dry_run=True)
    assert [r.feature for r in plan] == list(before.drop_for_read)
    done = table.drop_features_for(client)
    assert [r.status for r in done] == ["dropped"] * len(before.drop_for_read)
    [after] = table.compatibility(client)
    assert after.can_read == "yes"
    result = probe(client, {"t": str(path)})["t"]
    assert result["read"] is True, result
    assert table.drop_features_for(client) == []
