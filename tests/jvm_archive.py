"""A class-data archive that every Spark JVM of a test run maps instead of loading its classes.

A test run starts dozens of Spark JVMs (each test process's session, stock delta-spark
sessions, crash scripts, concurrent writers), and each spends a third of its start loading,
parsing and verifying the same tens of thousands of classes: Spark's, Scala's, Hadoop's,
Hive's, delta-spark's. The JVM's class-data sharing (a dynamic AppCDS archive, JEP 350) keeps
them parsed and verified in one file that every JVM maps (bench/README.md, "CI time").

The archive is made once per pyspark installation and JDK, by a short session that runs the
kinds of statements the tests run (:data:`WORKLOAD`), and kept in
``${XDG_CACHE_HOME:-~/.cache}/delta-lifecycle/jvm-archives/`` (``DELTA_LIFECYCLE_JVM_ARCHIVES``
overrides the folder; ``DELTA_LIFECYCLE_JVM_ARCHIVE=0`` turns the archive off).

What it changes is where class bytes come from, never what they are: the JVM uses an archived
class only for the same class path, and a class that a session loads from a jar of its own
(delta-spark's, this project's) only when the bytes it reads have the archived class's size and
checksum. A JVM whose class path differs (another line's pyspark, a cluster's executor) ignores
the archive, silently (``-Xshare:auto`` and its log turned off).
"""

from __future__ import annotations

import fcntl
import functools
import hashlib
import os
import shlex
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import Optional

import pyspark

ARCHIVES = Path(
    os.environ.get(
        "DELTA_LIFECYCLE_JVM_ARCHIVES",
        Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
        / "delta-lifecycle" / "jvm-archives",
    )
)
ENABLED = os.environ.get("DELTA_LIFECYCLE_JVM_ARCHIVE", "1") != "0"

#: What the archiving session runs: a session as configure_spark sets it up, with tables by
#: name in a Hive metastore and by path, and the delta-spark statements most tests run. Each
#: statement more archives more classes but makes the archive later, so it stays short.
WORKLOAD = textwrap.dedent(
    """
    import sys
    from pathlib import Path

    root = Path(sys.argv[1])
    sys.path.insert(0, sys.argv[2])  # tests/, for the session every test session starts as
    from metastore import hive_metastore_conf
    from spark_sessions import SESSION_CONF, SessionSpec, start_session

    spark = start_session(SessionSpec(conf={**SESSION_CONF, **hive_metastore_conf(root)}))
    path = root / "by_path"
    spark.sql(f"CREATE TABLE delta.`{path}` (id BIGINT, part STRING) USING delta "
              "PARTITIONED BY (part) TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')")
    spark.range(20).selectExpr("id", "cast(id % 2 AS STRING) AS part") \\
        .write.format("delta").mode("append").save(str(path))
    spark.sql(f"DELETE FROM delta.`{path}` WHERE id = 3")
    spark.sql(f"UPDATE delta.`{path}` SET id = id + 100 WHERE id = 4")
    spark.sql(f"MERGE INTO delta.`{path}` t USING (SELECT 5 AS id, '1' AS part) s "
              "ON t.id = s.id WHEN MATCHED THEN DELETE WHEN NOT MATCHED THEN INSERT *")
    spark.sql(f"DESCRIBE HISTORY delta.`{path}`").collect()
    spark.sql("CREATE TABLE by_name (id BIGINT) USING delta")
    spark.sql("INSERT INTO by_name SELECT id FROM delta.`%s`" % path)
    assert spark.table("by_name").count() > 2
    spark.stop()
    """
)

_LOGS_OFF = "-Xlog:cds=off -Xlog:cds+dynamic=off -Xlog:class+path=off"


@functools.lru_cache(maxsize=None)  # a JVM start (java -version) each time otherwise
def _key() -> str:
    """Which JDK, which pyspark jars and which workload: an archive serves only the class path
    it was made on."""
    java = subprocess.run(["java", "-version"], capture_output=True, text=True).stderr
    jars = Path(pyspark.__file__).parent / "jars"
    listing = sorted((p.name, p.stat().st_size) for p in jars.glob("*.jar"))
    return hashlib.sha256(repr((java, str(jars), listing, WORKLOAD)).encode()).hexdigest()[:16]


def archive_path() -> Path:
    return ARCHIVES / f"spark-{pyspark.__version__}-{_key()}.jsa"


def java_options() -> str:
    """The options that map the archive, or "" when there is none (yet) or it is turned off."""
    if not ENABLED:
        return ""
    path = archive_path()
    if not path.is_file():
        return ""
    return f"-XX:SharedArchiveFile={path} -Xshare:auto {_LOGS_OFF}"


def ensure_archive(submit_args: str) -> Optional[Path]:
    """The archive of this pyspark and JDK, made first if missing (about half a minute), with
    ``submit_args`` (the run's PYSPARK_SUBMIT_ARGS) for the archiving session. None when turned
    off or when making it failed: the tests then run without it, only slower."""
    if not ENABLED:
        return None
    path = archive_path()
    ARCHIVES.mkdir(parents=True, exist_ok=True)
    with open(path.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if path.is_file():
            return path
        with tempfile.TemporaryDirectory(prefix="jvm-archive-") as work:
            partial = Path(work) / "archive.jsa"
            # The default options, so that the session's own extraJavaOptions (the metastore's
            # Derby home) add to them instead of replacing them.
            options = f"-XX:ArchiveClassesAtExit={partial} {_LOGS_OFF}"
            env = {
                **os.environ,
                "PYSPARK_SUBMIT_ARGS":
                    f"--conf {shlex.quote('spark.driver.defaultJavaOptions=' + options)} "
                    + submit_args,
            }
            run = subprocess.run(
                [sys.executable, "-c", WORKLOAD, work, str(Path(__file__).resolve().parent)],
                env=env, capture_output=True, text=True, timeout=600,
            )
            if run.returncode != 0 or not partial.is_file():
                sys.stderr.write(
                    f"jvm_archive: no class-data archive, tests run without it:\n"
                    f"{run.stderr[-3000:]}\n"
                )
                return None
            os.replace(partial, path)
    _prune(keep=path)
    return path


#: Archives kept besides the newest: each checkout's venv has a class path of its own, and an
#: archive is a few hundred megabytes. A JVM that still maps a pruned one keeps its mapping; one
#: started later without it runs without sharing.
KEPT_ARCHIVES = 3


def _prune(keep: Path) -> None:
    archives = sorted(ARCHIVES.glob("spark-*.jsa"), key=lambda p: p.stat().st_mtime, reverse=True)
    for old in [a for a in archives if a != keep][KEPT_ARCHIVES:]:
        old.unlink(missing_ok=True)
        old.with_suffix(".lock").unlink(missing_ok=True)


if __name__ == "__main__":
    # make test makes it beside the Scala tests, so that the Python tests find it made.
    made = ensure_archive(os.environ.get("PYSPARK_SUBMIT_ARGS") or "pyspark-shell")
    print(f"jvm_archive: {made or 'none (the tests run without one)'}")
