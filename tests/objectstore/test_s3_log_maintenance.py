"""COMPACT LOG, the post-commit policy, DESCRIBE PROTOCOL HISTORY and CLEAN LOG on
``s3a://`` tables, each followed by stock delta-spark and delta-rs reading the rows.

The policy hooks into delta-spark's LogStore for every scheme; on ``s3a`` that store is
delta-spark's S3 one, so this is where that path is exercised.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import pytest
from pyspark.sql import SparkSession

from deltalog import assert_history_matches_log, assert_maintenance_files_describe_real_states
from delta_lifecycle import CleanupResult, CompactionResult, LifecycleTable, ProtocolVersion
from objectstore.helpers import (
    FULL_OBJECTSTORE_SUITE,
    FULL_SUITE_ONLY,
    delta_rs_ids,
    ids,
    latest_version,
    log_names,
    mirror_log,
    s3_stock_conf,
)
from stock_session import StockRead, stock_read_ids
from objectstore.server import ObjectStore

if not FULL_OBJECTSTORE_SUITE:
    pytest.skip(FULL_SUITE_ONLY, allow_module_level=True)

POLICY_INTERVAL = 3
POLICY_INSERTS = 7
POLICY_TIMEOUT_SECONDS = 60.0


def rows_of(inserts: int) -> List[int]:
    return sorted(list(range(inserts)) + [i + 100 for i in range(inserts)])


def make_table(spark: SparkSession, uri: str, properties: str, inserts: int) -> None:
    """Version 0 creates the table; versions 1 to ``inserts`` insert two rows each."""
    spark.sql(f"CREATE TABLE delta.`{uri}` (id BIGINT) USING delta TBLPROPERTIES ({properties})")
    for i in range(inserts):
        spark.sql(f"INSERT INTO delta.`{uri}` VALUES ({i}), ({i + 100})")


def compactions(store: ObjectStore, uri: str) -> List[Tuple[int, int]]:
    return sorted(
        (int(n[:20]), int(n[21:41])) for n in log_names(store, uri) if n.endswith(".compacted.json")
    )


def covered_through(ranges: List[Tuple[int, int]]) -> int:
    """The last version a chain of compactions from version 0 covers; -1 if none starts at 0."""
    end = -1
    for start, stop in sorted(ranges, key=lambda r: (r[0], -r[1])):
        if start == end + 1:
            end = stop
    return end


@dataclass(frozen=True)
class Policy:
    uri: str
    found: List[Tuple[int, int]]
    by_hand: CompactionResult
    again: CompactionResult


@pytest.fixture(scope="module")
def policy(spark: SparkSession, object_store: ObjectStore, bucket: str) -> Policy:
    """Seven inserts into a table that compacts every three commits; the policy runs on a
    background thread after each commit, so this polls the bucket until it has caught up.
    Then COMPACT LOG by hand covers what the policy left, and once more finds it done."""
    uri = f"{bucket}/policy"
    make_table(
        spark,
        uri,
        # A checkpoint interval of 9 keeps one level of compactions (docs/log-compaction.md).
        "'delta.checkpointInterval' = '9', "
        f"'deltaLifecycle.logCompaction.interval' = '{POLICY_INTERVAL}'",
        POLICY_INSERTS,
    )
    deadline = time.monotonic() + POLICY_TIMEOUT_SECONDS
    found = compactions(object_store, uri)
    while time.monotonic() < deadline and not (
        found and POLICY_INSERTS - covered_through(found) < POLICY_INTERVAL
    ):
        time.sleep(0.5)
        found = compactions(object_store, uri)
    table = LifecycleTable.for_path(spark, uri)
    return Policy(uri, found, table.compact_log(), table.compact_log())


@dataclass(frozen=True)
class Cleaned:
    uri: str
    listing_before: List[str]
    plan: CleanupResult
    listing_after_plan: List[str]
    done: CleanupResult
    listing_after: List[str]
    log_before: Path


@pytest.fixture(scope="module")
def cleaned(
    spark: SparkSession,
    object_store: ObjectStore,
    bucket: str,
    tmp_path_factory: pytest.TempPathFactory,
) -> Cleaned:
    """Seven inserts with checkpoints at 3 and 6, then CLEAN LOG RETAIN 0 HOURS, first as a
    dry run, then for real."""
    uri = f"{bucket}/cleaned"
    make_table(
        spark, uri, "'delta.checkpointInterval' = '3', 'deltaLifecycle.logCompaction.interval' = '0'", 7
    )
    before = log_names(object_store, uri)
    log_before = mirror_log(object_store, uri, tmp_path_factory.mktemp("log-before"))
    table = LifecycleTable.for_path(spark, uri)
    plan = table.clean_log(retain_hours=0, dry_run=True)
    after_plan = log_names(object_store, uri)
    done = table.clean_log(retain_hours=0)
    return Cleaned(
        uri, before, plan, after_plan, done, log_names(object_store, uri), log_before
    )


@pytest.fixture(scope="module")
def stock(
    policy: Policy,
    cleaned: Cleaned,
    object_store: ObjectStore,
) -> Dict[str, StockRead]:
    tables: Dict[str, Tuple[str, Optional[int]]] = {
        "policy": (policy.uri, None),
        "policy@4": (policy.uri, 4),
        "cleaned": (cleaned.uri, None),
        "cleaned@6": (cleaned.uri, 6),
        "cleaned@5": (cleaned.uri, 5),
    }
    return stock_read_ids(tables, s3_stock_conf(object_store))


def test_the_policy_compacts_on_s3(policy: Policy, object_store: ObjectStore) -> None:
    assert policy.found, "the policy wrote no compaction within the timeout"
    assert all(end - start + 1 == POLICY_INTERVAL for start, end in policy.found)
    assert POLICY_INSERTS - covered_through(policy.found) < POLICY_INTERVAL
    # By hand: the commits the policy left (fewer than the interval) get their own file.
    done = covered_through(policy.found)
    assert (policy.by_hand.status, policy.by_hand.start_version) == ("written", done + 1)
    assert policy.by_hand.end_version == POLICY_INSERTS
    assert policy.again.status == "nothing-to-compact"
    names = log_names(object_store, policy.uri)
    assert policy.by_hand.file is not None
    assert policy.by_hand.file.rsplit("/", 1)[-1] in names


def test_protocol_history_on_s3_matches_the_log(
    spark: SparkSession, policy: Policy, object_store: ObjectStore, tmp_path: Path
) -> None:
    history = spark.sql(f"DESCRIBE PROTOCOL HISTORY delta.`{policy.uri}`").collect()
    assert [r.version for r in history] == list(range(POLICY_INSERTS + 1))
    assert all(r.compactions for r in history), "every version lies in some compaction"
    assert_history_matches_log(
        [ProtocolVersion.from_row(r) for r in history], mirror_log(object_store, policy.uri, tmp_path)
    )


def test_compacted_table_reads_the_same_everywhere(
    spark: SparkSession, policy: Policy, object_store: ObjectStore, stock: Dict[str, StockRead]
) -> None:
    assert ids(spark, policy.uri) == stock["policy"] == rows_of(POLICY_INSERTS)
    assert delta_rs_ids(object_store, policy.uri) == rows_of(POLICY_INSERTS)
    assert ids(spark, policy.uri, 4) == stock["policy@4"] == rows_of(4)
    assert delta_rs_ids(object_store, policy.uri, 4) == rows_of(4)


def test_clean_log_dry_run_deletes_nothing_and_the_cleanup_what_it_planned(
    cleaned: Cleaned,
) -> None:
    assert cleaned.listing_after_plan == cleaned.listing_before
    planned = [f.path for f in cleaned.plan.deleted]
    assert planned and [f.path for f in cleaned.done.deleted] == planned
    gone = {p.rsplit("/", 1)[-1] for p in planned}
    assert {f"{v:020d}.json" for v in range(6)} <= gone
    assert not gone & set(cleaned.listing_after)
    assert set(cleaned.listing_after) == set(cleaned.listing_before) - gone
    assert f"{6:020d}.checkpoint.parquet" in cleaned.listing_after
    assert assert_maintenance_files_describe_real_states(cleaned.log_before) == 2


def test_cleaned_table_reads_the_same_everywhere(
    spark: SparkSession, cleaned: Cleaned, object_store: ObjectStore, stock: Dict[str, StockRead]
) -> None:
    assert latest_version(object_store, cleaned.uri) == 7
    assert ids(spark, cleaned.uri) == stock["cleaned"] == rows_of(7)
    assert delta_rs_ids(object_store, cleaned.uri) == rows_of(7)
    assert stock["cleaned@6"] == rows_of(6) == delta_rs_ids(object_store, cleaned.uri, 6)
    assert isinstance(stock["cleaned@5"], str) and stock["cleaned@5"].startswith("refused")
