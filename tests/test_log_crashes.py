"""A crash inside COMPACT LOG or CLEAN LOG leaves a table every reader reads with the same
rows, and running the statement again completes it.

Each case copies one table and runs the statement in a subprocess whose session sets the
test-only ``spark.deltaLifecycle.test.haltAtStep``; the JVM halts at that step as under
``kill -9``. Then stock delta-spark (a session without the extension) and delta-rs read the
table, and this module's session runs the statement again.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest
from pyspark.sql import SparkSession

from conftest import FULL_MATRIX, SESSION_CONF, age_log, delta_rs_ids, ids, latest_version, run_stock_script
from delta_lifecycle import LifecycleTable

HALT_KEY = "spark.deltaLifecycle.test.haltAtStep"
COMPACT = "ALTER TABLE delta.`{path}` COMPACT LOG FROM VERSION 6 TO VERSION 9"
CLEAN = "ALTER TABLE delta.`{path}` CLEAN LOG RETAIN 24 HOURS"

CRASHING_STATEMENT = textwrap.dedent(
    """
    import json, sys
    from pyspark.sql import SparkSession
    from delta_lifecycle import configure_spark

    statement, step, conf = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    builder = SparkSession.builder.master("local[1]")
    for k, v in conf.items():
        builder = builder.config(k, v)
    spark = configure_spark(builder.config("%s", step)).getOrCreate()
    spark.sql(statement).collect()
    print("NOT HALTED")
    """
    % HALT_KEY
)


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
    script = workdir / "crashing.py"
    script.write_text(CRASHING_STATEMENT)

    def crash(case: Tuple[int, Tuple[str, str]]) -> Crash:
        i, (step, statement) = case
        path = workdir / f"t{i}"
        shutil.copytree(base, path, copy_function=shutil.copy2)  # keeps the aged modification times
        sql = statement.format(path=path)
        run = subprocess.run([sys.executable, str(script), sql, step, json.dumps(SESSION_CONF)],
                             capture_output=True, text=True, timeout=600)
        halted = f"halting at step {step}" in run.stderr and "NOT HALTED" not in run.stdout
        return Crash(step, statement, path, halted, run.stderr[-3000:])

    with ThreadPoolExecutor(max_workers=2) as pool:
        return {c.step: c for c in pool.map(crash, enumerate(steps))}


@pytest.fixture(scope="module")
def stock(crashes: Dict[str, Crash], tmp_path_factory: pytest.TempPathFactory) -> Dict[str, Any]:
    body = """
        out = {}
        for step, path in json.loads(sys.argv[1]).items():
            try:
                out[step] = sorted(int(r[0]) for r in spark.read.format("delta").load(path).collect())
            except Exception as e:
                out[step] = "refused: " + str(e)[:300]
        emit(out)
    """
    paths = {step: str(c.path) for step, c in crashes.items()}
    return run_stock_script(body, [json.dumps(paths)], tmp_path_factory.mktemp("stock"))


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
