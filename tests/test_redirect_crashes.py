"""A crash at any step of SET REDIRECT or UNSET REDIRECT loses no row, leaves both tables
readable, and running the same command again completes it.

Each case redirects (or un-redirects) a copy of one table in a subprocess whose session
sets the test-only ``spark.deltaLifecycle.test.haltAtStep``; the JVM halts there as under
``kill -9``. Then, from this module's session: the rows read through the source are the
rows written, stock delta-spark and delta-rs still read whatever the state lets them read,
and a re-run of the command finishes it.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Tuple

import pytest
from pyspark.sql import SparkSession

from environment import behind_switch, FULL_MATRIX
from script_runs import run_until_halt, write_crash_script
from table_helpers import delta_rs_ids, ids, redirected_ids
from delta_lifecycle import LifecycleTable

pytestmark = behind_switch("DELTA_LIFECYCLE_CRASHES", "make crash-test")


#: (step, command) in the order the commands reach them. UNSET cases start READY, with one
#: write at the destination (its version 2), so there is one commit to replay.
ALL_STEPS: List[Tuple[str, str]] = [
    # Halts a copy task after its first file: a crash in the middle of the pre-copy, which
    # runs while the source still accepts writes.
    ("setRedirect.midDataCopy", "set"),
    ("setRedirect.afterPreCopy", "set"),
    ("setRedirect.afterEnable", "set"),
    ("setRedirect.afterFileCopy", "set"),
    ("setRedirect.afterCopy", "set"),
    ("unsetRedirect.afterSourceDrop", "unset"),
    ("unsetRedirect.afterDestinationMark", "unset"),
    ("unsetRedirect.afterDataCopy", "unset"),
    ("unsetRedirect.afterReplay.2", "unset"),
]
CI_STEPS = {
    "setRedirect.midDataCopy",
    "setRedirect.afterFileCopy",
    "unsetRedirect.afterDestinationMark",
    "unsetRedirect.afterReplay.2",
}
STEPS = [s for s in ALL_STEPS if FULL_MATRIX or s[0] in CI_STEPS]

CRASHING_COMMAND = """
    path, dest, command = args
    if command == "set":
        spark.sql(f"ALTER TABLE delta.`{path}` SET REDIRECT TO '{dest}'").collect()
    else:
        spark.sql(f"ALTER TABLE delta.`{path}` UNSET REDIRECT").collect()
    print("NOT HALTED")
"""

BEFORE = [0, 1, 2, 3]
AFTER_WRITE = [0, 1, 2, 3, 40]


@dataclass(frozen=True)
class Crash:
    step: str
    command: str
    path: Path
    dest: Path
    halted: bool
    stderr: str


@pytest.fixture(scope="module")
def crashes(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Dict[str, Crash]:
    workdir = tmp_path_factory.mktemp("redirect-crashes")
    script = write_crash_script(workdir / "crashing.py", CRASHING_COMMAND)
    cases = []
    for i, (step, command) in enumerate(STEPS):
        path, dest = workdir / f"t{i}", workdir / f"t{i}-dest"
        spark.sql(f"CREATE TABLE delta.`{path}` (id BIGINT) USING delta")
        spark.sql(f"INSERT INTO delta.`{path}` SELECT id FROM range(0, 4)")
        if command == "unset":
            LifecycleTable.for_path(spark, str(path)).set_redirect(str(dest))
            spark.sql(f"INSERT INTO delta.`{path}` VALUES (40)")
        cases.append((step, command, path, dest))

    def crash(case: Tuple[str, str, Path, Path]) -> Crash:
        step, command, path, dest = case
        run = run_until_halt(script, [str(path), str(dest), command], step)
        return Crash(step, command, path, dest, run.halted, run.stderr)

    with ThreadPoolExecutor(max_workers=2) as pool:
        return {c.step: c for c in pool.map(crash, cases)}


@pytest.mark.parametrize("step", [s for s, _ in STEPS])
def test_the_command_halts_at_the_step(crashes: Dict[str, Crash], step: str) -> None:
    assert crashes[step].halted, crashes[step].stderr


@pytest.mark.parametrize("step", [s for s, _ in STEPS])
def test_the_crashed_tables_read_every_row(
    spark: SparkSession, crashes: Dict[str, Crash], step: str
) -> None:
    crash = crashes[step]
    expected = BEFORE if crash.command == "set" else AFTER_WRITE
    # Through the extension the source reads its current rows in any state.
    assert redirected_ids(spark, crash.path) == expected
    if crash.command == "set":
        # Enabling keeps only the writer-only feature: legacy clients still read the source.
        assert delta_rs_ids(crash.path) == expected
    else:
        # The destination holds the rows and never names a reader feature legacy clients lack.
        assert delta_rs_ids(crash.dest) == expected


@pytest.mark.parametrize("step", [s for s, _ in STEPS])
def test_a_rerun_completes_the_command(
    spark: SparkSession, crashes: Dict[str, Crash], step: str
) -> None:
    crash = crashes[step]
    table = LifecycleTable.for_path(spark, str(crash.path))
    if crash.command == "set":
        assert table.set_redirect(str(crash.dest)).state == "READY"
        assert ids(spark, crash.dest) == BEFORE
        assert delta_rs_ids(crash.dest) == BEFORE
        spark.sql(f"INSERT INTO delta.`{crash.path}` VALUES (41)")
        assert ids(spark, crash.dest) == BEFORE + [41]
    else:
        assert table.unset_redirect().state == "NORMAL"
        assert ids(spark, crash.path) == AFTER_WRITE
        assert delta_rs_ids(crash.path) == AFTER_WRITE
