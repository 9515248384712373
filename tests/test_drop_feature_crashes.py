"""A crash at every step of ``DROP FEATURE`` leaves a table every reader can read, and a
re-run completes the drop.

Each case copies one deletion-vector table, runs the drop in a subprocess whose session
sets the test-only ``spark.deltaLifecycle.test.haltAtStep`` (the JVM halts there, as under
``kill -9``), then checks the table from outside: stock delta-spark without the extension
and delta-rs read the same rows as before, and running the drop again in this module's
session finishes it.
"""

from __future__ import annotations

import shutil
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest
from deltalake.exceptions import DeltaProtocolError
from pyspark.sql import SparkSession

from environment import behind_switch, FULL_MATRIX
from script_runs import run_until_halt, write_crash_script
from stock_session import stock_read_ids
from table_helpers import age_log, deletion_vector_table, delta_rs_ids, ids, latest_version
from delta_lifecycle import LifecycleTable
from delta_lifecycle.errors import DropFeatureWaitError, FeatureNotPresentError

pytestmark = behind_switch("DELTA_LIFECYCLE_CRASHES", "make crash-test")

#: (step, TRUNCATE HISTORY?) in the order the drop reaches them.
ALL_STEPS: List[Tuple[str, bool]] = [
    ("dropFeature.afterPreparation", False),
    ("dropFeature.barrier.1.afterEmptyCommit", False),
    ("dropFeature.barrier.1.afterCheckpoint", False),
    ("dropFeature.barrier.copy.beforeRename", False),
    ("dropFeature.barrier.2.afterCheckpoint", False),
    ("dropFeature.barrier.3.afterCheckpoint", False),
    ("dropFeature.afterDowngrade", False),
    ("dropFeature.truncateHistory.afterPreparation", True),
    ("dropFeature.truncateHistory.afterCleanup", True),
    ("dropFeature.truncateHistory.afterDowngrade", True),
]
#: CI runs one step of each kind; DELTA_LIFECYCLE_FULL_MATRIX=1 runs every step.
CI_STEPS = {
    "dropFeature.afterPreparation",
    "dropFeature.barrier.copy.beforeRename",
    "dropFeature.afterDowngrade",
    "dropFeature.truncateHistory.afterPreparation",
    "dropFeature.truncateHistory.afterCleanup",
}
STEPS = [s for s in ALL_STEPS if FULL_MATRIX or s[0] in CI_STEPS]

CRASHING_DROP = """
    path, truncate = args[0], args[1] == "1"
    spark.sql(f"ALTER TABLE delta.`{path}` DROP FEATURE deletionVectors" + (" TRUNCATE HISTORY" if truncate else ""))
    print("NOT HALTED")
"""


@dataclass(frozen=True)
class Crash:
    step: str
    truncate: bool
    path: Path
    halted: bool
    stderr: str


@pytest.fixture(scope="module")
def expected_rows(base: Path, spark: SparkSession) -> List[int]:
    return ids(spark, base)


@pytest.fixture(scope="module")
def base(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("crash-base") / "table"
    deletion_vector_table(spark, path)
    return path


def truncate_ready(spark: SparkSession, path: Path) -> None:
    """Run the history-truncating drop's first run, then age the log past the retention."""
    with pytest.raises(DropFeatureWaitError):
        LifecycleTable.for_path(spark, str(path)).drop_feature("deletionVectors", truncate_history=True)
    age_log(path, through=latest_version(path), hours=48)


@pytest.fixture(scope="module")
def crashes(spark: SparkSession, base: Path, tmp_path_factory: pytest.TempPathFactory) -> Dict[str, Crash]:
    workdir = tmp_path_factory.mktemp("crashes")
    script = workdir / "crashing_drop.py"
    script = write_crash_script(workdir / "crashing.py", CRASHING_DROP)
    cases = []
    for i, (step, truncate) in enumerate(STEPS):
        path = workdir / f"t{i}"
        shutil.copytree(base, path)
        # The later truncation steps are on the second run, after the wait.
        if truncate and step != "dropFeature.truncateHistory.afterPreparation":
            truncate_ready(spark, path)
        cases.append((step, truncate, path))

    def crash(case: Tuple[str, bool, Path]) -> Crash:
        step, truncate, path = case
        run = run_until_halt(script, [str(path), "1" if truncate else "0"], step)
        return Crash(step, truncate, path, run.halted, run.stderr)

    with ThreadPoolExecutor(max_workers=2) as pool:
        return {c.step: c for c in pool.map(crash, cases)}


@pytest.fixture(scope="module")
def stock_after_crash(crashes: Dict[str, Crash]) -> Dict[str, Any]:
    return stock_read_ids({step: (str(c.path), None) for step, c in crashes.items()})


@pytest.mark.parametrize("step", [s for s, _ in STEPS])
def test_the_drop_halts_at_the_step(crashes: Dict[str, Crash], step: str) -> None:
    crash = crashes[step]
    assert crash.halted, crash.stderr


@pytest.mark.parametrize("step", [s for s, _ in STEPS])
def test_stock_delta_spark_reads_the_crashed_table(
    stock_after_crash: Dict[str, Any], expected_rows: List[int], step: str
) -> None:
    assert stock_after_crash[step] == expected_rows


@pytest.mark.parametrize("step", [s for s, _ in STEPS])
def test_delta_rs_reads_the_crashed_table(crashes: Dict[str, Crash], expected_rows: List[int], step: str) -> None:
    try:
        assert delta_rs_ids(crashes[step].path) == expected_rows
    except DeltaProtocolError as e:  # a delta-rs without deletion vectors must refuse, not misread
        assert "deletionVectors" in str(e)


@pytest.mark.parametrize("step", [s for s, _ in STEPS])
def test_a_rerun_completes_the_drop(
    spark: SparkSession, crashes: Dict[str, Crash], stock_after_crash: Dict[str, Any], expected_rows: List[int], step: str
) -> None:
    crash = crashes[step]
    table = LifecycleTable.for_path(spark, str(crash.path))
    try:
        if crash.truncate:
            # A truncating re-run may first ask to wait once more; after the wait it completes.
            age_log(crash.path, through=latest_version(crash.path), hours=48)
            try:
                table.drop_feature("deletionVectors", truncate_history=True)
            except DropFeatureWaitError:
                age_log(crash.path, through=latest_version(crash.path), hours=48)
                assert table.drop_feature("deletionVectors", truncate_history=True).dropped
        else:
            assert table.drop_feature("deletionVectors").dropped
    except FeatureNotPresentError:
        # Halted after the downgrade commit: the drop had already happened.
        assert step.endswith("afterDowngrade")
    features = spark.sql(f"DESCRIBE DETAIL delta.`{crash.path}`").collect()[0]["tableFeatures"]
    assert "deletionVectors" not in features
    assert ids(spark, crash.path) == expected_rows
