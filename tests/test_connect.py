"""LifecycleTable over Spark Connect: a local Connect server runs in a subprocess with the
extension, and the Python client talks to it only through gRPC (no py4j, no local JVM).

The server is started as an administrator would start a shared one: with a redirect
allow-list, and as a production JVM (without the test-switch property of tests/environment.py), so a
client's attempts to widen the allow-list or arm a fault step are tried for real."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from contextlib import contextmanager
from typing import Dict, Iterator, Tuple

import pyspark
import pytest

import shared_session_checks
from cluster.standalone import free_port
from environment import PRODUCTION_ENV
from spark_sessions import SESSION_CONF
from deltalog import assert_history_matches_log
from delta_lifecycle import LifecycleTable, spark_configuration
from delta_lifecycle.errors import NotADeltaTableError, TableNotFoundError
from delta_lifecycle.tables import quote_path

pytest.importorskip("grpc", reason="the Spark Connect client needs pyspark[connect]")
from pyspark.sql.connect.session import SparkSession as ConnectSession  # noqa: E402

CONNECT_SERVER_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"
STARTUP_TIMEOUT_S = 300


def wait_for_port(port: int, server: "subprocess.Popen[bytes]", log: Path) -> None:
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while time.monotonic() < deadline:
        if server.poll() is not None:
            pytest.fail(f"Connect server exited with {server.returncode}:\n{tail(log)}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(1)
    pytest.fail(f"Connect server did not listen on {port} in {STARTUP_TIMEOUT_S}s:\n{tail(log)}")


def tail(log: Path, chars: int = 6000) -> str:
    return log.read_text(errors="replace")[-chars:]


def stop(server: "subprocess.Popen[bytes]") -> None:
    # The server runs in its own process group (start_new_session), so this reaches the
    # JVM that spark-submit starts, and nothing else.
    if server.poll() is not None:
        return
    os.killpg(server.pid, signal.SIGTERM)
    try:
        server.wait(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(server.pid, signal.SIGKILL)
        server.wait(timeout=30)


@contextmanager
def start_connect_server(
    work: Path, conf: Dict[str, str], master: str = "local[2]"
) -> Iterator[ConnectSession]:
    """A Connect server on ``master`` configured with ``conf`` and spark_configuration(), and
    a client session on it; both stop when the block ends."""
    port = free_port()
    confs = {
        **conf,
        **spark_configuration(),
        shared_session_checks.ALLOWED_PREFIXES: str(work / "allowed"),
        "spark.sql.warehouse.dir": str(work / "warehouse"),
        "spark.connect.grpc.binding.address": "127.0.0.1",
        "spark.connect.grpc.binding.port": str(port),
    }
    command = [
        str(Path(pyspark.__file__).parent / "bin" / "spark-submit"),
        "--master", master,
        "--class", CONNECT_SERVER_CLASS,
    ]
    for key, value in confs.items():
        command += ["--conf", f"{key}={value}"]
    log = work / "server.log"
    with log.open("wb") as out:
        server = subprocess.Popen(
            command,
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=work,
            start_new_session=True,
            env={**PRODUCTION_ENV, "PYSPARK_PYTHON": sys.executable},
        )
    session = None
    try:
        wait_for_port(port, server, log)
        session = ConnectSession.builder.remote(f"sc://127.0.0.1:{port}").getOrCreate()
        yield session
    finally:
        if session is not None:
            session.stop()
        stop(server)


@pytest.fixture(scope="module")
def connect(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Tuple[ConnectSession, Path]]:
    """A local Connect server configured with spark_configuration(), and a client on it."""
    work = tmp_path_factory.mktemp("connect")
    with start_connect_server(work, SESSION_CONF) as session:
        yield session, work


def test_protocol_history_over_connect(connect: Tuple[ConnectSession, Path]) -> None:
    spark, work = connect
    path = work / "events"
    table = quote_path(str(path))
    spark.sql(f"CREATE TABLE {table} (id BIGINT) USING delta")
    spark.sql(f"INSERT INTO {table} VALUES (1), (2)")
    spark.sql(f"ALTER TABLE {table} SET TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')")

    history = LifecycleTable.for_path(spark, str(path)).protocol_history()
    assert [v.version for v in history] == [0, 1, 2]
    assert_history_matches_log(history, path)
    assert history[0].min_reader_version < history[-1].min_reader_version


def test_typed_errors_over_connect(connect: Tuple[ConnectSession, Path]) -> None:
    spark, work = connect
    missing = work / "not a table"
    with pytest.raises(NotADeltaTableError) as caught:
        LifecycleTable.for_path(spark, str(missing)).protocol_history()
    assert caught.value.condition == "DELTA_LIFECYCLE_NOT_A_DELTA_TABLE"
    assert str(missing) in caught.value.message
    cause = caught.value.__cause__
    assert cause is not None and type(cause).__module__ == "pyspark.errors.exceptions.connect"

    with pytest.raises(TableNotFoundError):
        LifecycleTable.for_name(spark, "nowhere.nothing").protocol_history()


def test_a_client_can_neither_widen_the_allow_list_nor_arm_a_fault_step(
    connect: Tuple[ConnectSession, Path]
) -> None:
    spark, work = connect
    source = shared_session_checks.policy_table(spark, work)
    shared_session_checks.check_allow_list_holds(spark, source, work / "allowed")
    shared_session_checks.check_test_switches_are_off(spark, source, work / "allowed")


def test_delta_table_follows_a_redirect_over_connect(
    connect: Tuple[ConnectSession, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """delta-spark's Python DeltaTable over Spark Connect names its table in the plan it sends;
    the package's wrappers ask the server where a redirect sends it first (SQL functions of
    the extension), so the server's DeltaTable is built for the destination. (The server side
    cannot run here: delta-spark's Connect plugin is not published for delta-spark 4.4.)"""
    from delta.tables import DeltaTable

    from delta_lifecycle import route_delta_tables

    # A Connect client makes its session without configure_spark: it installs the routing itself.
    route_delta_tables()
    # What pyspark sets in a Connect application (SPARK_REMOTE, builder.remote()): delta-spark's
    # DeltaTable then hands the call to its Connect twin.
    monkeypatch.setenv("SPARK_CONNECT_MODE_ENABLED", "1")
    spark, work = connect
    source, dest = work / "allowed" / "dt-moving", work / "allowed" / "dt-moved"
    table = quote_path(str(source))
    spark.sql(f"CREATE TABLE {table} (id BIGINT) USING delta")
    spark.sql(f"INSERT INTO {table} VALUES (1)")
    spark.sql(f"ALTER TABLE {table} SET REDIRECT TO '{dest}'")

    assert DeltaTable.forPath(spark, str(source))._path == f"file:{dest}"
    spark.sql("CREATE TABLE moving_by_name (id BIGINT) USING delta")
    assert DeltaTable.forName(spark, "moving_by_name")._tableOrViewName == "moving_by_name"
    spark.sql(f"ALTER TABLE moving_by_name SET REDIRECT TO '{work / 'allowed' / 'dt-moved2'}'")
    routed = DeltaTable.forName(spark, "moving_by_name")._tableOrViewName
    assert routed == "spark_catalog.default.moving_by_name"
