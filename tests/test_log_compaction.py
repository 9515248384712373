"""COMPACT LOG, the post-commit policy and CLEAN LOG end to end, through SQL and
LifecycleTable, with every table checked by readers this project did not write: stock
delta-spark in a subprocess without the extension (with its use of compactions on and off,
and with the compaction files deleted) and delta-rs."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any, Dict, List

import pytest
from deltalake import DeltaTable
from pyspark.sql import SparkSession

from conftest import SESSION_CONF
from delta_lifecycle import CompactionResult, LifecycleTable
from delta_lifecycle.errors import (
    CompactionConflictError,
    InvalidCompactionRangeError,
    NotADeltaTableError,
)
from delta_lifecycle.tables import quote_path

Rows = List[List[Any]]


def log_dir(path: Path) -> Path:
    return path / "_delta_log"


def compactions(path: Path) -> List[str]:
    return sorted(p.name for p in log_dir(path).glob("*.compacted.json"))


def our_rows(spark: SparkSession, path: Path) -> Rows:
    return sorted(list(r) for r in spark.read.format("delta").load(str(path)).collect())


def delta_rs_rows(path: Path) -> Rows:
    table = DeltaTable(str(path)).to_pyarrow_table()
    columns = table.column_names
    return sorted([row[c] for c in columns] for row in table.to_pylist())


def make_table(spark: SparkSession, path: Path, properties: str, inserts: int) -> None:
    t = quote_path(str(path))
    spark.sql(f"CREATE TABLE {t} (id BIGINT, s STRING) USING delta TBLPROPERTIES ({properties})")
    for i in range(inserts):
        spark.sql(f"INSERT INTO {t} VALUES ({i}, 'v{i}'), ({i + 100}, 'w{i}')")


STOCK_READER = textwrap.dedent(
    """
    import json, sys
    from delta import configure_spark_with_delta_pip
    from pyspark.sql import SparkSession

    paths, conf = json.loads(sys.argv[1]), json.loads(sys.argv[2])
    builder = SparkSession.builder.master("local[1]")
    for k, v in conf.items():
        builder = builder.config(k, v)
    builder = (
        builder.config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
        .config("spark.sql.catalog.spark_catalog",
                "org.apache.spark.sql.delta.catalog.DeltaCatalog")
    )
    spark = configure_spark_with_delta_pip(builder).getOrCreate()
    out = {"extensions": spark.conf.get("spark.sql.extensions")}
    for use in ("true", "false"):
        spark.conf.set("spark.databricks.delta.deltaLog.minorCompaction.useForReads", use)
        spark.sparkContext._jvm.org.apache.spark.sql.delta.DeltaLog.clearCache()
        out[use] = {p: sorted(list(r) for r in spark.read.format("delta").load(p).collect())
                    for p in paths}
    print("RESULT " + json.dumps(out))
    spark.stop()
    """
)


def stock_rows(paths: List[Path], tmp_path: Path) -> Dict[str, Dict[str, Rows]]:
    """Rows by path, read by stock delta-spark with compactions used ("true") and not."""
    script = tmp_path / "stock_reader.py"
    script.write_text(STOCK_READER)
    run = subprocess.run(
        [sys.executable, str(script), json.dumps([str(p) for p in paths]), json.dumps(SESSION_CONF)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr[-4000:]
    lines = [line for line in run.stdout.splitlines() if line.startswith("RESULT ")]
    assert lines, run.stdout[-2000:] + run.stderr[-4000:]
    result: Dict[str, Any] = json.loads(lines[-1][len("RESULT "):])
    assert "DeltaLifecycle" not in result["extensions"]
    return {"true": result["true"], "false": result["false"]}


def wait_for_compactions(path: Path, count: int, timeout: float = 60.0) -> List[str]:
    """The policy runs on a background thread after each commit: poll for its files."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = compactions(path)
        if len(found) >= count:
            return found
        time.sleep(0.2)
    return compactions(path)


def test_compaction_and_policy_read_the_same_everywhere(
    spark: SparkSession, tmp_path: Path
) -> None:
    manual = tmp_path / "manual"
    make_table(spark, manual, "'delta.checkpointInterval' = '100'", inserts=6)
    spark.sql(f"DELETE FROM {quote_path(str(manual))} WHERE id = 3")
    before = our_rows(spark, manual)
    table = LifecycleTable.for_path(spark, str(manual))

    result = table.compact_log()
    assert isinstance(result, CompactionResult) and result.written
    assert (result.start_version, result.end_version, result.commits) == (0, 7, 8)
    assert result.file is not None and result.file.endswith(compactions(manual)[0])
    assert (log_dir(manual) / compactions(manual)[0]).stat().st_size == result.bytes_written
    assert table.compact_log().status == "nothing-to-compact"
    again = spark.sql(f"ALTER TABLE {quote_path(str(manual))} COMPACT LOG FROM VERSION 0 TO VERSION 7")
    assert CompactionResult.from_row(again.collect()[0]).status == "exists"

    policy = tmp_path / "policy"
    make_table(
        spark,
        policy,
        "'delta.checkpointInterval' = '100', 'deltaLifecycle.logCompaction.interval' = '3'",
        inserts=7,
    )
    assert len(wait_for_compactions(policy, 2)) >= 2
    policy_rows = our_rows(spark, policy)
    assert len(policy_rows) == 14

    # Stock delta-spark (with and without its use of compactions) and delta-rs agree.
    stock = stock_rows([manual, policy], tmp_path)
    for use in ("true", "false"):
        assert stock[use][str(manual)] == before, use
        assert stock[use][str(policy)] == policy_rows, use
    assert delta_rs_rows(manual) == before
    assert delta_rs_rows(policy) == policy_rows

    # With the compaction files gone, every reader still reads the same rows.
    for path in (manual, policy):
        for name in compactions(path):
            (log_dir(path) / name).unlink()
    stock = stock_rows([manual, policy], tmp_path)
    assert stock["true"][str(manual)] == before
    assert stock["true"][str(policy)] == policy_rows
    assert our_rows(spark, manual) == before
    assert delta_rs_rows(policy) == policy_rows


def age_log(path: Path, through: int, hours: float) -> None:
    """Make the log files of versions up to ``through`` look ``hours`` old, in version order."""
    base = time.time() - hours * 3600
    for f in log_dir(path).iterdir():
        if f.name[:20].isdigit() and int(f.name[:20]) <= through:
            stamp = base + int(f.name[:20])
            os.utime(f, (stamp, stamp))


def test_clean_log(spark: SparkSession, tmp_path: Path) -> None:
    path = tmp_path / "cleaned"
    make_table(spark, path, "'delta.checkpointInterval' = '3'", inserts=7)
    before = our_rows(spark, path)
    age_log(path, through=6, hours=48)
    listing = sorted(os.listdir(log_dir(path)))
    table = LifecycleTable.for_path(spark, str(path))

    plan = table.clean_log(retain_hours=24, dry_run=True)
    assert plan.dry_run and plan.files and not plan.kept
    assert sorted(os.listdir(log_dir(path))) == listing
    assert [f.version for f in plan.files if f.kind == "commit"] == list(range(6))
    assert [f.version for f in plan.files if f.kind == "checkpoint"] == [3]

    done = table.clean_log(retain_hours=24)
    assert [f.path for f in done.deleted] == [f.path for f in plan.deleted]
    assert done.bytes_deleted == plan.bytes_deleted > 0
    assert not (log_dir(path) / f"{0:020d}.json").exists()
    assert (log_dir(path) / f"{6:020d}.checkpoint.parquet").exists()
    assert our_rows(spark, path) == before
    assert stock_rows([path], tmp_path)["true"][str(path)] == before
    assert delta_rs_rows(path) == before
    assert table.clean_log(retain_hours=24).files == ()


def test_bad_input(spark: SparkSession, tmp_path: Path) -> None:
    path = tmp_path / "bad"
    make_table(spark, path, "'delta.checkpointInterval' = '100'", inserts=4)
    table = LifecycleTable.for_path(spark, str(path))
    with pytest.raises(InvalidCompactionRangeError):
        table.compact_log(3, 3)
    with pytest.raises(InvalidCompactionRangeError) as too_far:
        table.compact_log(0, 999)
    assert "latest version of the table is 4" in too_far.value.message

    planted = log_dir(path) / f"{1:020d}.{3:020d}.compacted.json"
    planted.write_bytes(b"")
    with pytest.raises(CompactionConflictError) as conflict:
        table.compact_log(1, 3)
    assert "delete it" in conflict.value.message
    assert planted.stat().st_size == 0
    # Readers ignore the empty file.
    assert len(our_rows(spark, path)) == 8

    for bad in ((1, None), (None, 2), (-1, 2)):
        with pytest.raises(ValueError):
            table.compact_log(*bad)
    for hours in (-1, True, 1.5):
        with pytest.raises(ValueError):
            table.clean_log(retain_hours=hours)  # type: ignore[arg-type]

    nowhere = LifecycleTable.for_path(spark, str(tmp_path / "not-a-table"))
    with pytest.raises(NotADeltaTableError):
        nowhere.compact_log()
    with pytest.raises(NotADeltaTableError):
        nowhere.clean_log(retain_hours=1)
    shutil.rmtree(path)
