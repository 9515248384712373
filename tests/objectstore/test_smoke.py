"""The object-store smoke test that CI runs: one ``s3a://`` table through COMPACT LOG,
DESCRIBE PROTOCOL HISTORY and CLEAN LOG, then read by stock delta-spark and delta-rs.

The other modules here cover every statement; they run with ``make objectstore-test``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import pytest
from pyspark.sql import SparkSession

from deltalog import assert_history_matches_log, assert_maintenance_files_describe_real_states
from delta_lifecycle import CleanupResult, CompactionResult, LifecycleTable, ProtocolVersion
from objectstore.helpers import (
    delta_rs_ids,
    ids,
    log_names,
    mirror_log,
    s3_stock_conf,
)
from stock_session import StockRead, stock_read_ids
from environment import behind_switch
from objectstore.server import ObjectStore

pytestmark = behind_switch("DELTA_LIFECYCLE_OBJECTSTORE", "make objectstore-test")

INSERTS = 7
CHECKPOINT_INTERVAL = 5
EXPECTED = sorted(list(range(INSERTS)) + [i + 100 for i in range(INSERTS)])


@dataclass(frozen=True)
class Maintained:
    uri: str
    compaction: CompactionResult
    history: List[ProtocolVersion]
    log_before_cleanup: Path
    cleanup: CleanupResult
    listing_after_cleanup: List[str]
    log_after_cleanup: Path
    rows: Dict[str, List[int]]


@pytest.fixture(scope="module")
def maintained(
    spark: SparkSession,
    object_store: ObjectStore,
    bucket: str,
    tmp_path_factory: pytest.TempPathFactory,
) -> Maintained:
    """Versions 0 to 7 with a checkpoint at 5; the post-commit policy off, so that the
    compaction below is the statement's own. Then COMPACT LOG (6..7), the history, and
    CLEAN LOG RETAIN 0 HOURS (S3 objects cannot be back-dated, so nothing is aged: a zero
    retention makes every commit before the checkpoint expired)."""
    uri = f"{bucket}/events"
    spark.sql(
        f"CREATE TABLE delta.`{uri}` (id BIGINT) USING delta TBLPROPERTIES ("
        f"'delta.checkpointInterval' = '{CHECKPOINT_INTERVAL}', "
        "'deltaLifecycle.logCompaction.interval' = '0')"
    )
    for i in range(INSERTS):
        spark.sql(f"INSERT INTO delta.`{uri}` VALUES ({i}), ({i + 100})")
    table = LifecycleTable.for_path(spark, uri)
    compaction = table.compact_log()
    history = table.protocol_history()
    before = mirror_log(object_store, uri, tmp_path_factory.mktemp("log-before"))
    cleanup = table.clean_log(retain_hours=0)
    after = mirror_log(object_store, uri, tmp_path_factory.mktemp("log-after"))
    rows = {"latest": ids(spark, uri), "checkpoint": ids(spark, uri, CHECKPOINT_INTERVAL)}
    return Maintained(
        uri, compaction, history, before, cleanup, log_names(object_store, uri), after, rows
    )


@pytest.fixture(scope="module")
def stock(maintained: Maintained, object_store: ObjectStore) -> Dict[str, StockRead]:
    tables: Dict[str, Tuple[str, Optional[int]]] = {
        "latest": (maintained.uri, None),
        "checkpoint": (maintained.uri, CHECKPOINT_INTERVAL),
        "cleaned": (maintained.uri, 2),
    }
    return stock_read_ids(tables, s3_stock_conf(object_store))


def test_compact_log_writes_its_file_to_the_bucket(maintained: Maintained) -> None:
    c = maintained.compaction
    assert (c.status, c.start_version, c.end_version) == ("written", 6, 7)
    name = "00000000000000000006.00000000000000000007.compacted.json"
    assert c.file == f"{maintained.uri}/_delta_log/{name}"
    assert name in maintained.listing_after_cleanup


def test_protocol_history_matches_the_log_in_the_bucket(maintained: Maintained) -> None:
    assert [v.version for v in maintained.history] == list(range(INSERTS + 1))
    assert_history_matches_log(maintained.history, maintained.log_before_cleanup)
    assert maintained.history[CHECKPOINT_INTERVAL].checkpoint == "classic"


def test_clean_log_deletes_the_expired_objects(maintained: Maintained) -> None:
    deleted = {f.path.rsplit("/", 1)[-1] for f in maintained.cleanup.deleted}
    assert {f"{v:020d}.json" for v in range(CHECKPOINT_INTERVAL)} <= deleted
    assert not deleted & set(maintained.listing_after_cleanup)
    assert f"{CHECKPOINT_INTERVAL:020d}.checkpoint.parquet" in maintained.listing_after_cleanup
    # What is left still describes real states: the compaction 6..7 is checked against the
    # commits after the checkpoint.
    assert assert_maintenance_files_describe_real_states(maintained.log_after_cleanup) == 1


def test_every_client_reads_the_same_rows(
    maintained: Maintained, object_store: ObjectStore, stock: Dict[str, StockRead]
) -> None:
    assert maintained.rows["latest"] == EXPECTED
    assert stock["latest"] == EXPECTED
    assert delta_rs_ids(object_store, maintained.uri) == EXPECTED
    at_checkpoint = sorted(list(range(5)) + [i + 100 for i in range(5)])
    assert maintained.rows["checkpoint"] == at_checkpoint
    assert stock["checkpoint"] == at_checkpoint
    assert delta_rs_ids(object_store, maintained.uri, CHECKPOINT_INTERVAL) == at_checkpoint
    # Version 2 went with CLEAN LOG.
    assert isinstance(stock["cleaned"], str) and stock["cleaned"].startswith("refused")


def test_hadoop_aws_matches_the_hadoop_of_the_session(spark: SparkSession) -> None:
    from delta_lifecycle.config import hadoop_version

    jvm = spark.sparkContext._jvm
    assert jvm is not None
    assert jvm.org.apache.hadoop.util.VersionInfo.getVersion() == hadoop_version()
