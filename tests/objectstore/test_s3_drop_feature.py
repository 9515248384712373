"""``ALTER TABLE … DROP FEATURE`` on ``s3a://`` tables, fast and with TRUNCATE HISTORY,
each followed by stock delta-spark and delta-rs reading the rows.

S3 objects cannot be back-dated (the local tests age log files with ``os.utime``), so the
history-truncating drop runs with ``delta.dropFeatureTruncateHistory.retentionDuration``
set to zero: its first run still stops and says when to come back, and its second run,
right after, finds the retention passed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

import pytest
from pyspark.sql import SparkSession

from table_helpers import deletion_vector_table
from delta_lifecycle import DropFeatureResult, LifecycleTable
from delta_lifecycle.errors import DropFeatureWaitError
from objectstore.helpers import (
    FULL_OBJECTSTORE_SUITE,
    FULL_SUITE_ONLY,
    delta_rs_ids,
    ids,
    latest_version,
    log_names,
    s3_stock_conf,
)
from stock_session import StockRead, stock_read_ids
from objectstore.server import ObjectStore

if not FULL_OBJECTSTORE_SUITE:
    pytest.skip(FULL_SUITE_ONLY, allow_module_level=True)

#: What :func:`table_helpers.deletion_vector_table` leaves: ten inserts of two rows, three deleted.
DV_ROWS = sorted(set(range(10)) | set(range(100, 110)) - {101, 103, 105})


def protocol_features(spark: SparkSession, uri: str) -> List[str]:
    """The table features of the latest protocol, as delta-spark describes the table."""
    return sorted(spark.sql(f"DESCRIBE DETAIL delta.`{uri}`").collect()[0].tableFeatures)


@dataclass(frozen=True)
class Dropped:
    uri: str
    result: DropFeatureResult
    before: List[int]
    after: List[int]
    features: List[str]
    listing: List[str]


@pytest.fixture(scope="module")
def fast(spark: SparkSession, object_store: ObjectStore, bucket: str) -> Dropped:
    uri = f"{bucket}/fast"
    deletion_vector_table(spark, uri)
    before = ids(spark, uri)
    result = LifecycleTable.for_path(spark, uri).drop_feature("deletionVectors")
    return Dropped(
        uri, result, before, ids(spark, uri), protocol_features(spark, uri),
        log_names(object_store, uri),
    )


@dataclass(frozen=True)
class Truncated:
    dropped: Dropped
    waited: str
    first_version_left: int


@pytest.fixture(scope="module")
def truncated(spark: SparkSession, object_store: ObjectStore, bucket: str) -> Truncated:
    uri = f"{bucket}/truncated"
    deletion_vector_table(spark, uri)
    spark.sql(
        f"ALTER TABLE delta.`{uri}` SET TBLPROPERTIES "
        "('delta.dropFeatureTruncateHistory.retentionDuration' = '0 hours')"
    )
    before = ids(spark, uri)
    table = LifecycleTable.for_path(spark, uri)
    with pytest.raises(DropFeatureWaitError) as waiting:
        table.drop_feature("deletionVectors", truncate_history=True)
    result = table.drop_feature("deletionVectors", truncate_history=True)
    listing = log_names(object_store, uri)
    first = min(int(n[:20]) for n in listing if n[:20].isdigit())
    dropped = Dropped(
        uri, result, before, ids(spark, uri), protocol_features(spark, uri), listing
    )
    return Truncated(dropped, waiting.value.message, first)


@pytest.fixture(scope="module")
def stock(
    fast: Dropped,
    truncated: Truncated,
    object_store: ObjectStore,
) -> Dict[str, StockRead]:
    boundary = fast.result.readable_without_feature_from
    tables: Dict[str, Tuple[str, Optional[int]]] = {
        "fast": (fast.uri, None),
        "fast@boundary": (fast.uri, boundary),
        "truncated": (truncated.dropped.uri, None),
        "truncated@0": (truncated.dropped.uri, 0),
    }
    return stock_read_ids(tables, s3_stock_conf(object_store))


def test_fast_drop_on_s3(fast: Dropped) -> None:
    assert fast.result.status == "dropped" and fast.result.files_rewritten == 3
    assert fast.before == fast.after == DV_ROWS
    assert "deletionVectors" not in fast.features
    assert "checkpointProtection" in fast.features
    for version in fast.result.checkpoint_versions:
        assert f"{version:020d}.checkpoint.parquet" in fast.listing


def test_fast_drop_reads_the_same_everywhere(
    fast: Dropped, object_store: ObjectStore, stock: Dict[str, StockRead]
) -> None:
    boundary = fast.result.readable_without_feature_from
    assert boundary is not None
    assert stock["fast"] == stock["fast@boundary"] == DV_ROWS
    assert delta_rs_ids(object_store, fast.uri) == DV_ROWS
    assert delta_rs_ids(object_store, fast.uri, boundary) == DV_ROWS


def test_truncate_history_on_s3(truncated: Truncated) -> None:
    assert "TRUNCATE HISTORY" in truncated.waited
    dropped = truncated.dropped
    assert dropped.result.status == "dropped" and dropped.result.mode == "truncate-history"
    assert dropped.before == dropped.after == DV_ROWS
    assert "deletionVectors" not in dropped.features
    cut = dropped.result.history_truncated_before
    assert cut is not None and truncated.first_version_left >= cut > 0


def test_truncated_table_reads_the_same_everywhere(
    truncated: Truncated, object_store: ObjectStore, stock: Dict[str, StockRead]
) -> None:
    uri = truncated.dropped.uri
    assert stock["truncated"] == DV_ROWS
    assert delta_rs_ids(object_store, uri) == DV_ROWS
    assert delta_rs_ids(object_store, uri, latest_version(object_store, uri)) == DV_ROWS
    # The history before the cut is gone for every reader.
    assert isinstance(stock["truncated@0"], str) and stock["truncated@0"].startswith("refused")
