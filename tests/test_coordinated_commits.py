"""Tables whose commits go through a catalog or a commit coordinator, end to end.

Each table is made by delta-spark and then handed to an owner the way a real one would be:
a next commit, written put-if-absent, whose protocol names ``catalogManaged``,
``catalogOwned-preview`` or ``coordinatedCommits-preview``, or whose metadata names a
commit coordinator. delta-spark may refuse to open such a table; this project's log core
reads it. Every statement that writes or deletes log files must refuse with
``DELTA_LIFECYCLE_COORDINATED_TABLE``, naming the feature or property, and leave every file
of the log as it was; the statements that only read keep working.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional

import pytest
from pyspark.errors import AnalysisException
from pyspark.sql import SparkSession

from spark_errors import condition_of
from delta_lifecycle import LifecycleTable
from delta_lifecycle.errors import CoordinatedTableError
from delta_lifecycle.tables import quote_path

CONDITION = "DELTA_LIFECYCLE_COORDINATED_TABLE"
COORDINATOR_KEY = "delta.coordinatedCommits.commitCoordinator-preview"


@dataclass(frozen=True)
class Owner:
    """One way a table names the owner of its commits: ``name`` is what the error names."""

    name: str
    protocol: Optional[Dict[str, Any]]
    properties: Dict[str, str] = field(default_factory=dict)


def _catalog_managed(feature: str) -> Dict[str, Any]:
    # As delta-spark writes it: the feature needs in-commit timestamps and the vacuum check.
    return {
        "minReaderVersion": 3,
        "minWriterVersion": 7,
        "readerFeatures": [feature, "vacuumProtocolCheck"],
        "writerFeatures": [feature, "vacuumProtocolCheck", "inCommitTimestamp", "appendOnly",
                           "invariants"],
    }


OWNERS = [
    Owner("catalogManaged", _catalog_managed("catalogManaged")),
    Owner("catalogOwned-preview", _catalog_managed("catalogOwned-preview")),
    Owner("coordinatedCommits-preview", {
        "minReaderVersion": 1,
        "minWriterVersion": 7,
        "writerFeatures": ["coordinatedCommits-preview", "inCommitTimestamp", "appendOnly",
                           "invariants"],
    }),
    Owner(COORDINATOR_KEY, None, {
        COORDINATOR_KEY: "dynamodb",
        "delta.coordinatedCommits.commitCoordinatorConf-preview": "{}",
    }),
]


@pytest.fixture(scope="module", autouse=True)
def no_background_policy(spark: SparkSession) -> Iterator[None]:
    """The post-commit policy would compact these tables' commits in the background, while
    a test compares their logs; it has its own test in CoordinatedTableSuite."""
    spark.conf.set("spark.deltaLifecycle.logMaintenance.enabled", "false")
    yield
    spark.conf.unset("spark.deltaLifecycle.logMaintenance.enabled")


def log_files(path: Path) -> Dict[str, int]:
    """Every file under ``_delta_log`` (checksums, sidecars, staged commits too) by its path
    there, with its size."""
    log = path / "_delta_log"
    return {
        str(Path(root, name).relative_to(log)): os.path.getsize(Path(root, name))
        for root, _, names in os.walk(log)
        for name in names
    }


def latest_version(path: Path) -> int:
    return max(int(n[:20]) for n in os.listdir(path / "_delta_log")
               if n.endswith(".json") and n[:20].isdigit() and len(n) == 25)


def make_table(spark: SparkSession, path: Path) -> None:
    """Four commits of a plain table, with no checkpoint among them."""
    spark.sql(f"CREATE TABLE {quote_path(str(path))} (id BIGINT) USING delta "
              "TBLPROPERTIES ('delta.checkpointInterval' = '100')")
    for i in range(3):
        spark.sql(f"INSERT INTO {quote_path(str(path))} VALUES ({i})")


def hand_over(path: Path, owner: Owner) -> int:
    """Commit the next version of the table at ``path``, put-if-absent, with ``owner``'s
    protocol (if any) and the latest metadata plus ``owner``'s properties."""
    version = latest_version(path)
    metadata: Optional[Dict[str, Any]] = None
    for v in range(version + 1):
        with open(path / "_delta_log" / f"{v:020d}.json", encoding="utf-8") as f:
            for line in f:
                action = json.loads(line) if line.strip() else {}
                metadata = action.get("metaData", metadata)
    assert metadata is not None
    metadata = {**metadata,
                "configuration": {**metadata.get("configuration", {}), **owner.properties}}
    actions: List[Dict[str, Any]] = [
        {"commitInfo": {"timestamp": int(time.time() * 1000), "operation": "HAND OVER"}}
    ]
    if owner.protocol is not None:
        actions.append({"protocol": owner.protocol})
    actions.append({"metaData": metadata})
    with open(path / "_delta_log" / f"{version + 1:020d}.json", "x", encoding="utf-8") as f:
        f.write("".join(json.dumps(a) + "\n" for a in actions))
    return version + 1


def owned_table(spark: SparkSession, path: Path, owner: Owner) -> Path:
    make_table(spark, path)
    hand_over(path, owner)
    return path


def assert_refused(spark: SparkSession, statement: str, owner: Owner,
                   *unchanged: Path) -> None:
    """``statement`` fails with the condition, naming ``owner``, and leaves every log in
    ``unchanged`` as it was."""
    before = {p: log_files(p) for p in unchanged}
    with pytest.raises(AnalysisException) as caught:
        spark.sql(statement).collect()
    error = caught.value
    assert condition_of(error) == CONDITION, statement
    assert error.getSqlState() == "0AKDC"
    assert error.getMessageParameters()["name"] == owner.name, statement
    assert f"'{owner.name}'" in str(error)
    for p in unchanged:
        assert log_files(p) == before[p], statement


def refusing_statements(table: str, owner: Owner, scratch: Path) -> List[str]:
    """Every statement of this project that writes or deletes log files, on ``table``."""
    redirect_value = json.dumps({"Type": "Object Store", "State": "ENABLE-REDIRECT-IN-PROGRESS",
                                 "Spec": {"location": str(scratch / "elsewhere")}})
    return [
        f"ALTER TABLE {table} COMPACT LOG",
        f"ALTER TABLE {table} COMPACT LOG FROM VERSION 0 TO VERSION 2",
        f"ALTER TABLE {table} CLEAN LOG RETAIN 0 HOURS",
        # DRY RUN writes nothing, but it reports what the real run would do: refuse.
        f"ALTER TABLE {table} CLEAN LOG RETAIN 0 HOURS DRY RUN",
        f"ALTER TABLE {table} DROP FEATURE appendOnly",
        f"ALTER TABLE {table} DROP FEATURE appendOnly DRY RUN",
        f"ALTER TABLE {table} DROP FEATURE deletionVectors TRUNCATE HISTORY",
        f"ALTER TABLE {table} DROP FEATURE deletionVectors TRUNCATE HISTORY DRY RUN",
        # Even the owner's own feature: the table's owner drops it, not this project.
        f"ALTER TABLE {table} DROP FEATURE '{owner.name}'",
        f"ALTER TABLE {table} SET REDIRECT TO '{scratch / 'redirected'}'",
        f"ALTER TABLE {table} SET REDIRECT WRITER ONLY TO TABLE default.never_created",
        f"ALTER TABLE {table} UNSET REDIRECT",
        f"ALTER TABLE {table} SET TBLPROPERTIES ('delta.redirectWriterOnly' = '{redirect_value}')",
        f"ALTER TABLE {table} UNSET TBLPROPERTIES ('delta.redirectWriterOnly')",
    ]


@pytest.mark.parametrize("owner", OWNERS, ids=[o.name for o in OWNERS])
def test_every_log_writing_statement_refuses(
    spark: SparkSession, tmp_path: Path, owner: Owner
) -> None:
    path = owned_table(spark, tmp_path / "t", owner)
    for statement in refusing_statements(quote_path(str(path)), owner, tmp_path):
        assert_refused(spark, statement, owner, path)
    assert not (tmp_path / "redirected").exists()
    assert not spark.catalog.tableExists("default.never_created")


@pytest.mark.parametrize("owner", OWNERS, ids=[o.name for o in OWNERS])
def test_reading_still_works(spark: SparkSession, tmp_path: Path, owner: Owner) -> None:
    path = owned_table(spark, tmp_path / "t", owner)
    before = log_files(path)
    table = LifecycleTable.for_path(spark, str(path))

    history = table.protocol_history()
    assert [v.version for v in history] == [0, 1, 2, 3, 4]
    latest = history[-1]
    assert latest.operation == "HAND OVER"
    if owner.protocol is not None:
        assert owner.name in (latest.writer_features or ())
    rows = spark.sql(f"DESCRIBE PROTOCOL HISTORY {quote_path(str(path))}").collect()
    assert len(rows) == 5

    assert table.redirect_status() is None
    described = spark.sql(f"DESCRIBE REDIRECT {quote_path(str(path))}").collect()[0]
    assert described["state"] == "NORMAL"
    assert log_files(path) == before


def test_python_wrappers_raise_the_typed_error(spark: SparkSession, tmp_path: Path) -> None:
    owner = OWNERS[0]
    path = owned_table(spark, tmp_path / "t", owner)
    before = log_files(path)
    table = LifecycleTable.for_path(spark, str(path))
    calls: List[Callable[[], Any]] = [
        table.compact_log,
        lambda: table.compact_log(0, 2),
        lambda: table.clean_log(retain_hours=0, dry_run=True),
        lambda: table.clean_log(retain_hours=0),
        lambda: table.drop_feature("appendOnly", dry_run=True),
        lambda: table.drop_feature("appendOnly"),
        lambda: table.set_redirect(str(tmp_path / "redirected")),
        table.unset_redirect,
    ]
    for call in calls:
        with pytest.raises(CoordinatedTableError) as caught:
            call()
        assert caught.value.condition == CONDITION
        assert f"'{owner.name}'" in caught.value.message
        assert str(path) in caught.value.message
        assert isinstance(caught.value.__cause__, AnalysisException)
    assert log_files(path) == before


def test_by_name(spark: SparkSession, tmp_path: Path) -> None:
    owner = OWNERS[0]
    path = tmp_path / "named"
    spark.sql(f"CREATE TABLE coordinated_by_name (id BIGINT) USING delta LOCATION '{path}'")
    spark.sql("INSERT INTO coordinated_by_name VALUES (1)")
    hand_over(path, owner)
    table = LifecycleTable.for_name(spark, "coordinated_by_name")
    assert owner.name in (table.protocol_history()[-1].reader_features or ())
    for statement in refusing_statements("coordinated_by_name", owner, tmp_path)[:6]:
        assert_refused(spark, statement, owner, path)
    with pytest.raises(CoordinatedTableError) as caught:
        table.drop_feature("appendOnly")
    assert "coordinated_by_name" in caught.value.message


def test_set_redirect_refuses_an_owned_destination(spark: SparkSession, tmp_path: Path) -> None:
    """A location, or the location a TO TABLE target would get, that holds an owned table."""
    owner = OWNERS[0]
    source = tmp_path / "source"
    make_table(spark, source)
    destination = owned_table(spark, tmp_path / "destination", owner)
    assert_refused(spark, f"ALTER TABLE {quote_path(str(source))} SET REDIRECT TO '{destination}'",
                   owner, source, destination)

    warehouse = Path(spark.conf.get("spark.sql.warehouse.dir").removeprefix("file:"))
    target = owned_table(spark, warehouse / "owned_target", owner)
    assert_refused(spark,
                   f"ALTER TABLE {quote_path(str(source))} SET REDIRECT TO TABLE default.owned_target",
                   owner, source, target)
    assert not spark.catalog.tableExists("default.owned_target")
    assert LifecycleTable.for_path(spark, str(source)).redirect_status() is None


def test_unset_redirect_refuses_an_owned_destination(spark: SparkSession, tmp_path: Path) -> None:
    """The destination took commits while it was the redirect target; if it has an owner by
    now, UNSET REDIRECT must not mark it, nor bring its protocol back to the source."""
    owner = OWNERS[3]
    source, destination = tmp_path / "source", tmp_path / "destination"
    make_table(spark, source)
    table = LifecycleTable.for_path(spark, str(source))
    assert table.set_redirect(str(destination)).state == "READY"
    hand_over(destination, owner)

    assert_refused(spark, f"ALTER TABLE {quote_path(str(source))} UNSET REDIRECT",
                   owner, source, destination)
    status = table.redirect_status()
    assert status is not None and status.state == "READY"
