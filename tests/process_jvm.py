"""The one JVM of a test process, which every module's session shares in turn: relaunched
when a module needs packages it lacks, and left by each module's session without the settings
that session started with."""

from __future__ import annotations

from typing import Dict, Iterator, Optional, Sequence, Set

import pytest
from pyspark.sql import SparkSession

from metastore import hive_metastore_conf
from spark_sessions import SESSION_CONF, SessionSpec, start_session

#: The extra packages and jars on the classpath of this test process's JVM.
_JVM_PACKAGES: Set[str] = set()


def jvm_with_packages(packages: Sequence[str]) -> None:
    """Make the next session's JVM one with ``packages`` (Maven coordinates, or jars given as
    ``spark.jars``) on its classpath.

    ``spark.jars.packages`` (and ``spark.jars``) reach the driver's classpath only when pyspark
    launches its JVM, which then serves every later session of the process, so a module whose
    packages the JVM lacks (hadoop-aws, Unity Catalog's connector) would miss them after another
    module's session. pyspark has no public way to relaunch, so this closes the gateway the way
    pyspark's own launcher arranges for (the JVM exits when its standard input closes) and
    forgets it; the next ``getOrCreate`` launches a JVM with the packages. A JVM with an active
    context stays."""
    global _JVM_PACKAGES
    from pyspark import SparkContext

    gateway = SparkContext._gateway
    if gateway is not None and set(packages) <= _JVM_PACKAGES:
        return
    if gateway is not None:
        if SparkContext._active_spark_context is not None:
            return
        gateway.shutdown()
        gateway.proc.stdin.close()
        gateway.proc.wait(timeout=120)
        SparkContext._gateway = None
        SparkContext._jvm = None
    _JVM_PACKAGES = set(packages)


def lifecycle_session(
    tmp_path_factory: pytest.TempPathFactory,
    start_conf: Optional[Dict[str, str]] = None,
    hive: bool = False,
    extra_packages: Sequence[str] = (),
) -> Iterator[SparkSession]:
    """A local[2] session with delta-spark and delta-lifecycle, its application started with
    ``start_conf`` too (the administrator's settings), stopped when the generator closes. With
    ``hive``, tables by name live in Spark's own Hive metastore (tests/metastore.py);
    ``extra_packages`` go to ``configure_spark``."""
    jars = [jar for jar in (start_conf or {}).get("spark.jars", "").split(",") if jar]
    jvm_with_packages([*extra_packages, *jars])
    conf = {**SESSION_CONF, "spark.sql.warehouse.dir": str(tmp_path_factory.mktemp("warehouse"))}
    if hive:
        conf.update(hive_metastore_conf(tmp_path_factory.mktemp("metastore")))
    application_conf = {**(start_conf or {}), **(conf if hive else {})}
    session = start_session(SessionSpec(
        app_name="delta-lifecycle-tests",
        conf={**conf, **(start_conf or {})},
        packages=tuple(extra_packages),
    ))
    jvm = session.sparkContext._jvm
    try:
        yield session
    finally:
        session.stop()
        # The first session of a process starts the JVM through spark-submit, which turns its
        # settings into JVM system properties, and every later SparkContext of the process
        # reads those: a module's administrator settings (or its metastore) would reach the
        # next module's session.
        for key in application_conf:
            jvm.java.lang.System.clearProperty(key)
