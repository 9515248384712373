"""The settings every local Spark session of the tests starts with (``conftest.SESSION_CONF``),
in a module of their own so that scripts started before conftest (tests/jvm_archive.py's
archiving session) use the same ones."""

from __future__ import annotations

import os
from typing import Dict

#: Settings that keep local Spark small and quiet; shared with the subprocess sessions.
SESSION_CONF: Dict[str, str] = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.shuffle.partitions": "2",
    # Delta rebuilds snapshots with 50 partitions by default, slow on 2 cores.
    "spark.databricks.delta.snapshotPartitions": "2",
    # VACUUM lists a table's folders with this many tasks (10,000 by default): minutes on two
    # cores for a table of a few files.
    "spark.sql.sources.parallelPartitionDiscovery.parallelism": "4",
}

#: Spark compiles generated Java (Janino) for every query's operators and expressions, which the
#: tables of a few rows these sessions query never pay back: interpreted evaluation takes a
#: sixth less processor time end to end (bench/README.md, "CI time"). The engine's default,
#: code generation, runs in the Scala suites and with ``DELTA_LIFECYCLE_CODEGEN=1``.
INTERPRETED_CONF: Dict[str, str] = {
    "spark.sql.codegen.wholeStage": "false",
    "spark.sql.codegen.factoryMode": "NO_CODEGEN",
}
if os.environ.get("DELTA_LIFECYCLE_CODEGEN") != "1":
    SESSION_CONF.update(INTERPRETED_CONF)
