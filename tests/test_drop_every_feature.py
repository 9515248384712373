"""Every feature the running delta-spark declares removable drops through DROP FEATURE.

The list is not kept here or in the project: the test asks delta-spark (its
``RemovableFeature`` declarations) and checks that DROP FEATURE offers each of them. Each
feature is then put on a table of its own (``delta.feature.<name> = 'supported'``), planned
with DRY RUN (and with TRUNCATE HISTORY DRY RUN, which writer features refuse with a typed
error) and dropped fast, checkpointProtection with TRUNCATE HISTORY as it must be. Stock
delta-spark and delta-rs then read the same rows as before the drop.

The drops take about a minute per feature on a loaded 2-core machine, so CI plans every
feature (DRY RUN, which writes nothing) and ``DELTA_LIFECYCLE_FULL_MATRIX=1`` also drops
each one and reads the results with the other clients.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional

import pytest
from pyspark.errors import PySparkException
from pyspark.sql import SparkSession

from environment import FULL_MATRIX
from spark_errors import condition_of
from stock_session import stock_read_ids
from table_helpers import age_log, delta_rs_ids, ids, latest_version, documented_droppable

REMOVABLE = "org.apache.spark.sql.delta.RemovableFeature"


def removable_in_delta_spark(spark: SparkSession) -> List[str]:
    """The features the session's delta-spark declares removable, asked of delta-spark."""
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    features = jvm.org.apache.spark.sql.delta.TableFeature.allSupportedFeaturesMap()
    it = features.values().iterator()
    names = []
    while it.hasNext():
        feature = it.next()
        interfaces = set()
        cls = feature.getClass()
        while cls is not None:  # declared on the object or on a base class of it
            interfaces |= {i.getName() for i in cls.getInterfaces()}
            cls = cls.getSuperclass()
        if REMOVABLE in interfaces:
            names.append(str(feature.name()))
    return sorted(names)


def droppable(spark: SparkSession) -> List[str]:
    """The names DROP FEATURE offers (the list its unknown-feature error shows)."""
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    names = jvm.io.github.deltalifecycle.features.dropfeature.DroppableFeatures.Names()
    return sorted(str(names.mkString(",")).split(","))


@dataclass(frozen=True)
class Outcome:
    feature: str
    path: Path
    rows: List[int]
    plan: Optional[Dict[str, object]]
    truncate_plan: str  # "planned" or the typed error's condition
    dropped: Optional[Dict[str, object]]
    refused: Optional[str]  # the condition, when the drop was refused before any write
    not_enabled: Optional[str] = None  # delta-spark's error when it would not add the feature


def condition(error: PySparkException) -> str:
    return str(condition_of(error))


def drop_one(spark: SparkSession, base: Path, feature: str, full: bool = FULL_MATRIX) -> Outcome:
    """Plan ``feature``'s drop on a table of its own; with ``full``, drop it too."""
    path = base / feature.replace("-", "_")
    try:
        spark.sql(
            f"CREATE TABLE delta.`{path}` (id BIGINT) USING delta "
            f"TBLPROPERTIES ('delta.feature.{feature}' = 'supported')"
        )
        spark.sql(f"INSERT INTO delta.`{path}` VALUES (1), (2), (3)")
    except PySparkException as e:
        # Some features (a catalog's or a coordinator's) are not added by a table property.
        return Outcome(feature, path, [], None, "", None, None, condition(e))
    rows = ids(spark, path)
    statement = f"ALTER TABLE delta.`{path}` DROP FEATURE `{feature}`"
    try:
        spark.sql(statement + " TRUNCATE HISTORY DRY RUN").collect()
        truncate_plan = "planned"
    except PySparkException as e:
        truncate_plan = condition(e)
    if feature == "checkpointProtection":
        if not full:
            return Outcome(feature, path, rows, None, truncate_plan, None, None)
        age_log(path, through=latest_version(path), hours=48)
        done = spark.sql(statement + " TRUNCATE HISTORY").head()
        return Outcome(feature, path, rows, None, truncate_plan, done.asDict(), None)
    log_before = sorted(p.name for p in (path / "_delta_log").iterdir())
    try:
        plan = spark.sql(statement + " DRY RUN").head()
    except PySparkException as e:
        assert sorted(p.name for p in (path / "_delta_log").iterdir()) == log_before
        return Outcome(feature, path, rows, None, truncate_plan, None, condition(e))
    assert sorted(p.name for p in (path / "_delta_log").iterdir()) == log_before
    if not full:
        return Outcome(feature, path, rows, plan.asDict(), truncate_plan, None, None)
    done = spark.sql(statement).head()
    return Outcome(feature, path, rows, plan.asDict(), truncate_plan, done.asDict(), None)


@pytest.fixture(scope="module")
def outcomes(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> List[Outcome]:
    base = tmp_path_factory.mktemp("every-feature")
    return [drop_one(spark, base, f) for f in droppable(spark)]


def test_drop_feature_offers_every_feature_delta_spark_declares_removable(
    spark: SparkSession,
) -> None:
    declared = removable_in_delta_spark(spark)
    assert declared, "delta-spark declares no removable feature?"
    offered = droppable(spark)
    assert set(declared) <= set(offered), sorted(set(declared) - set(offered))


def test_every_feature_drops_or_is_refused_by_a_typed_error_before_any_write(
    spark: SparkSession, outcomes: List[Outcome]
) -> None:
    for o in outcomes:
        if o.not_enabled is not None:
            assert not o.not_enabled.startswith("DELTA_LIFECYCLE_"), o
            continue
        if o.refused is not None:
            # Only a refusal that stock delta-spark shares: a table it cannot write past.
            assert o.refused.startswith("DELTA_LIFECYCLE_"), (o.feature, o.refused)
            continue
        assert o.truncate_plan in (
            "planned",
            "DELTA_LIFECYCLE_INVALID_ARGUMENT",  # TRUNCATE HISTORY of a writer feature
        ), o
        if o.plan is not None:
            assert o.plan["status"] == "planned", o
        if not FULL_MATRIX:
            continue
        assert o.dropped is not None and o.dropped["status"] == "dropped", o
        detail = spark.sql(f"DESCRIBE DETAIL delta.`{o.path}`").head()
        assert o.feature not in detail["tableFeatures"], o
        if o.plan is not None:
            assert o.plan["commitVersions"] == o.dropped["commitVersions"], o
        assert ids(spark, o.path) == o.rows, o.feature


def test_stock_delta_spark_and_delta_rs_read_the_same_rows(outcomes: List[Outcome]) -> None:
    if not FULL_MATRIX:
        pytest.skip("the drops run with DELTA_LIFECYCLE_FULL_MATRIX=1")
    dropped = [o for o in outcomes if o.dropped is not None]
    assert dropped
    assert_other_clients_read(dropped)


def assert_other_clients_read(dropped: List[Outcome]) -> None:
    """Stock delta-spark (a session of its own) and delta-rs read each dropped table's rows as
    they were before the drop."""
    stock = stock_read_ids({o.feature: (str(o.path), None) for o in dropped})
    for o in dropped:
        assert stock[o.feature] == o.rows, (o.feature, stock[o.feature])
        assert delta_rs_ids(o.path) == o.rows, o.feature


def test_sql_reference_lists_what_drop_feature_offers_on_this_line(spark: SparkSession) -> None:
    """The droppable column of docs/sql-reference.md for this session's line is the code's list, and what it
    marks beyond stock is exactly what delta-spark of the line does not declare removable."""
    family = "3.5" if str(spark.version).startswith("3.5") else "4.x"
    assert documented_droppable(family) == droppable(spark)
    beyond = sorted(set(droppable(spark)) - set(removable_in_delta_spark(spark)))
    assert documented_droppable(family, beyond_stock=True) == beyond
