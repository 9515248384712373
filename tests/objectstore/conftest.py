"""Fixtures for the object-store suite: one S3-compatible server per test run
(``server.py``; MinIO, or moto if MinIO cannot be built), fresh buckets, and a module
session reaching the server through S3A.

The ``spark`` fixture here replaces ``tests/conftest.py``'s for this directory: the same
small local session with this extension, plus hadoop-aws and the S3A settings.

A missing MinIO binary takes 4 to 10 minutes to build. So that a full ``pytest tests``
run does not wait for it, the build starts in the background (niced) as soon as this
directory is collected, and this suite's tests run after every other test.
"""

from __future__ import annotations

import itertools
import logging
import os
import re
import shutil
import threading
from pathlib import Path
from typing import Callable, Dict, Iterator, List, Optional

import pytest

pytest.register_assert_rewrite("objectstore.helpers")

from pyspark.sql import SparkSession  # noqa: E402

from delta_lifecycle import hadoop_aws_package  # noqa: E402
from objectstore.helpers import s3_session_conf  # noqa: E402
from process_jvm import jvm_with_packages  # noqa: E402
from spark_sessions import SessionSpec, start_session  # noqa: E402
from objectstore.server import (  # noqa: E402
    MINIO_BUILD_TIMEOUT_SECONDS,
    ObjectStore,
    build_minio,
    hurry_build,
    minio_binary,
    start_object_store,
    stop_build,
)

log = logging.getLogger("delta_lifecycle.objectstore")

_HERE = Path(__file__).resolve().parent
_background_build_error: List[BaseException] = []
#: Which server this run's object-store tests used, for the end-of-run summary.
_servers_used: List[ObjectStore] = []
_background_build: Optional[threading.Thread] = None


def _start_background_build() -> None:
    global _background_build
    if minio_binary().is_file() or shutil.which("go") is None:
        return
    if os.environ.get("DELTA_LIFECYCLE_OBJECTSTORE_SERVER", "minio") != "minio":
        return

    def build() -> None:
        try:
            # No time limit while niced: other tests may starve it. The server fixture
            # hurries it and then gives it the usual limit.
            build_minio(niced=True, timeout=None)
        except BaseException as e:  # recorded: the server fixture then falls back to moto
            _background_build_error.append(e)

    _background_build = threading.Thread(target=build, name="minio-build", daemon=True)
    _background_build.start()


_start_background_build()


def pytest_collection_modifyitems(items: List[pytest.Item]) -> None:
    """Run this directory's tests last, giving a background MinIO build the whole run."""
    mine = [item for item in items if _HERE in Path(str(item.fspath)).resolve().parents]
    if mine and len(mine) < len(items):
        chosen = set(id(item) for item in mine)
        items[:] = [item for item in items if id(item) not in chosen] + mine


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Say which S3 server the tests ran on, where nobody can miss it; log lines from a
    fixture are shown only when a test fails."""
    for store in _servers_used:
        if store.kind == "minio":
            terminalreporter.write_line(f"object-store tests ran on MinIO ({store.endpoint})")
        else:
            terminalreporter.write_line(
                f"object-store tests ran on {store.kind.upper()}, an S3 emulator: MinIO "
                "could not be built or was not chosen (see tests/objectstore/server.py)",
                red=True,
                bold=True,
            )


@pytest.fixture(scope="session")
def object_store() -> Iterator[ObjectStore]:
    """The run's S3-compatible server on a free localhost port."""
    if _background_build is not None and _background_build.is_alive():
        hurry_build()
        _background_build.join(timeout=MINIO_BUILD_TIMEOUT_SECONDS)
        if _background_build.is_alive():
            stop_build()
            _background_build.join()
    prefer = "moto" if _background_build_error else None
    if _background_build_error:
        log.error("The background MinIO build failed: %s", _background_build_error[0])
    store = start_object_store(prefer=prefer)
    _servers_used.append(store)
    try:
        yield store
    finally:
        store.stop()


_bucket_numbers = itertools.count(1)


@pytest.fixture(scope="session")
def new_bucket(object_store: ObjectStore) -> Callable[[str], str]:
    """Create a fresh bucket whose name starts with ``hint``; return its ``s3a://`` URI."""

    def create(hint: str) -> str:
        stem = re.sub(r"[^a-z0-9-]+", "-", hint.lower()).strip("-")[:40] or "bucket"
        return object_store.create_bucket(f"{stem}-{next(_bucket_numbers)}")

    return create


@pytest.fixture(scope="module")
def bucket(new_bucket: Callable[[str], str], request: pytest.FixtureRequest) -> str:
    """A bucket of this test module's own, as ``s3a://<name>``."""
    return new_bucket(request.module.__name__.rsplit(".", 1)[-1].replace("test_", ""))


@pytest.fixture(scope="module")
def start_conf() -> Dict[str, str]:
    """Settings a module's application starts with besides S3A's: the administrator's
    (docs/settings.md), which no session can change later. None unless a module overrides
    this fixture."""
    return {}


@pytest.fixture(scope="module")
def spark(
    object_store: ObjectStore, tmp_path_factory: pytest.TempPathFactory, start_conf: Dict[str, str]
) -> Iterator[SparkSession]:
    """A local[2] session with delta-spark, delta-lifecycle and S3A, for one test module."""
    jvm_with_packages([hadoop_aws_package()])
    warehouse = tmp_path_factory.mktemp("warehouse")
    session = start_session(SessionSpec(
        app_name="delta-lifecycle-s3-tests",
        conf={
            **s3_session_conf(object_store),
            **start_conf,
            "spark.sql.warehouse.dir": str(warehouse),
        },
        packages=(hadoop_aws_package(),),
    ))
    try:
        yield session
    finally:
        session.stop()
