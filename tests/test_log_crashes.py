"""A crash inside COMPACT LOG, CLEAN LOG or the post-commit policy (its compactions, the
merges of its levels and the removal of covered compactions) leaves a table every
reader reads with the same rows, and running the statement again (for the policy: the next
commit) completes it.

Each case copies one table and runs the statement in a subprocess whose session sets the
test-only ``spark.deltaLifecycle.test.haltAtStep``; the JVM halts at that step as under
``kill -9``. Then stock delta-spark (a session without the extension) and delta-rs read the
table, and this module's session runs the statement again.
"""

from __future__ import annotations

import os
import shutil
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest
from pyspark.sql import SparkSession

from environment import behind_switch, FULL_MATRIX
from script_runs import run_until_halt, write_crash_script
from stock_session import stock_read_ids
from table_helpers import age_log, delta_rs_ids, ids, latest_version
from deltalog import assert_maintenance_files_describe_real_states
from delta_lifecycle import LifecycleTable

pytestmark = behind_switch("DELTA_LIFECYCLE_CRASHES", "make crash-test")

COMPACT = "ALTER TABLE delta.`{path}` COMPACT LOG FROM VERSION 6 TO VERSION 9"
CLEAN = "ALTER TABLE delta.`{path}` CLEAN LOG RETAIN 24 HOURS"

CRASHING_STATEMENT = """
    spark.sql(args[0]).collect()
    print("NOT HALTED")
"""


@dataclass(frozen=True)
class Crash:
    step: str
    statement: str
    path: Path
    halted: bool
    stderr: str


@pytest.fixture(scope="module")
def base(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Twelve versions, checkpoints at 5 and 10, every log file 48 hours old."""
    path = tmp_path_factory.mktemp("log-crash-base") / "table"
    spark.sql(f"CREATE TABLE delta.`{path}` (id BIGINT) USING delta TBLPROPERTIES ('delta.checkpointInterval' = '5')")
    for i in range(11):
        spark.sql(f"INSERT INTO delta.`{path}` VALUES ({i})")
    age_log(path, through=latest_version(path), hours=48)
    return path


@pytest.fixture(scope="module")
def steps(spark: SparkSession, base: Path) -> List[Tuple[str, str]]:
    """The crash points: after the compaction file is written, and after the first and the
    next-to-last file CLEAN LOG deletes (all of them with DELTA_LIFECYCLE_FULL_MATRIX=1)."""
    planned = LifecycleTable.for_path(spark, str(base)).clean_log(retain_hours=24, dry_run=True)
    n = len(planned.deleted)
    assert n > 3, planned
    deletes = range(1, n) if FULL_MATRIX else (1, n - 1)
    return [("compactLog.afterWrite", COMPACT)] + [(f"cleanLog.afterDelete.{i}", CLEAN) for i in deletes]


@pytest.fixture(scope="module")
def crashes(base: Path, steps: List[Tuple[str, str]], tmp_path_factory: pytest.TempPathFactory) -> Dict[str, Crash]:
    workdir = tmp_path_factory.mktemp("log-crashes")
    script = write_crash_script(workdir / "crashing.py", CRASHING_STATEMENT)

    def crash(case: Tuple[int, Tuple[str, str]]) -> Crash:
        i, (step, statement) = case
        path = workdir / f"t{i}"
        shutil.copytree(base, path, copy_function=shutil.copy2)  # keeps the aged modification times
        sql = statement.format(path=path)
        run = run_until_halt(script, [sql], step)
        return Crash(step, statement, path, run.halted, run.stderr)

    with ThreadPoolExecutor(max_workers=2) as pool:
        return {c.step: c for c in pool.map(crash, enumerate(steps))}


# ---- the post-commit policy -------------------------------------------------------------

#: Compactions every two commits, a checkpoint after a commit of 8000 bytes or more.
POLICY_PROPERTIES = (
    "'deltaLifecycle.logCompaction.interval' = '2', 'delta.checkpointInterval' = '50', "
    "'deltaLifecycle.logCompaction.largeCommitBytes' = '8000'"
)
POLICY_BATCHES = 6
LARGE_BATCH = 3
#: In commit order: after commit 1; at commit 2 around its compaction of 1..2; at commit 4
#: (the large one) around its checkpoint.
ALL_POLICY_STEPS = ["logMaintenance.beforeDecision", "logMaintenance.beforeCompaction",
                    "logMaintenance.afterCompaction", "logMaintenance.beforeCheckpoint",
                    "logMaintenance.afterCheckpoint"]
POLICY_STEPS = [s for s in ALL_POLICY_STEPS
                if FULL_MATRIX or s in ("logMaintenance.afterCompaction", "logMaintenance.beforeCheckpoint")]


def policy_batch(i: int) -> List[int]:
    return list(range(i * 100, i * 100 + (40 if i == LARGE_BATCH else 1)))


APPENDING_WITH_POLICY = """
    maintenance = spark._jvm.io.github.deltalifecycle.features.compaction.LogMaintenance
    for i in range(%d):
        rows = list(range(i * 100, i * 100 + (40 if i == %d else 1)))
        frame = spark.createDataFrame([(r,) for r in rows], "id BIGINT").repartition(len(rows))
        frame.write.format("delta").mode("append").save(args[0])
        print("appended", i, flush=True)
        maintenance.awaitIdle(60000)
    print("NOT HALTED")
""" % (POLICY_BATCHES, LARGE_BATCH)


@dataclass(frozen=True)
class PolicyCrash:
    step: str
    path: Path
    halted: bool
    #: Batches the crashed process reported as appended; the one after may have landed too.
    appended: int
    stderr: str


def crash_appending(
    spark: SparkSession, workdir: Path, body: str, properties: str, steps: List[str]
) -> Dict[str, PolicyCrash]:
    """One table per step (created with ``properties``), each appended to by ``body`` in a
    process that halts at that step."""
    script = write_crash_script(workdir / "appending.py", body)
    for step in steps:
        spark.sql(f"CREATE TABLE delta.`{workdir / step}` (id BIGINT) USING delta TBLPROPERTIES ({properties})")

    def crash(step: str) -> PolicyCrash:
        path = workdir / step
        run = run_until_halt(script, [str(path)], step)
        appended = sum(1 for line in run.stdout.splitlines() if line.startswith("appended "))
        return PolicyCrash(step, path, run.halted, appended, run.stderr)

    with ThreadPoolExecutor(max_workers=2) as pool:
        return {c.step: c for c in pool.map(crash, steps)}


@pytest.fixture(scope="module")
def policy_crashes(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Dict[str, PolicyCrash]:
    return crash_appending(spark, tmp_path_factory.mktemp("policy-crashes"), APPENDING_WITH_POLICY,
                           POLICY_PROPERTIES, POLICY_STEPS)


def policy_settled(path: Path) -> bool:
    """Nothing left for the policy: fewer than two commits and no large one since the newest
    checkpoint or compaction."""
    log = path / "_delta_log"
    names = os.listdir(log)
    maintained = [int(n[:20]) for n in names if n.endswith(".checkpoint.parquet")] + [
        int(n[21:41]) for n in names if n.endswith(".compacted.json") and not n.startswith(".")]
    since = max(maintained, default=-1)
    pending = [log / n for n in names if n.endswith(".json") and n[:20].isdigit() and len(n) == 25
               and int(n[:20]) > since]
    return len(pending) < 2 and all(p.stat().st_size < 8000 for p in pending)


# ---- the levels: merging compactions into wider ones, removing the covered ones ---------

#: Levels of 3 and 9 commits; covered compactions go at once (no reader runs in these tests).
LEVELS_PROPERTIES = (
    "'deltaLifecycle.logCompaction.interval' = '3', 'delta.checkpointInterval' = '50', "
    "'deltaLifecycle.logCompaction.coveredRetentionHours' = '0'"
)
LEVELS_BATCHES = 10
#: At version 8: level 1 ``6..8``, the merge into level 2 ``0..8``, then the removal of the
#: three level-1 compactions it covers.
ALL_LEVEL_STEPS = ["logMaintenance.beforeMerge", "logMaintenance.afterMerge",
                   "logMaintenance.beforeRemoval", "logMaintenance.afterFirstRemoval"]
LEVEL_STEPS = [s for s in ALL_LEVEL_STEPS
               if FULL_MATRIX or s in ("logMaintenance.afterMerge", "logMaintenance.afterFirstRemoval")]

APPENDING_WITH_LEVELS = """
    maintenance = spark._jvm.io.github.deltalifecycle.features.compaction.LogMaintenance
    for i in range(%d):
        spark.sql(f"INSERT INTO delta.`{args[0]}` VALUES ({i})")
        print("appended", i, flush=True)
        maintenance.awaitIdle(60000)
    print("NOT HALTED")
""" % LEVELS_BATCHES


@pytest.fixture(scope="module")
def level_crashes(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Dict[str, PolicyCrash]:
    return crash_appending(spark, tmp_path_factory.mktemp("level-crashes"), APPENDING_WITH_LEVELS,
                           LEVELS_PROPERTIES, LEVEL_STEPS)


def compaction_ranges(path: Path) -> List[Tuple[int, int]]:
    return sorted((int(n[:20]), int(n[21:41])) for n in os.listdir(path / "_delta_log")
                  if n.endswith(".compacted.json") and not n.startswith("."))


@pytest.fixture(scope="module")
def stock(
    crashes: Dict[str, Crash],
    policy_crashes: Dict[str, PolicyCrash],
    level_crashes: Dict[str, PolicyCrash],
) -> Dict[str, Any]:
    paths = {step: (str(c.path), None) for step, c in crashes.items()}
    paths.update({step: (str(c.path), None) for step, c in policy_crashes.items()})
    paths.update({step: (str(c.path), None) for step, c in level_crashes.items()})
    return stock_read_ids(paths)


def test_a_crash_in_a_merge_or_removal_leaves_every_client_reading_the_committed_rows(
    spark: SparkSession, level_crashes: Dict[str, PolicyCrash], stock: Dict[str, Any]
) -> None:
    for step, crash in level_crashes.items():
        assert crash.halted, crash.stderr
        # The halt comes in the policy's run after version 8 (the eighth insert), which may
        # come before or after the script printed that insert.
        assert crash.appended in (7, 8), (step, crash.appended)
        rows = ids(spark, crash.path)
        assert rows == list(range(8)), (step, rows)
        assert stock[step] == rows, step
        assert delta_rs_ids(crash.path) == rows, step
        assert_maintenance_files_describe_real_states(crash.path)


def test_the_next_commit_finishes_the_merge_and_the_removal(
    spark: SparkSession, level_crashes: Dict[str, PolicyCrash]
) -> None:
    maintenance = spark._jvm.io.github.deltalifecycle.features.compaction.LogMaintenance  # type: ignore[attr-defined]
    for step, crash in level_crashes.items():
        before = ids(spark, crash.path)
        for value in (100, 101, 102):  # through version 11: the next level-1 block is complete
            spark.sql(f"INSERT INTO delta.`{crash.path}` VALUES ({value})")
            assert maintenance.awaitIdle(60000), step
        ranges = compaction_ranges(crash.path)
        assert (0, 8) in ranges, (step, ranges)
        covered = [r for r in ranges if any(o != r and o[0] <= r[0] and r[1] <= o[1] for o in ranges)]
        assert covered == [], (step, ranges)
        assert assert_maintenance_files_describe_real_states(crash.path) >= 2, step
        expected = sorted(before + [100, 101, 102])
        assert ids(spark, crash.path) == expected, step
        assert delta_rs_ids(crash.path) == expected, step


def test_the_policy_halted_at_each_step_and_every_client_reads_the_committed_rows(
    spark: SparkSession, policy_crashes: Dict[str, PolicyCrash], stock: Dict[str, Any]
) -> None:
    for step, crash in policy_crashes.items():
        assert crash.halted, crash.stderr
        rows = ids(spark, crash.path)
        # The halt may come before the process printed its last append.
        candidates = [sorted(r for i in range(n) for r in policy_batch(i)) for n in (crash.appended, crash.appended + 1)]
        assert rows in candidates, (step, crash.appended, rows)
        assert stock[step] == rows, step
        assert delta_rs_ids(crash.path) == rows, step
        assert_maintenance_files_describe_real_states(crash.path)


def test_the_next_commit_finishes_what_the_crashed_policy_left(
    spark: SparkSession, policy_crashes: Dict[str, PolicyCrash]
) -> None:
    maintenance = spark._jvm.io.github.deltalifecycle.features.compaction.LogMaintenance  # type: ignore[attr-defined]
    for step, crash in policy_crashes.items():
        before = ids(spark, crash.path)
        spark.sql(f"INSERT INTO delta.`{crash.path}` VALUES (99999)")
        assert maintenance.awaitIdle(60000), step
        assert policy_settled(crash.path), (step, sorted(os.listdir(crash.path / "_delta_log")))
        assert assert_maintenance_files_describe_real_states(crash.path) >= 1, step
        assert ids(spark, crash.path) == sorted(before + [99999]), step
        assert delta_rs_ids(crash.path) == sorted(before + [99999]), step


def test_every_statement_halted_at_its_step(crashes: Dict[str, Crash]) -> None:
    for crash in crashes.values():
        assert crash.halted, crash.stderr


def test_every_crashed_table_reads_the_same_rows_everywhere_and_a_rerun_completes(
    spark: SparkSession, base: Path, crashes: Dict[str, Crash], stock: Dict[str, Any]
) -> None:
    expected = ids(spark, base)
    assert expected == list(range(11))
    for step, crash in crashes.items():
        assert stock[step] == expected, step
        assert delta_rs_ids(crash.path) == expected, step
        assert ids(spark, crash.path) == expected, step
        table = LifecycleTable.for_path(spark, str(crash.path))
        if crash.statement == COMPACT:
            assert table.compact_log(6, 9).status == "exists", step
        else:
            table.clean_log(retain_hours=24)
            assert table.clean_log(retain_hours=24, dry_run=True).deleted == (), step
        assert ids(spark, crash.path) == expected, step
        assert delta_rs_ids(crash.path) == expected, step
