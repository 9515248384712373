"""Running out of memory is a typed error.

A log-only table of 150,000 files (``tests/log_only_table.py``) is planned and dropped
(``DROP FEATURE deletionVectors``) in subprocesses whose driver has a small heap, and whose
session asks for delta-spark's whole state in one partition (``snapshotPartitions`` 1, and a
``spark.deltaLifecycle.filesPerPartition`` above the table's size). The plan (DRY RUN) reads
only the log's columns it needs and completes; the drop, whose first barrier checkpoint is
delta-spark's and rebuilds that state, fails with ``DELTA_LIFECYCLE_OUT_OF_MEMORY``, naming
the step and the two settings, before anything is written, and the session lives on.
Raising ``spark.driver.memory`` as the error says, the drop completes, and stock delta-spark
reads the table without the feature.

The small heap is 200 MB, below Spark's own floor of 450 MB for a driver, which
``spark.testing.reservedMemory`` (Spark's setting for its own tests) lowers; a heap that
small keeps the table small. It runs with the crash suites (``make crash-test``,
``make reliability``): like them, it takes a JVM to its limit, and CI leaves it out to keep
within its time.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any, Dict

import pytest
from pyspark.sql import SparkSession

from environment import behind_switch
from log_only_table import write_log_only_table
from spark_sessions import SESSION_CONF, SessionSpec, preamble
from stock_session import run_stock_script
from table_helpers import latest_version

pytestmark = behind_switch("DELTA_LIFECYCLE_CRASHES", "make crash-test")

FILES = 150_000
DV = "deletionVectors"

#: Runs the statements (``{t}`` is the table) in a session of its own built from the JSON
#: settings, each through ``translate_errors``, and prints what each returned or raised.
SCRIPT = preamble(
    SessionSpec(log_level="ERROR"), conf="json.loads(sys.argv[2])"
) + textwrap.dedent(
    """
    from delta_lifecycle.errors import DeltaLifecycleError, translate_errors

    path, statements = sys.argv[1], json.loads(sys.argv[3])
    out = []
    for sql in statements:
        try:
            with translate_errors():
                rows = spark.sql(sql.format(t=f"delta.`{path}`")).collect()
            out.append({"rows": [r.asDict(recursive=True) for r in rows]})
        except DeltaLifecycleError as e:
            out.append({"condition": e.condition, "message": e.message})
    print("RESULT " + json.dumps({"statements": out, "alive": spark.range(3).count()}))
    """
)

STATEMENTS = [f"ALTER TABLE {{t}} DROP FEATURE {DV} DRY RUN", f"ALTER TABLE {{t}} DROP FEATURE {DV}"]

#: One partition of the whole state: more than a small driver can hold.
ONE_PARTITION = {
    "spark.databricks.delta.snapshotPartitions": "1",
    "spark.deltaLifecycle.filesPerPartition": str(10 * FILES),
    "spark.ui.enabled": "false",
}


@pytest.fixture(scope="module")
def table(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("oom") / "files"
    write_log_only_table(spark, path, FILES, small_commits=2)
    return path


def run(path: Path, settings: Dict[str, str]) -> Dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(path), json.dumps({**SESSION_CONF, **settings}),
         json.dumps(STATEMENTS)],
        capture_output=True, text=True, timeout=900,
    )
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    assert proc.returncode == 0 and lines, proc.stdout[-2000:] + proc.stderr[-6000:]
    result: Dict[str, Any] = json.loads(lines[-1][len("RESULT "):])
    return result


def test_a_state_too_big_for_the_driver_is_a_typed_error_and_more_memory_completes(
    table: Path,
) -> None:
    before = latest_version(table)
    small = run(table, {**ONE_PARTITION, "spark.driver.memory": "200m",
                        "spark.testing.reservedMemory": "0"})
    plan, failure = small["statements"]
    assert plan["rows"][0]["status"] == "planned"
    assert failure.get("condition") == "DELTA_LIFECYCLE_OUT_OF_MEMORY"
    message = failure["message"]
    assert message.startswith(f"DROP FEATURE {DV} on delta.`{table}` ran out of memory in a "
                              "task (local mode"), message
    assert "during step 1 of 1 (plan the drop from the latest version)" in message
    assert "raise spark.driver.memory" in message
    assert "lower spark.deltaLifecycle.filesPerPartition (now 1500000)" in message
    # The session survived, and nothing was written.
    assert small["alive"] == 3
    assert latest_version(table) == before

    raised = run(table, {**ONE_PARTITION, "spark.driver.memory": "1g"})
    planned, dropped = (s["rows"][0] for s in raised["statements"])
    assert planned["status"] == "planned" and dropped["status"] == "dropped"
    assert dropped["commitVersions"] == planned["commitVersions"]
    assert latest_version(table) == planned["commitVersions"][-1]

    stock = run_stock_script(
        """
        from delta.tables import DeltaTable
        protocol = DeltaTable.forPath(spark, sys.argv[1]).detail().collect()[0]
        emit({"files": protocol["numFiles"], "readerFeatures": protocol["tableFeatures"]})
        """,
        [str(table)],
    )
    assert stock["files"] == FILES + 2
    assert DV not in stock["readerFeatures"]
