"""``ALTER TABLE … DROP FEATURE`` end to end, through ``LifecycleTable.drop_feature``.

The drops run in this module's session (delta-spark plus delta-lifecycle). What they leave
behind is then read by clients this project did not write: stock delta-spark in a
subprocess without the extension, and delta-rs (``deltalake``), which does not support
``typeWidening``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List

import pytest
from deltalake.exceptions import DeltaProtocolError
from pyspark.sql import Row, SparkSession

from stock_session import run_stock_script
from table_helpers import age_log, deletion_vector_table, delta_rs_ids, ids, latest_version
from delta_lifecycle import DropFeatureResult, LifecycleTable
from delta_lifecycle.errors import (
    DropFeatureWaitError,
    FeatureNotPresentError,
    TruncateHistoryRequiredError,
    UnknownFeatureError,
)

@dataclass(frozen=True)
class Dropped:
    path: Path
    plan: DropFeatureResult
    result: DropFeatureResult
    before: Dict[int, List[int]]  # rows at each version before the drop
    latest: List[int]


def plan_then_drop(spark: SparkSession, path: Path, feature: str) -> Dropped:
    """Record every version's rows, plan the drop with DRY RUN, then drop."""
    before = {v: ids(spark, path, v) for v in range(latest_version(path) + 1)}
    table = LifecycleTable.for_path(spark, str(path))
    plan = table.drop_feature(feature, dry_run=True)
    result = table.drop_feature(feature)
    return Dropped(path, plan, result, before, ids(spark, path))


@pytest.fixture(scope="module")
def dv(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Dropped:
    path = tmp_path_factory.mktemp("dv") / "table"
    deletion_vector_table(spark, path)
    return plan_then_drop(spark, path, "deletionVectors")


@pytest.fixture(scope="module")
def widened(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Dropped:
    path = tmp_path_factory.mktemp("type-widening") / "table"
    spark.sql(
        f"CREATE TABLE delta.`{path}` (id SMALLINT) USING delta "
        "TBLPROPERTIES ('delta.enableTypeWidening' = 'true')"
    )
    spark.sql(f"INSERT INTO delta.`{path}` VALUES (1), (2)")
    spark.sql(f"ALTER TABLE delta.`{path}` ALTER COLUMN id TYPE INT")
    spark.sql(f"INSERT INTO delta.`{path}` VALUES (100000)")
    return plan_then_drop(spark, path, "typeWidening")


@dataclass(frozen=True)
class Cleaned:
    dropped: Dropped
    kept: List[str]
    deleted: List[str]


@pytest.fixture(scope="module")
def cleaned(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Cleaned:
    """A fast drop, then a CLEAN LOG whose retention ends inside the protected barrier."""
    path = tmp_path_factory.mktemp("cleaned") / "table"
    deletion_vector_table(spark, path)
    before = {v: ids(spark, path, v) for v in range(latest_version(path) + 1)}
    result = LifecycleTable.for_path(spark, str(path)).drop_feature("deletionVectors")
    age_log(path, through=result.checkpoint_versions[1], hours=48)
    cleanup = LifecycleTable.for_path(spark, str(path)).clean_log(retain_hours=24)
    dropped = Dropped(path, result, result, before, ids(spark, path))
    return Cleaned(
        dropped,
        kept=[f.path for f in cleanup.files if f.action == "kept"],
        deleted=[f.path for f in cleanup.files if f.action == "deleted"],
    )


@pytest.fixture(scope="module")
def stock(dv: Dropped, widened: Dropped, cleaned: Cleaned) -> Dict[str, Any]:
    """Every version of every dropped table as stock delta-spark (no extension) reads it."""
    tables = {"dv": dv, "widened": widened, "cleaned": cleaned.dropped}
    body = """
        import json
        tables = json.loads(sys.argv[1])
        out = {}
        for name, (path, versions) in tables.items():
            out[name] = {}
            for v in versions:
                try:
                    reader = spark.read.format("delta").option("versionAsOf", v)
                    rows = reader.load(path).select("id").collect()
                    out[name][str(v)] = sorted(int(r[0]) for r in rows)
                except Exception as e:
                    out[name][str(v)] = refusal(e)
        emit(out)
    """
    import json

    spec = {
        name: (
            str(d.path),
            list(range(d.result.commit_versions[0] - 1, latest_version(d.path) + 1)),
        )
        for name, d in tables.items()
    }
    return run_stock_script(body, [json.dumps(spec)])


def test_dry_run_plans_what_the_drop_does(dv: Dropped) -> None:
    assert dv.plan.status == "planned" and dv.result.status == "dropped"
    assert dv.plan.files_rewritten == 3 and dv.result.files_rewritten == 3
    assert dv.plan.bytes_rewritten == dv.result.bytes_rewritten > 0
    assert dv.plan.commit_versions == dv.result.commit_versions
    assert dv.plan.checkpoint_versions == dv.result.checkpoint_versions
    assert dv.plan.readable_without_feature_from == dv.result.readable_without_feature_from
    boundary = dv.result.protected_before
    assert boundary == dv.result.commit_versions[-1] == dv.result.readable_without_feature_from
    assert dv.result.checkpoint_versions == (boundary - 3, boundary - 2, boundary - 1, boundary)
    assert dv.latest == dv.before[max(dv.before)]


def test_stock_delta_spark_reads_every_version_from_the_boundary(
    dv: Dropped, widened: Dropped, stock: Dict[str, Any]
) -> None:
    for name, dropped in (("dv", dv), ("widened", widened)):
        boundary = dropped.result.readable_without_feature_from
        assert boundary is not None
        for version, rows in stock[name].items():
            if int(version) >= boundary:
                assert rows == dropped.latest, (name, version)
        # The last version before the drop reads as it did before, too.
        last_before = dropped.result.commit_versions[0] - 1
        assert stock[name][str(last_before)] == dropped.before[last_before]


def test_delta_rs_reads_a_type_widened_table_only_from_the_boundary(widened: Dropped) -> None:
    boundary = widened.result.readable_without_feature_from
    assert boundary is not None
    assert delta_rs_ids(widened.path) == widened.latest == [1, 2, 100000]
    for version in range(boundary, latest_version(widened.path) + 1):
        assert delta_rs_ids(widened.path, version) == widened.latest
    # delta-rs does not support typeWidening: every version before the boundary is refused.
    for version in (0, boundary - 1):
        with pytest.raises(DeltaProtocolError, match="typeWidening"):
            delta_rs_ids(widened.path, version)


def test_delta_rs_reads_the_deletion_vector_table(dv: Dropped) -> None:
    boundary = dv.result.protected_before
    assert boundary is not None
    assert delta_rs_ids(dv.path) == dv.latest
    # Before the boundary delta-rs must either read the right rows or refuse the feature.
    for version in (boundary - 1, dv.result.commit_versions[0] - 1):
        try:
            assert delta_rs_ids(dv.path, version) == dv.latest
        except DeltaProtocolError as e:
            assert "deletionVectors" in str(e)


def test_clean_log_inside_the_protected_range_keeps_the_barrier(
    cleaned: Cleaned, stock: Dict[str, Any]
) -> None:
    dropped = cleaned.dropped
    boundary = dropped.result.protected_before
    assert boundary is not None
    assert cleaned.deleted, "commits before the cut-off go"
    assert cleaned.kept and all(".checkpoint" in p for p in cleaned.kept)
    log = os.listdir(dropped.path / "_delta_log")
    for version in dropped.result.checkpoint_versions:
        assert f"{version:020d}.checkpoint.parquet" in log
    assert delta_rs_ids(dropped.path) == dropped.latest
    for version, rows in stock["cleaned"].items():
        if int(version) >= boundary:
            assert rows == dropped.latest, version


def test_from_row_refuses_an_unknown_mode_or_status(dv: Dropped) -> None:
    row = Row(
        feature="deletionVectors",
        mode=dv.result.mode,
        status=dv.result.status,
        filesRewritten=0,
        bytesRewritten=0,
        commitVersions=[],
        checkpointVersions=[],
        protectedBefore=None,
        readableWithoutFeatureFrom=None,
        historyTruncatedBefore=None,
        steps=[],
        clientsGainingAccess=[],
        clientsBlockedByProtection=[],
        table=dv.result.table,
    )
    assert DropFeatureResult.from_row(row).mode == "fast"
    fields = row.asDict()
    with pytest.raises(ValueError, match="mode 'slow'.*'truncate-history'"):
        DropFeatureResult.from_row(Row(**{**fields, "mode": "slow"}))
    with pytest.raises(ValueError, match="status 'done'.*'dropped'"):
        DropFeatureResult.from_row(Row(**{**fields, "status": "done"}))


def test_type_widening_plan_and_result(widened: Dropped) -> None:
    assert widened.plan.files_rewritten == widened.result.files_rewritten > 0
    assert widened.plan.commit_versions == widened.result.commit_versions
    assert any("narrower type" in step for step in widened.result.steps)


def test_refusals_are_typed(spark: SparkSession, dv: Dropped) -> None:
    table = LifecycleTable.for_path(spark, str(dv.path))
    listed = "Droppable features: .*deletionVectors.*typeWidening"
    with pytest.raises(UnknownFeatureError, match=listed):
        table.drop_feature("noSuchFeature")
    with pytest.raises(FeatureNotPresentError):
        table.drop_feature("deletionVectors")
    with pytest.raises(FeatureNotPresentError):
        table.drop_feature("typeWidening-preview", dry_run=True)
    with pytest.raises(TruncateHistoryRequiredError):
        table.drop_feature("checkpointProtection")
    with pytest.raises(ValueError):
        table.drop_feature("  ")


def test_truncate_history_first_run_says_when_to_come_back(
    spark: SparkSession, tmp_path: Path
) -> None:
    path = tmp_path / "table"
    deletion_vector_table(spark, path)
    table = LifecycleTable.for_path(spark, str(path))
    plan = table.drop_feature("deletionVectors", truncate_history=True, dry_run=True)
    assert plan.mode == "truncate-history" and plan.status == "planned"
    with pytest.raises(DropFeatureWaitError, match="TRUNCATE HISTORY") as waiting:
        table.drop_feature("deletionVectors", truncate_history=True)
    assert "24 hours" in waiting.value.message
    assert latest_version(path) == plan.commit_versions[-1]
    assert ids(spark, path) == sorted(set(range(10)) | set(range(100, 110)) - {101, 103, 105})
