"""ALTER TABLE … CHECKPOINT and LifecycleTable.checkpoint() end to end, through the installed
wheel: a checkpoint written from the one before it, by name and by path, for classic,
multi-part and V2 checkpoints; DRY RUN writes nothing; and the readers this project did not
write (stock delta-spark without the extension, delta-rs) read every table as before, also
after CLEAN LOG deleted the history before the new checkpoint.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import pytest
from deltalake import DeltaTable
from pyspark.sql import SparkSession

from stock_session import run_stock_script
from table_helpers import age_log, files_of, ids, latest_version
from delta_lifecycle import CheckpointResult, LifecycleTable
from delta_lifecycle.results import CHECKPOINT_COLUMNS

#: The kinds of checkpoint: the table properties, and the session settings of delta-spark's
#: first checkpoint, that give each.
KINDS: Dict[str, Tuple[str, Dict[str, str]]] = {
    "classic": ("", {}),
    "multi-part": ("", {"spark.databricks.delta.checkpoint.partSize": "3"}),
    "v2": (", 'delta.checkpointPolicy' = 'v2'", {"spark.databricks.delta.checkpoint.partSize": "4"}),
}

#: The documented column types of CHECKPOINT (docs/sql-reference.md).
CHECKPOINT_TYPES = [
    "bigint", "bigint", "string", "string", "string", "int", "array<string>", "array<string>",
    "array<string>", "bigint", "bigint", "bigint", "string",
]


def changes(spark: SparkSession, table: str, start: int) -> None:
    """Appends, a DELETE, an OPTIMIZE, another append."""
    for i in range(3):
        spark.sql(f"INSERT INTO {table} SELECT id FROM range({start + i * 10}, {start + i * 10 + 10})")
    spark.sql(f"DELETE FROM {table} WHERE id % 7 = 0")
    spark.sql(f"OPTIMIZE {table}")
    spark.sql(f"INSERT INTO {table} VALUES ({start + 100})")


def table_of(spark: SparkSession, path: Path, kind: str) -> str:
    """A table of ``kind`` at ``path``, checkpointed in full by delta-spark, then changed;
    returns its SQL name. No deletion vectors, which delta-rs does not read (the Scala suite
    covers them)."""
    properties, session = KINDS[kind]
    table = f"delta.`{path}`"
    spark.sql(
        f"CREATE TABLE {table} (id BIGINT) USING delta TBLPROPERTIES ("
        f"'delta.checkpointInterval' = '1000'{properties})"
    )
    spark.sql(f"INSERT INTO {table} SELECT id FROM range(0, 60, 1, 6)")
    for key, value in session.items():
        spark.conf.set(key, value)
    try:
        first = LifecycleTable.for_path(spark, str(path)).checkpoint()
    finally:
        for key in session:
            spark.conf.unset(key)
    assert first.status == "written in full", first
    assert first.reason == "the table has no checkpoint before this version to start from"
    changes(spark, table, 1000)
    return table


@pytest.fixture(scope="module")
def written(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Dict[str, Tuple[Path, CheckpointResult]]:
    """One table of each kind, checkpointed incrementally: its path and the result."""
    out = {}
    for kind in KINDS:
        path = tmp_path_factory.mktemp("checkpoint") / kind
        table_of(spark, path, kind)
        out[kind] = (path, LifecycleTable.for_path(spark, str(path)).checkpoint())
    return out


@pytest.mark.parametrize("kind", list(KINDS))
def test_the_checkpoint_is_written_from_the_earlier_one(written: Dict[str, Tuple[Path, CheckpointResult]], kind: str) -> None:
    path, result = written[kind]
    assert result.status == "written", result
    assert result.kind == kind
    assert result.version == latest_version(path)
    assert result.base_version is not None and result.base_version < result.version
    assert result.commits == result.version - result.base_version
    # The DELETE and OPTIMIZE touch every file of these small tables (one row group each):
    # what is reused is the Scala suite's to show (IncrementalCheckpointSuite).
    assert result.reused_bytes + result.rewritten_bytes > 0, result
    assert result.written and result.written_bytes > 0
    names = set(os.listdir(path / "_delta_log")) | set(os.listdir(path / "_delta_log" / "_sidecars")
                                                       if (path / "_delta_log" / "_sidecars").exists() else [])
    assert all(Path(f).name in names for f in result.written), (result.written, names)
    last = json.loads((path / "_delta_log" / "_last_checkpoint").read_text())
    assert last["version"] == result.version


def stock_ids(paths: Dict[str, Path]) -> Dict[str, List[int]]:
    """The ids of each table, read by stock delta-spark (no extension) in a subprocess."""
    return run_stock_script(
        """
    out = {}
    for kind, path in json.loads(sys.argv[1]).items():
        out[kind] = sorted(int(r[0]) for r in spark.read.format("delta").load(path).select("id").collect())
    emit(out)
""",
        [json.dumps({kind: str(path) for kind, path in paths.items()})],
    )


def delta_rs_ids(path: Path) -> Optional[List[int]]:
    """The ids delta-rs reads, or None for a table with v2Checkpoint, which it refuses (as it
    refuses delta-spark's own V2 checkpoints)."""
    try:
        rows = DeltaTable(str(path)).to_pyarrow_table().column("id").to_pylist()
    except Exception as e:
        assert "v2Checkpoint" in str(e), e
        return None
    return sorted(int(v) for v in rows)


def test_stock_delta_spark_and_delta_rs_read_the_same(spark: SparkSession, written: Dict[str, Tuple[Path, CheckpointResult]]) -> None:
    expected = {kind: ids(spark, path) for kind, (path, _) in written.items()}
    stock = stock_ids({kind: path for kind, (path, _) in written.items()})
    assert {kind: stock[kind] for kind in expected} == expected
    for kind, (path, _) in written.items():
        assert delta_rs_ids(path) == (None if kind == "v2" else expected[kind]), kind


def test_a_dry_run_writes_nothing(spark: SparkSession, tmp_path: Path) -> None:
    path = tmp_path / "dry"
    table = table_of(spark, path, "classic")
    before = files_of(path)
    plan = LifecycleTable.for_path(spark, str(path)).checkpoint(dry_run=True)
    assert plan.status == "would write"
    assert plan.written == () and plan.written_bytes == 0
    assert plan.reused or plan.rewritten
    assert files_of(path) == before
    assert spark.sql(f"ALTER TABLE {table} CHECKPOINT").first()["status"] == "written"
    again = spark.sql(f"ALTER TABLE {table} CHECKPOINT DRY RUN").first()
    assert again["status"] == "exists"


def test_by_name_in_the_metastore(hive_spark: SparkSession) -> None:
    hive_spark.sql(
        "CREATE TABLE visits (id BIGINT) USING delta TBLPROPERTIES ('delta.checkpointInterval' = '1000')"
    )
    hive_spark.sql("INSERT INTO visits SELECT id FROM range(50)")
    assert hive_spark.sql("ALTER TABLE visits CHECKPOINT").first()["status"] == "written in full"
    changes(hive_spark, "visits", 500)
    result = LifecycleTable.for_name(hive_spark, "visits").checkpoint()
    assert (result.status, result.table) == ("written", "visits")
    expected = [i for i in [*range(50), *range(500, 530)] if i % 7] + [600]
    assert sorted(r[0] for r in hive_spark.table("visits").collect()) == expected


def test_result_columns_and_types(spark: SparkSession, written: Dict[str, Tuple[Path, CheckpointResult]]) -> None:
    path, _ = written["classic"]
    df = spark.sql(f"ALTER TABLE delta.`{path}` CHECKPOINT DRY RUN")
    assert tuple(df.columns) == CHECKPOINT_COLUMNS
    assert [f.dataType.simpleString() for f in df.schema.fields] == CHECKPOINT_TYPES


def test_readers_agree_after_clean_log(spark: SparkSession, written: Dict[str, Tuple[Path, CheckpointResult]]) -> None:
    """CLEAN LOG deletes the commits and the checkpoint before the new one, so every reader
    must start from it; the sidecars a V2 checkpoint shares with the old one stay."""
    expected = {}
    for kind, (path, result) in written.items():
        spark.sql(f"INSERT INTO delta.`{path}` VALUES (9999)")
        age_log(path, result.version, hours=24 * 60)
        spark.sql(f"ALTER TABLE delta.`{path}` CLEAN LOG RETAIN 1 HOURS")
        log = os.listdir(path / "_delta_log")
        assert f"{result.base_version:020d}.json" not in log, (kind, sorted(log))
        assert not any(n.startswith(f"{result.base_version:020d}.checkpoint") for n in log), kind
        expected[kind] = ids(spark, path)
        assert 9999 in expected[kind]
        assert delta_rs_ids(path) == (None if kind == "v2" else expected[kind]), kind
    stock = stock_ids({kind: path for kind, (path, _) in written.items()})
    assert {kind: stock[kind] for kind in expected} == expected
