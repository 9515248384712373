"""The published artifact works with plain ``spark-submit --packages``: no Python package,
no bundled jar, just the Maven coordinate that ``make jar`` publishes to ~/.m2."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any, Dict, FrozenSet, List, Optional, Tuple

import pyspark
import pytest

from spark_sessions import SESSION_CONF
from deltalog import LogVersion, read_log
from delta_lifecycle import maven_coordinate
from delta_lifecycle._version import ARTIFACT_ID, MAVEN_GROUP, __version__
from delta_lifecycle.config import (
    LIFECYCLE_CATALOG,
    DELTA_EXTENSION,
    LIFECYCLE_EXTENSION,
    delta_maven_coordinate,
)

M2_ARTIFACT = (
    Path.home()
    / ".m2"
    / "repository"
    / Path(*MAVEN_GROUP.split("."))
    / ARTIFACT_ID
    / __version__
    / f"{ARTIFACT_ID}-{__version__}.jar"
)

# Spark 4's default ivy home (spark.jars.ivy). Ivy caches what it resolved from ~/.m2 and
# would keep serving that copy after `make jar` republishes the same version. Only that
# version's entries go: the sessions of other test processes resolve the bundled versions
# beside it (``<version>-<digest>``), possibly at this moment.
IVY_CACHE_ENTRY = Path.home() / ".ivy2.5.2" / "cache" / MAVEN_GROUP / ARTIFACT_ID
PUBLISHED_IVY_FILES = (
    f"ivy-{__version__}.xml",
    f"ivy-{__version__}.xml.original",
    f"ivydata-{__version__}.properties",
    f"jars/{ARTIFACT_ID}-{__version__}.jar",
)

JOB = textwrap.dedent(
    """
    import datetime, json, sys
    from pyspark.sql import SparkSession

    path = sys.argv[1]
    # Not the tests' session factory (tests/spark_sessions.py): the session is the one
    # spark-submit's command line sets up, taken as a user's job takes it, which is what
    # this test is about.
    spark = SparkSession.builder.getOrCreate()
    table = "delta.`" + path.replace("`", "``") + "`"
    spark.sql(f"CREATE TABLE {table} (id BIGINT) USING delta")
    spark.sql(f"INSERT INTO {table} VALUES (1), (2)")
    spark.sql(f"ALTER TABLE {table} SET TBLPROPERTIES ('delta.enableChangeDataFeed' = 'true')")
    df = spark.sql(f"DESCRIBE PROTOCOL HISTORY {table}")
    df.show(truncate=False)
    for row in df.collect():
        d = row.asDict()
        d["timestamp"] = round(d["timestamp"].timestamp() * 1000)
        print("ROW " + json.dumps(d))
    spark.stop()
    """
)


@pytest.mark.skipif(
    not M2_ARTIFACT.is_file(),
    reason=f"{M2_ARTIFACT} is missing: run `make jar` (build/sbt lifecycle/publishM2) first",
)
def test_spark_submit_with_packages(tmp_path: Path) -> None:
    rows, log = submit_job(tmp_path, "local[2]", SESSION_CONF)
    assert log[-1].protocol != log[0].protocol, "the job should have upgraded the protocol"
    assert len(rows) == len(log) == 3
    for row, expected in zip(rows, log):
        actual = LogVersion(
            version=row["version"],
            timestamp_ms=row["timestamp"],
            operation=row["operation"],
            min_reader_version=row["minReaderVersion"],
            min_writer_version=row["minWriterVersion"],
            reader_features=as_set(row["readerFeatures"]),
            writer_features=as_set(row["writerFeatures"]),
            checkpoint=row["checkpoint"],
            compactions=tuple(sorted(row["compactions"])),
            require_checkpoint_protection_before_version=row[
                "requireCheckpointProtectionBeforeVersion"
            ],
        )
        assert actual == expected


def submit_job(
    tmp_path: Path, master: str, conf: Dict[str, str]
) -> Tuple[List[Dict[str, Any]], List[LogVersion]]:
    """spark-submit :data:`JOB` on ``master`` with ``--packages`` (this project's published
    coordinate and delta-spark's) and ``conf``; return the rows it printed and the log of
    the table it wrote."""
    for name in PUBLISHED_IVY_FILES:
        (IVY_CACHE_ENTRY / name).unlink(missing_ok=True)
    job = tmp_path / "job.py"
    job.write_text(JOB)
    table = tmp_path / "submitted table"
    spark_submit = Path(pyspark.__file__).parent / "bin" / "spark-submit"
    confs = {
        **conf,
        "spark.sql.extensions": f"{DELTA_EXTENSION},{LIFECYCLE_EXTENSION}",
        "spark.sql.catalog.spark_catalog": LIFECYCLE_CATALOG,
        "spark.sql.warehouse.dir": str(tmp_path / "warehouse"),
    }
    command = [
        str(spark_submit),
        "--master", master,
        "--packages", f"{maven_coordinate()},{delta_maven_coordinate()}",
    ]
    for key, value in confs.items():
        command += ["--conf", f"{key}={value}"]
    command += [str(job), str(table)]
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable}

    run = subprocess.run(
        command, capture_output=True, text=True, timeout=900, env=env, cwd=tmp_path
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-6000:]
    # The jar came from the local Maven repository that publishM2 fills.
    assert f"found {MAVEN_GROUP}#{ARTIFACT_ID};{__version__} in local-m2-cache" in run.stderr
    assert "minReaderVersion" in run.stdout  # the df.show() header
    rows = [json.loads(line[4:]) for line in run.stdout.splitlines() if line.startswith("ROW ")]
    return rows, read_log(table)


def as_set(names: Optional[List[str]]) -> Optional[FrozenSet[str]]:
    return None if names is None else frozenset(names)
