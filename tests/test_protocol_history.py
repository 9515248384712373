"""DESCRIBE PROTOCOL HISTORY end to end: through SQL and through LifecycleTable, by path and
by catalog name, against tables written by delta-spark, delta-rs and the shared test data.

Expected values are read from the raw ``_delta_log`` files (tests/deltalog.py) or come from
independent readers (stock delta-spark in a subprocess, the ``deltalake`` package).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import List

import pyarrow as pa
import pytest
from deltalake import DeltaTable, TableFeatures, write_deltalake
from pyspark.sql import SparkSession

from stock_session import run_stock_script
from table_helpers import copy_testdata
from deltalog import assert_history_matches_log, local_path, read_log
from delta_lifecycle import LifecycleTable, ProtocolVersion
from delta_lifecycle.results import PROTOCOL_HISTORY_COLUMNS
from delta_lifecycle.tables import quote_path

# Each statement is one commit; the features arrive over time and the checkpoint interval
# is lowered so that delta-spark writes a checkpoint within the last commits.
EVOLUTION = [
    "CREATE TABLE {t} (id BIGINT, s STRING) USING delta",
    "INSERT INTO {t} VALUES (1, 'a')",
    "ALTER TABLE {t} SET TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')",
    "INSERT INTO {t} VALUES (2, 'b')",
    "ALTER TABLE {t} SET TBLPROPERTIES ('delta.enableChangeDataFeed' = 'true')",
    "ALTER TABLE {t} SET TBLPROPERTIES ('delta.enableInCommitTimestamps' = 'true')",
    "ALTER TABLE {t} SET TBLPROPERTIES ('delta.checkpointInterval' = '2')",
    "INSERT INTO {t} VALUES (3, 'c')",
    "INSERT INTO {t} VALUES (4, 'd')",
]

# The documented column types, and the columns documented as nullable.
EXPECTED_COLUMNS = [
    ("version", "bigint"),
    ("timestamp", "timestamp"),
    ("operation", "string"),
    ("minReaderVersion", "int"),
    ("minWriterVersion", "int"),
    ("readerFeatures", "array<string>"),
    ("writerFeatures", "array<string>"),
    ("checkpoint", "string"),
    ("compactions", "array<string>"),
    ("requireCheckpointProtectionBeforeVersion", "bigint"),
    ("table", "string"),
]
NULLABLE_COLUMNS = {
    "operation",
    "readerFeatures",
    "writerFeatures",
    "checkpoint",
    "requireCheckpointProtectionBeforeVersion",
}


def describe(spark: SparkSession, table: str) -> List[ProtocolVersion]:
    return [
        ProtocolVersion.from_row(r)
        for r in spark.sql(f"DESCRIBE PROTOCOL HISTORY {table}").collect()
    ]


@pytest.fixture(scope="module")
def evolving(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A path table that gains features over several commits and has a checkpoint."""
    path = tmp_path_factory.mktemp("evolving") / "events"
    for statement in EVOLUTION:
        spark.sql(statement.format(t=quote_path(str(path))))
    return path


def test_schema_is_the_documented_one(spark: SparkSession, evolving: Path) -> None:
    df = spark.sql(f"DESCRIBE PROTOCOL HISTORY {quote_path(str(evolving))}")
    fields = df.schema.fields
    assert [(f.name, f.dataType.simpleString()) for f in fields] == EXPECTED_COLUMNS
    assert {f.name for f in fields if f.nullable} >= NULLABLE_COLUMNS
    assert tuple(f.name for f in fields) == PROTOCOL_HISTORY_COLUMNS


def test_scenario_really_evolves(evolving: Path) -> None:
    """Guards the other tests: the table must change protocol and have a checkpoint."""
    log = read_log(evolving)
    assert len(log) == len(EVOLUTION)
    assert len({v.protocol for v in log}) >= 3
    assert {"deletionVectors", "changeDataFeed", "inCommitTimestamp"} <= (
        log[-1].writer_features or frozenset()
    )
    assert any(v.checkpoint == "classic" for v in log)
    # Both timestamp sources occur: file times before in-commit timestamps were enabled.
    with_ict = [
        any("inCommitTimestamp" in a.get("commitInfo", {}) for a in map(json.loads, lines))
        for lines in (
            (evolving / "_delta_log" / f"{v.version:020d}.json").read_text().splitlines()
            for v in log
        )
    ]
    assert any(with_ict) and not all(with_ict)


def test_sql_by_path_matches_log(spark: SparkSession, evolving: Path) -> None:
    history = describe(spark, quote_path(str(evolving)))
    assert [v.version for v in history] == sorted(v.version for v in history)
    assert_history_matches_log(history, evolving)


def test_checkpoint_column_at_checkpointed_version(spark: SparkSession, evolving: Path) -> None:
    checkpointed = {
        int(p.name.split(".")[0]) for p in (evolving / "_delta_log").glob("*.checkpoint.parquet")
    }
    assert checkpointed, "delta-spark wrote no checkpoint"
    history = LifecycleTable.for_path(spark, str(evolving)).protocol_history()
    assert {v.version for v in history if v.checkpoint == "classic"} == checkpointed
    assert all(v.checkpoint is None for v in history if v.version not in checkpointed)


def test_wrapper_equals_sql(spark: SparkSession, evolving: Path) -> None:
    table = LifecycleTable.for_path(spark, str(evolving))
    history = table.protocol_history()
    assert history == describe(spark, quote_path(str(evolving)))
    assert all(isinstance(v.compactions, tuple) for v in history)
    assert_history_matches_log(history, evolving)


def test_statement_is_case_insensitive(spark: SparkSession, evolving: Path) -> None:
    lower = spark.sql(f"describe protocol history {quote_path(str(evolving))}").collect()
    short = spark.sql(f"DESC PROTOCOL HISTORY {quote_path(str(evolving))};").collect()
    upper = spark.sql(f"DESCRIBE PROTOCOL HISTORY {quote_path(str(evolving))}").collect()
    assert lower == upper == short


def test_path_with_backtick_and_space(spark: SparkSession, tmp_path: Path) -> None:
    path = tmp_path / "odd `dir` name" / "t"
    spark.range(3).write.format("delta").save(str(path))
    spark.range(3, 5).write.format("delta").mode("append").save(str(path))
    history = LifecycleTable.for_path(spark, str(path)).protocol_history()
    assert_history_matches_log(history, path)


def test_by_catalog_name(spark: SparkSession) -> None:
    spark.sql("CREATE DATABASE IF NOT EXISTS lifecycle_db")
    spark.range(5).write.format("delta").saveAsTable("lifecycle_db.saved")
    spark.sql(
        "ALTER TABLE lifecycle_db.saved SET TBLPROPERTIES ('delta.enableChangeDataFeed' = 'true')"
    )
    spark.sql("CREATE TABLE created (id INT) USING delta")
    spark.sql("INSERT INTO created VALUES (1)")

    for names in (
        ["lifecycle_db.saved", "spark_catalog.lifecycle_db.saved", "`lifecycle_db`.`saved`"],
        ["created", "default.created", "spark_catalog.default.created"],
    ):
        location = spark.sql(f"DESCRIBE DETAIL {names[0]}").collect()[0]["location"]
        path = local_path(location)
        expected = describe(spark, quote_path(str(path)))
        assert_history_matches_log(expected, path)
        for name in names:
            # The rows are the same but for the table column, which names the table as given.
            by_name = describe(spark, name)
            assert {v.table for v in by_name} == {by_name[0].table} and by_name[0].table
            assert without_table(by_name) == without_table(expected), name
            by_api = LifecycleTable.for_name(spark, name).protocol_history()
            assert without_table(by_api) == without_table(expected), name


def without_table(history: List[ProtocolVersion]) -> List[ProtocolVersion]:
    return [dataclasses.replace(v, table="") for v in history]


STOCK_READER = """
    path = sys.argv[1]
    quoted = "delta.`" + path.replace("`", "``") + "`"
    try:
        spark.sql("DESCRIBE PROTOCOL HISTORY " + quoted).collect()
        ours = "ran"
    except Exception as e:
        ours = type(e).__name__
    detail = spark.sql("DESCRIBE DETAIL " + quoted).collect()[0]
    history = spark.sql("DESCRIBE HISTORY " + quoted).collect()
    emit({
        "ours": ours,
        "rows": sorted(list(r) for r in spark.read.format("delta").load(path).collect()),
        "minReaderVersion": detail["minReaderVersion"],
        "minWriterVersion": detail["minWriterVersion"],
        "tableFeatures": sorted(detail["tableFeatures"]),
        "operations": sorted([r["version"], r["operation"]] for r in history),
    })
    spark.stop()
"""


def test_stock_delta_spark_reads_the_same(spark: SparkSession, evolving: Path) -> None:
    """A session without this extension (stock delta-spark, in a subprocess) reads the same
    rows, the same latest protocol and the same operations, and cannot run our statement."""
    stock = run_stock_script(STOCK_READER, [str(evolving)])
    assert stock["ours"] != "ran", "the stock session ran DESCRIBE PROTOCOL HISTORY"

    ours = sorted(list(r) for r in spark.read.format("delta").load(str(evolving)).collect())
    assert stock["rows"] == ours

    history = LifecycleTable.for_path(spark, str(evolving)).protocol_history()
    latest = history[-1]
    assert (stock["minReaderVersion"], stock["minWriterVersion"]) == (
        latest.min_reader_version,
        latest.min_writer_version,
    )
    assert stock["tableFeatures"] == sorted(
        set(latest.reader_features or ()) | set(latest.writer_features or ())
    )
    assert stock["operations"] == [[v.version, v.operation] for v in history]


def assert_matches_delta_rs(history: List[ProtocolVersion], path: Path) -> None:
    """delta-rs, an independent reader, sees the same versions and the same protocols."""
    latest = DeltaTable(str(path))
    assert latest.version() == history[-1].version
    assert len(latest.history()) == len(history)
    for v in history:
        protocol = DeltaTable(str(path), version=v.version).protocol()
        assert (protocol.min_reader_version, protocol.min_writer_version) == (
            v.min_reader_version,
            v.min_writer_version,
        ), v.version
        for theirs, ours in (
            (protocol.reader_features, v.reader_features),
            (protocol.writer_features, v.writer_features),
        ):
            assert (None if theirs is None else set(theirs)) == (
                None if ours is None else set(ours)
            ), v.version


@pytest.mark.parametrize(
    "name, checkpoint_kind",
    [
        ("delta-rs/simple_table", None),
        ("delta-golden/checkpoint", "classic"),
        ("delta-golden/multi-part-checkpoint", "multi-part"),
        ("delta-rs/checkpoint-v2-table", "v2"),
    ],
)
def test_shared_testdata(
    spark: SparkSession, tmp_path: Path, name: str, checkpoint_kind: str | None
) -> None:
    path = copy_testdata(name, tmp_path)
    log = read_log(path)
    if checkpoint_kind is not None:
        assert any(v.checkpoint == checkpoint_kind for v in log), "test data changed"

    history = LifecycleTable.for_path(spark, str(path)).protocol_history()
    assert_history_matches_log(history, path)
    assert history == describe(spark, quote_path(str(path)))
    assert_matches_delta_rs(history, path)


def test_table_written_by_delta_rs(spark: SparkSession, tmp_path: Path) -> None:
    """delta-rs as the writer: protocol upgrades and a checkpoint written by delta-rs."""
    path = tmp_path / "rs"
    write_deltalake(str(path), pa.table({"id": [1, 2]}))
    write_deltalake(str(path), pa.table({"id": [3]}), mode="append")
    DeltaTable(str(path)).alter.set_table_properties({"delta.enableChangeDataFeed": "true"})
    DeltaTable(str(path)).alter.add_feature(
        TableFeatures.DeletionVectors, allow_protocol_versions_increase=True
    )
    DeltaTable(str(path)).create_checkpoint()
    write_deltalake(str(path), pa.table({"id": [4]}), mode="append")

    log = read_log(path)
    assert len({v.protocol for v in log}) >= 3 and any(v.checkpoint for v in log)
    history = LifecycleTable.for_path(spark, str(path)).protocol_history()
    assert_history_matches_log(history, path)
    assert_matches_delta_rs(history, path)
