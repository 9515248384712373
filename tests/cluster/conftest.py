"""Fixtures for the cluster suite: a Spark standalone cluster on 127.0.0.1 (a master and two
one-core workers, each its own JVM, from pyspark's ``bin/spark-class``: standalone.py) and a
session on it set up by ``configure_spark``, as a user's application would be.

The ``spark`` fixture here replaces ``tests/conftest.py``'s for this directory. The driver
runs the Spark UI, whose REST API (``/api/v1/applications/<id>/...``) the tests read to
check where tasks ran.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any, Callable, Dict, Iterator, List, Set, Tuple

import pytest

pytest.register_assert_rewrite("cluster.helpers")

from pyspark.sql import SparkSession  # noqa: E402

from spark_sessions import SESSION_CONF, SessionSpec, start_session  # noqa: E402
from cluster.standalone import StandaloneCluster, free_port, get_json  # noqa: E402

log = logging.getLogger("delta_lifecycle.cluster")

#: Settings of the cluster sessions: the small local settings, with the UI (and so its REST
#: API) on, the driver reachable on the loopback address the workers use, and lost tasks
#: retried as Spark does by default on a cluster.
CLUSTER_SESSION_CONF: Dict[str, str] = {
    **SESSION_CONF,
    "spark.ui.enabled": "true",
    "spark.driver.host": "127.0.0.1",
    "spark.driver.bindAddress": "127.0.0.1",
    "spark.executor.memory": "768m",
}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StandaloneCluster]:
    started = time.monotonic()
    running = StandaloneCluster.start(tmp_path_factory.mktemp("standalone"), workers=2)
    log.info("cluster %s up in %.0f s", running.url, time.monotonic() - started)
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture(scope="module")
def spark(
    cluster: StandaloneCluster, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[SparkSession]:
    """A session on the cluster with delta-spark and delta-lifecycle, set up as a user would:
    ``configure_spark`` on a builder whose master is the cluster."""
    session = start_session(SessionSpec(
        master=cluster.url,
        app_name="delta-lifecycle-cluster-tests",
        conf={
            **CLUSTER_SESSION_CONF,
            "spark.ui.port": str(free_port()),
            "spark.sql.warehouse.dir": str(tmp_path_factory.mktemp("warehouse")),
        },
    ))
    try:
        wait_for_executors(session, 2)
        yield session
    finally:
        session.stop()


def app_api(spark: SparkSession, path: str) -> Any:
    """GET ``/api/v1/applications/<this app>/<path>`` from the driver's UI. The first call
    starts the REST service, which takes seconds on a busy machine."""
    base = spark.sparkContext.uiWebUrl
    app = spark.sparkContext.applicationId
    return get_json(f"{base}/api/v1/applications/{app}/{path}", timeout=120)


def live_executors(spark: SparkSession) -> List[Dict[str, Any]]:
    return [e for e in app_api(spark, "executors") if e["id"] != "driver"]


def wait_for_executors(spark: SparkSession, count: int, timeout_s: float = 180) -> None:
    deadline = time.monotonic() + timeout_s
    while len(live_executors(spark)) < count:
        if time.monotonic() > deadline:
            raise AssertionError(f"fewer than {count} executors registered in {timeout_s}s")
        time.sleep(0.5)


def last_job_id(spark: SparkSession) -> int:
    return max((job["jobId"] for job in app_api(spark, "jobs")), default=-1)


def task_executors_since(spark: SparkSession, after_job: int) -> Dict[str, Set[str]]:
    """For each job after ``after_job``: its description and the executors its tasks ran
    on, as ``{"<job id>: <description>": {executor ids}}``."""
    seen: Dict[str, Set[str]] = {}
    for job in app_api(spark, "jobs"):
        if job["jobId"] <= after_job:
            continue
        executors: Set[str] = set()
        for stage_id in job["stageIds"]:
            for attempt in app_api(spark, f"stages/{stage_id}?details=true"):
                executors |= {t["executorId"] for t in (attempt.get("tasks") or {}).values()}
        seen[f"{job['jobId']}: {job.get('description') or job.get('name')}"] = executors
    return seen


def wait_for_running_job(
    spark: SparkSession, statement: threading.Thread, description: str, timeout_s: float = 300
) -> None:
    """Wait until a job whose description contains ``description`` has tasks running, while
    ``statement`` (the thread running the statement that starts it) is still running."""
    deadline = time.monotonic() + timeout_s
    while True:
        assert statement.is_alive(), f"the statement ended before a '{description}' job ran"
        assert time.monotonic() < deadline, f"no '{description}' job ran in {timeout_s}s"
        running = [
            job for job in app_api(spark, "jobs?status=running")
            if description in (job.get("description") or "") and job["numActiveTasks"] > 0
        ]
        if running:
            return
        time.sleep(0.1)


def run_in_thread(statement: Callable[[], Any]) -> Tuple[threading.Thread, Dict[str, Any]]:
    """Start ``statement`` in a thread; the dict gets its ``result`` or its ``error``."""
    outcome: Dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["result"] = statement()
        except Exception as e:  # the caller checks it: a typed error, then a re-run
            outcome["error"] = e

    thread = threading.Thread(target=run)
    thread.start()
    return thread, outcome


def completed_or_rerun(outcome: Dict[str, Any], rerun: Callable[[], Any]) -> Any:
    """The statement's result, after a fault: either it completed (Spark ran the lost tasks
    again), or it failed with an error naming the failure and a re-run completes."""
    if "error" in outcome:
        error = outcome["error"]
        assert "DELTA_LIFECYCLE" in str(error) or "SparkException" in repr(error), error
        return rerun()
    return outcome["result"]
