"""COMPACT LOG, the post-commit policy and CLEAN LOG end to end, through SQL and
LifecycleTable. Every table is also read by clients this project did not write: stock
delta-spark in a subprocess without the extension (with its use of compactions on and off)
and delta-rs, with the compaction files in place and deleted.

Starting a Spark JVM is the slow part, so the module fixtures build every table first and
one subprocess (the ``stock`` fixture) reads them all.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Sequence, Tuple, Type

import pytest
from deltalake import DeltaTable
from pyspark.errors import PySparkException
from pyspark.sql import Row, SparkSession

from spark_line import pyspark_error
from stock_session import run_stock_script
from table_helpers import age_log, copy_testdata
from deltalog import local_path
from delta_lifecycle import CleanupResult, CompactionResult, LifecycleTable, errors
from delta_lifecycle.errors import (
    CompactionConflictError,
    DeltaLifecycleError,
    InvalidArgumentError,
    InvalidCompactionRangeError,
    NotADeltaTableError,
    UnsupportedProtocolError,
    convert_exception,
)
from delta_lifecycle.results import CLEANUP_COLUMNS, COMPACTION_COLUMNS
from delta_lifecycle.tables import quote_path

Rows = List[List[Any]]

#: Checkpoints rare enough that no checkpoint lands in these tests' commits.
RARE_CHECKPOINTS = "'delta.checkpointInterval' = '100'"
#: For tables compacted by hand: turns the post-commit policy's compactions off (an interval
#: below 2 does), so that it cannot compact the same commits in the background first.
NO_POLICY = "'deltaLifecycle.logCompaction.interval' = '0'"
#: The policy compacts every this many commits in the ``policy`` table.
POLICY_INTERVAL = 3
#: How long the ``policy`` fixture waits for the background thread.
POLICY_TIMEOUT_SECONDS = 30.0

# The documented column types, and the one nullable column, of each statement.
COMPACTION_TYPES = [
    "bigint", "bigint", "string", "string", "int", "int", "bigint", "bigint", "string"
]
CLEANUP_TYPES = ["string", "string", "bigint", "bigint", "string", "string", "string"]


def log_dir(path: Path) -> Path:
    return path / "_delta_log"


def compactions(path: Path) -> List[str]:
    """The ``<x>.<y>.compacted.json`` files in the log, by name."""
    return sorted(p.name for p in log_dir(path).glob("*.compacted.json"))


def compaction_range(name: str) -> Tuple[int, int]:
    start, end = name.split(".")[:2]
    return int(start), int(end)


def covered_through(names: Sequence[str]) -> int:
    """The last version that a chain of compactions starting at version 0 covers; -1 if none
    starts at 0. Where two start at the same version the longer one continues the chain."""
    end = -1
    for start, stop in sorted((compaction_range(n) for n in names), key=lambda r: (r[0], -r[1])):
        if start == end + 1:
            end = stop
    return end


def commit_file(path: Path, version: int) -> Path:
    return log_dir(path) / f"{version:020d}.json"


def our_rows(spark: SparkSession, path: Path) -> Rows:
    return sorted(list(r) for r in spark.read.format("delta").load(str(path)).collect())


def delta_rs_rows(path: Path) -> Rows:
    table = DeltaTable(str(path)).to_pyarrow_table()
    columns = table.column_names
    return sorted([row[c] for c in columns] for row in table.to_pylist())


def make_table(spark: SparkSession, path: Path, properties: str, inserts: int) -> None:
    """Version 0 creates the table; versions 1 to ``inserts`` insert two rows each."""
    t = quote_path(str(path))
    spark.sql(f"CREATE TABLE {t} (id BIGINT, s STRING) USING delta TBLPROPERTIES ({properties})")
    for i in range(inserts):
        spark.sql(f"INSERT INTO {t} VALUES ({i}, 'v{i}'), ({i + 100}, 'w{i}')")


@dataclass(frozen=True)
class Compacted:
    """The table the ``compacted`` fixture compacts by hand, and what each call returned."""

    path: Path
    latest: int
    rows: Rows
    pending: CompactionResult
    repeated: CompactionResult
    same_range: CompactionResult
    same_range_sql: Tuple[Row, ...]
    covered: CompactionResult


@pytest.fixture(scope="module")
def compacted(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Compacted:
    """Eight inserts and a delete (versions 0 to 9, no checkpoint), then ``compact_log()``,
    ``compact_log()`` again, the range just written once more, by wrapper and by SQL, and
    a range inside it."""
    path = tmp_path_factory.mktemp("compacted") / "t"
    make_table(spark, path, f"{RARE_CHECKPOINTS}, {NO_POLICY}", inserts=8)
    spark.sql(f"DELETE FROM {quote_path(str(path))} WHERE id IN (3, 105)")
    rows = our_rows(spark, path)
    table = LifecycleTable.for_path(spark, str(path))

    pending = table.compact_log()
    repeated = table.compact_log()
    same_range = table.compact_log(pending.start_version, pending.end_version)
    sql = spark.sql(
        f"ALTER TABLE {table.identifier} COMPACT LOG "
        f"FROM VERSION {pending.start_version} TO VERSION {pending.end_version}"
    ).collect()
    covered = table.compact_log(2, pending.end_version)
    return Compacted(path, 9, rows, pending, repeated, same_range, tuple(sql), covered)


@dataclass(frozen=True)
class PolicyTable:
    """The table whose compactions the post-commit policy wrote."""

    path: Path
    latest: int
    rows: Rows
    compactions: Tuple[str, ...]


@pytest.fixture(scope="module")
def policy(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> PolicyTable:
    """Seven inserts (versions 0 to 7) into a table that compacts every three commits.

    The policy runs on a background thread after each commit, so this polls the log until
    the policy has caught up (compactions exist and fewer than three commits are left after
    their chain); from then on it has nothing left to do and the log stays as it is.
    """
    path = tmp_path_factory.mktemp("policy") / "t"
    latest = 7
    # A checkpoint interval of 9 (no checkpoint before version 9) keeps one level of compactions:
    # levels of wider ones are tests/test_log_levels.py's.
    make_table(
        spark,
        path,
        f"'delta.checkpointInterval' = '9', 'deltaLifecycle.logCompaction.interval' = '{POLICY_INTERVAL}'",
        inserts=latest,
    )
    deadline = time.monotonic() + POLICY_TIMEOUT_SECONDS
    found = compactions(path)
    while time.monotonic() < deadline:
        if found and latest - covered_through(found) < POLICY_INTERVAL:
            break
        time.sleep(0.2)
        found = compactions(path)
    return PolicyTable(path, latest, our_rows(spark, path), tuple(found))


@dataclass(frozen=True)
class Cleaned:
    """The table the ``cleaned`` fixture cleans, with the log before and after each step."""

    path: Path
    latest: int
    rows: Rows
    listing: Tuple[str, ...]
    default_retention: CleanupResult
    plan: CleanupResult
    plan_sql: CleanupResult
    listing_after_plan: Tuple[str, ...]
    done: CleanupResult
    again: CleanupResult


def listing(path: Path) -> Tuple[str, ...]:
    return tuple(sorted(os.listdir(log_dir(path))))


@pytest.fixture(scope="module")
def cleaned(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Cleaned:
    """Seven inserts (versions 0 to 7) with checkpoints at 3 and 6; the log files of versions
    0 to 6 are made 48 hours old. Then: ``clean_log()`` with the table's 30-day retention
    (dry run), a 24-hour dry run by wrapper and by SQL, the cleanup, and a second cleanup."""
    path = tmp_path_factory.mktemp("cleaned") / "t"
    make_table(spark, path, "'delta.checkpointInterval' = '3'", inserts=7)
    rows = our_rows(spark, path)
    age_log(path, through=6, hours=48)
    before = listing(path)
    table = LifecycleTable.for_path(spark, str(path))

    default_retention = table.clean_log(dry_run=True)
    plan = table.clean_log(retain_hours=24, dry_run=True)
    plan_sql = CleanupResult.from_rows(
        spark.sql(f"ALTER TABLE {table.identifier} CLEAN LOG RETAIN 24 HOURS DRY RUN").collect(),
        dry_run=True,
    )
    after_plan = listing(path)
    done = table.clean_log(retain_hours=24)
    again = table.clean_log(retain_hours=24)
    return Cleaned(
        path, 7, rows, before, default_retention, plan, plan_sql, after_plan, done, again
    )


@pytest.fixture(scope="module")
def without_compactions(
    compacted: Compacted, policy: PolicyTable, tmp_path_factory: pytest.TempPathFactory
) -> Dict[Path, Path]:
    """Copies of the compacted tables with their ``.compacted.json`` files deleted, by the
    original's path."""
    root = tmp_path_factory.mktemp("without_compactions")
    copies: Dict[Path, Path] = {}
    for name, original in (("compacted", compacted.path), ("policy", policy.path)):
        copy = root / name
        shutil.copytree(original, copy)
        for file in compactions(copy):
            (log_dir(copy) / file).unlink()
        copies[original] = copy
    return copies


STOCK_READER = """
    from delta.tables import DeltaTable

    paths = json.loads(sys.argv[1])
    out = {}
    for use in ("true", "false"):
        spark.conf.set("spark.databricks.delta.deltaLog.minorCompaction.useForReads", use)
        spark.sparkContext._jvm.org.apache.spark.sql.delta.DeltaLog.clearCache()
        out[use] = {
            p: {
                "rows": sorted(list(r) for r in spark.read.format("delta").load(p).collect()),
                "version": DeltaTable.forPath(spark, p).history(1).collect()[0]["version"],
            }
            for p in paths
        }
    emit(out)
    spark.stop()
"""

#: What stock delta-spark read: by ``useForReads`` setting ("true"/"false"), then by path,
#: then "rows" and "version".
StockReads = Dict[str, Dict[str, Dict[str, Any]]]


@pytest.fixture(scope="module")
def stock(
    compacted: Compacted,
    policy: PolicyTable,
    cleaned: Cleaned,
    without_compactions: Dict[Path, Path],
) -> StockReads:
    """Every table of this module, read by stock delta-spark in one subprocess session that
    does not load the extension, once with compactions used for reads and once without."""
    paths = [compacted.path, policy.path, cleaned.path, *without_compactions.values()]
    result = run_stock_script(STOCK_READER, [json.dumps([str(p) for p in paths])])
    return {"true": result["true"], "false": result["false"]}


def assert_readers_agree(
    spark: SparkSession, stock: StockReads, path: Path, rows: Rows, latest: int
) -> None:
    """This session, stock delta-spark (compactions used and not) and delta-rs all read
    ``rows`` at version ``latest``."""
    assert our_rows(spark, path) == rows
    for use in ("true", "false"):
        assert stock[use][str(path)] == {"rows": rows, "version": latest}, f"useForReads={use}"
    assert delta_rs_rows(path) == rows
    assert DeltaTable(str(path)).version() == latest


def test_result_schemas(spark: SparkSession, compacted: Compacted, cleaned: Cleaned) -> None:
    # Commands run eagerly: this compaction finds nothing to do, this cleanup is a dry run.
    for statement, columns, types, nullable in (
        (f"ALTER TABLE {quote_path(str(compacted.path))} COMPACT LOG",
         COMPACTION_COLUMNS, COMPACTION_TYPES, {"file"}),
        (f"ALTER TABLE {quote_path(str(cleaned.path))} CLEAN LOG RETAIN 24 HOURS DRY RUN",
         CLEANUP_COLUMNS, CLEANUP_TYPES, {"reason"}),
    ):
        fields = spark.sql(statement).schema.fields
        assert tuple(f.name for f in fields) == columns, statement
        assert [f.dataType.simpleString() for f in fields] == types, statement
        assert {f.name for f in fields if f.nullable} == nullable, statement


def test_compact_log_writes_the_pending_commits(compacted: Compacted) -> None:
    """Without a checkpoint, the pending range starts at version 0."""
    result = compacted.pending
    assert isinstance(result, CompactionResult) and result.written
    assert (result.start_version, result.end_version, result.commits) == (0, compacted.latest, 10)
    name = f"{0:020d}.{compacted.latest:020d}.compacted.json"
    assert compactions(compacted.path) == [name]

    assert result.file is not None and result.file.startswith("file:")
    file = local_path(result.file)
    assert file == log_dir(compacted.path) / name
    assert file.stat().st_size == result.bytes_written
    lines = [json.loads(line) for line in file.read_text().splitlines() if line.strip()]
    assert result.actions == len(lines) > 0
    assert not any("commitInfo" in a for a in lines)
    assert result.input_bytes == sum(
        commit_file(compacted.path, v).stat().st_size for v in range(compacted.latest + 1)
    )


def test_compact_log_again(compacted: Compacted) -> None:
    repeated = compacted.repeated
    assert repeated.status == "nothing-to-compact" and not repeated.written
    assert repeated.file is None and repeated.bytes_written == 0

    same = compacted.same_range
    assert same.status == "exists" and not same.written
    assert (same.start_version, same.end_version) == (0, compacted.latest)
    assert same.file == compacted.pending.file and same.bytes_written == 0
    # The statement returns exactly one row, the one the wrapper turns into its result.
    assert len(compacted.same_range_sql) == 1
    assert CompactionResult.from_row(compacted.same_range_sql[0]) == same
    assert len(compactions(compacted.path)) == 1


def test_compact_log_of_a_covered_range_writes_nothing(compacted: Compacted) -> None:
    """2..9 when 0..9 is already compacted: the wider file stands in for it."""
    covered = compacted.covered
    assert covered.status == "covered" and not covered.written
    assert (covered.start_version, covered.end_version, covered.commits) == (2, 9, 8)
    assert covered.file == compacted.pending.file
    assert (covered.actions, covered.bytes_written) == (0, 0)
    assert compactions(compacted.path) == [f"{0:020d}.{compacted.latest:020d}.compacted.json"]


def test_from_row_refuses_an_unknown_status(compacted: Compacted) -> None:
    fields = compacted.same_range_sql[0].asDict()
    with pytest.raises(ValueError, match="status 'merged'.*'covered'"):
        CompactionResult.from_row(Row(**{**fields, "status": "merged"}))


def test_policy_compacts_after_commits(policy: PolicyTable) -> None:
    assert policy.compactions, f"no compaction within {POLICY_TIMEOUT_SECONDS} s"
    ranges = sorted(compaction_range(n) for n in policy.compactions)
    assert ranges[0][0] == 0
    assert all(end - start + 1 >= POLICY_INTERVAL for start, end in ranges), ranges
    assert all(a[1] < b[0] for a, b in zip(ranges, ranges[1:])), ranges
    assert policy.latest - covered_through(policy.compactions) < POLICY_INTERVAL, ranges
    assert len(policy.rows) == 2 * policy.latest


def test_readers_agree_with_compactions(
    spark: SparkSession, compacted: Compacted, policy: PolicyTable, stock: StockReads
) -> None:
    assert compactions(compacted.path) and compactions(policy.path)
    assert_readers_agree(spark, stock, compacted.path, compacted.rows, compacted.latest)
    assert_readers_agree(spark, stock, policy.path, policy.rows, policy.latest)


def test_readers_agree_without_compactions(
    spark: SparkSession,
    compacted: Compacted,
    policy: PolicyTable,
    without_compactions: Dict[Path, Path],
    stock: StockReads,
) -> None:
    for table in (compacted, policy):
        copy = without_compactions[table.path]
        assert compactions(copy) == []
        assert_readers_agree(spark, stock, copy, table.rows, table.latest)


def test_clean_log_default_retention_keeps_everything(cleaned: Cleaned) -> None:
    """Nothing is older than the table's default 30-day delta.logRetentionDuration."""
    assert cleaned.default_retention.files == ()


def test_clean_log_dry_run(cleaned: Cleaned) -> None:
    plan = cleaned.plan
    assert plan.dry_run and plan.files and not plan.kept
    assert cleaned.listing_after_plan == cleaned.listing
    assert all(f.action == "to delete" and f.reason is None for f in plan.files)
    assert [f.version for f in plan.files if f.kind == "commit"] == list(range(6))
    assert [f.version for f in plan.files if f.kind == "checkpoint"] == [3]
    assert {f.kind for f in plan.files} <= {"commit", "checksum", "checkpoint"}
    for f in plan.files:
        assert local_path(f.path).parent == log_dir(cleaned.path)
        assert f.path.split("/")[-1] in cleaned.listing, f.path
    assert plan.bytes_deleted == sum(f.size_in_bytes for f in plan.files) > 0
    assert cleaned.plan_sql == plan


def test_clean_log_deletes_the_plan(cleaned: Cleaned) -> None:
    done = cleaned.done
    assert not done.dry_run and not done.kept
    assert all(f.action == "deleted" for f in done.files)
    assert [f.path for f in done.deleted] == [f.path for f in cleaned.plan.deleted]
    assert done.bytes_deleted == cleaned.plan.bytes_deleted
    assert not any(local_path(f.path).exists() for f in done.files)
    assert not commit_file(cleaned.path, 0).exists()
    for kept in (
        commit_file(cleaned.path, 6),
        commit_file(cleaned.path, 7),
        log_dir(cleaned.path) / f"{6:020d}.checkpoint.parquet",
    ):
        assert kept.exists(), kept
    assert cleaned.again.files == ()


def test_cleaned_table_reads_the_same(
    spark: SparkSession, cleaned: Cleaned, stock: StockReads
) -> None:
    assert_readers_agree(spark, stock, cleaned.path, cleaned.rows, cleaned.latest)


@pytest.fixture(scope="module")
def small(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Five inserts, versions 0 to 5, no checkpoint."""
    path = tmp_path_factory.mktemp("small") / "t"
    make_table(spark, path, f"{RARE_CHECKPOINTS}, {NO_POLICY}", inserts=5)
    return path


def test_invalid_ranges(small: Path, cleaned: Cleaned, spark: SparkSession) -> None:
    table = LifecycleTable.for_path(spark, str(small))
    for start, end in ((5, 5), (4, 2)):
        with pytest.raises(InvalidCompactionRangeError) as caught:
            table.compact_log(start, end)
        assert caught.value.condition == "DELTA_LIFECYCLE_INVALID_COMPACTION_RANGE"
    with pytest.raises(InvalidCompactionRangeError) as too_far:
        table.compact_log(0, 999)
    assert "latest version of the table is 5" in too_far.value.message
    assert compactions(small) == []

    # The cleaned table no longer holds commits 0 to 5.
    with pytest.raises(InvalidCompactionRangeError) as gone:
        LifecycleTable.for_path(spark, str(cleaned.path)).compact_log(0, cleaned.latest)
    assert "no longer holds" in gone.value.message
    assert compactions(cleaned.path) == []


def test_conflicts(small: Path, spark: SparkSession) -> None:
    table = LifecycleTable.for_path(spark, str(small))
    rows = our_rows(spark, small)
    planted = log_dir(small) / f"{1:020d}.{2:020d}.compacted.json"
    planted.write_bytes(b"")
    with pytest.raises(CompactionConflictError) as damaged:
        table.compact_log(1, 2)
    assert damaged.value.condition == "DELTA_LIFECYCLE_COMPACTION_CONFLICT"
    assert "delete it" in damaged.value.message
    assert planted.stat().st_size == 0
    # Readers ignore the empty file.
    assert our_rows(spark, small) == rows
    assert delta_rs_rows(small) == rows

    assert table.compact_log(3, 5).written
    for start, end in ((2, 4), (1, 3)):  # partly over 3..5
        with pytest.raises(CompactionConflictError) as overlap:
            table.compact_log(start, end)
        assert "overlap" in overlap.value.message
    inside = table.compact_log(4, 5)
    assert inside.status == "covered" and inside.file is not None
    assert inside.file.endswith(f"{3:020d}.{5:020d}.compacted.json")
    assert compactions(small) == [planted.name, f"{3:020d}.{5:020d}.compacted.json"]
    assert our_rows(spark, small) == rows


@pytest.mark.parametrize(
    "start, end", [(1, None), (None, 2), (-1, 2), (1, -2), (True, 2), (1, 2.0)]
)
def test_bad_compaction_arguments_fail_before_sql(
    spark: SparkSession, tmp_path: Path, start: Any, end: Any
) -> None:
    # Were the statement run, the missing table would raise NotADeltaTableError instead.
    table = LifecycleTable.for_path(spark, str(tmp_path / "not-a-table"))
    with pytest.raises(ValueError):
        table.compact_log(start, end)


@pytest.mark.parametrize("hours", [-1, True, 1.5, "24"])
def test_bad_retention_fails_before_sql(spark: SparkSession, tmp_path: Path, hours: Any) -> None:
    table = LifecycleTable.for_path(spark, str(tmp_path / "not-a-table"))
    with pytest.raises(ValueError):
        table.clean_log(retain_hours=hours)
    with pytest.raises(ValueError):
        table.clean_log(retain_hours=hours, dry_run=True)


def test_not_a_delta_table(spark: SparkSession, tmp_path: Path) -> None:
    parquet = tmp_path / "parquet"
    spark.range(3).write.parquet(str(parquet))
    for path in (tmp_path / "missing", parquet):
        table = LifecycleTable.for_path(spark, str(path))
        for call in (
            table.compact_log,
            lambda: table.compact_log(0, 1),
            table.clean_log,
            lambda: table.clean_log(retain_hours=1, dry_run=True),
        ):
            with pytest.raises(NotADeltaTableError) as caught:
                call()
            assert caught.value.condition == "DELTA_LIFECYCLE_NOT_A_DELTA_TABLE"
            assert isinstance(caught.value.__cause__, PySparkException)


@pytest.mark.parametrize(
    "cls, condition",
    [
        (InvalidCompactionRangeError, "DELTA_LIFECYCLE_INVALID_COMPACTION_RANGE"),
        (CompactionConflictError, "DELTA_LIFECYCLE_COMPACTION_CONFLICT"),
        (UnsupportedProtocolError, "DELTA_LIFECYCLE_UNSUPPORTED_PROTOCOL"),
        (InvalidArgumentError, "DELTA_LIFECYCLE_INVALID_ARGUMENT"),
    ],
)
def test_new_conditions_are_typed(cls: Type[DeltaLifecycleError], condition: str) -> None:
    assert cls.CONDITION == condition
    assert cls.__name__ in errors.__all__
    converted = convert_exception(pyspark_error("why", condition))
    assert type(converted) is cls
    assert converted.condition == condition and converted.message == "why"


@pytest.mark.parametrize(
    "name",
    [
        "delta-rs/checkpoints",
        "delta-rs/cdf-table-with-cdc-and-dvs",
        "delta-rs/delta-0.8.0-partitioned",
    ],
)
def test_tables_written_by_other_clients(spark: SparkSession, tmp_path: Path, name: str) -> None:
    """Shared test tables (written by delta-rs and older delta-spark; some lack their data
    files) compact, and delta-spark and delta-rs still list the same files afterwards."""
    path = copy_testdata(name, tmp_path)
    t = quote_path(str(path))

    def detail() -> Tuple[int, int]:
        row = spark.sql(f"DESCRIBE DETAIL {t}").collect()[0]
        return int(row["numFiles"]), int(row["sizeInBytes"])

    before, rs_before = detail(), sorted(DeltaTable(str(path)).file_uris())
    result = LifecycleTable.for_path(spark, str(path)).compact_log()
    assert result.status in ("written", "nothing-to-compact")
    if result.written:
        assert compactions(path)
    spark.sparkContext._jvm.org.apache.spark.sql.delta.DeltaLog.clearCache()
    assert detail() == before
    assert sorted(DeltaTable(str(path)).file_uris()) == rs_before
    assert len(rs_before) == before[0]


def log_file_names(path: Path) -> set[str]:
    """The files in the log folder a listing sees: not its sub-folders, not hidden files."""
    return {n for n in listing(path) if not n.startswith(".") and (log_dir(path) / n).is_file()}


def test_log_files_lists_what_compaction_and_cleanup_left(
    spark: SparkSession, compacted: Compacted, cleaned: Cleaned
) -> None:
    """DESCRIBE LOG FILES, by wrapper and by SQL: the compaction files COMPACT LOG wrote are
    there with their ranges, and after CLEAN LOG exactly the files it did not delete are."""
    files = LifecycleTable.for_path(spark, str(compacted.path)).log_files()
    listed = {f.file: f for f in files}
    assert set(listed) == log_file_names(compacted.path)
    for name in compactions(compacted.path):
        entry = listed[name]
        assert (entry.kind, entry.version, entry.end_version) == ("compaction", *compaction_range(name))
        assert entry.size == (log_dir(compacted.path) / name).stat().st_size
    assert [f.version for f in files if f.kind == "commit"] == list(range(compacted.latest + 1))

    after_cleanup = spark.sql(f"DESCRIBE LOG FILES {quote_path(str(cleaned.path))}").collect()
    names = {row["file"] for row in after_cleanup}
    deleted = {f.path.split("/")[-1] for f in cleaned.done.deleted}
    assert names == log_file_names(cleaned.path)
    assert not names & deleted
    assert min(r["version"] for r in after_cleanup if r["kind"] == "commit") == 6
