"""Applications other than the tests' own session on the cluster (``make cluster-test``,
``DELTA_LIFECYCLE_CLUSTER=1``): a Spark Connect server started against it and the README's
``spark-submit --packages``.

A module of their own, so the cluster they get is free: a standalone master gives an
application every core it can, and the other modules' sessions hold both workers' cores for
as long as they live.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Iterator

import pytest
from pyspark.sql import SparkSession

from cluster.conftest import CLUSTER_SESSION_CONF
from cluster.standalone import StandaloneCluster
from stock_session import stock_read_ids

pytestmark = pytest.mark.skipif(
    os.environ.get("DELTA_LIFECYCLE_CLUSTER") != "1",
    reason="the full cluster suite runs with DELTA_LIFECYCLE_CLUSTER=1 (make cluster-test)",
)


@pytest.fixture()
def connect_on_cluster(
    cluster: StandaloneCluster, tmp_path: Path
) -> Iterator[SparkSession]:
    """A Spark Connect server whose application runs on the cluster, configured with
    spark_configuration(), and a client session on it."""
    from test_connect import start_connect_server  # the local suite's server, given a master

    with start_connect_server(tmp_path, {**CLUSTER_SESSION_CONF, "spark.ui.enabled": "false"},
                              master=cluster.url) as client:
        yield client


def test_spark_connect_server_on_the_cluster(
    connect_on_cluster: SparkSession, tmp_path: Path
) -> None:
    client = connect_on_cluster
    path = tmp_path / "connect-dv"
    client.sql(f"CREATE TABLE delta.`{path}` (id BIGINT) USING delta "
               "TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')")
    client.sql(f"INSERT INTO delta.`{path}` VALUES (1), (2), (3)")
    client.sql(f"DELETE FROM delta.`{path}` WHERE id = 2")
    rows = client.sql(f"ALTER TABLE delta.`{path}` DROP FEATURE deletionVectors").collect()
    assert rows and rows[0]["status"] == "dropped", rows
    assert sorted(r[0] for r in client.sql(f"SELECT id FROM delta.`{path}`").collect()) == [1, 3]
    assert json.loads(json.dumps(stock_read_ids({"t": (str(path), None)})))["t"] == [
        1, 3
    ]


def test_spark_submit_with_packages_on_the_cluster(
    cluster: StandaloneCluster, tmp_path: Path
) -> None:
    """The README's ``spark-submit --packages`` (the published coordinate, from ~/.m2) with
    the cluster as master: a Delta write and this project's statement in the job."""
    from test_spark_submit import M2_ARTIFACT, submit_job

    if not M2_ARTIFACT.is_file():
        pytest.skip(f"{M2_ARTIFACT} is missing: run `make jar` first")
    rows, log = submit_job(tmp_path, cluster.url, {
        **CLUSTER_SESSION_CONF, "spark.ui.enabled": "false"})
    assert len(rows) == len(log) == 3
