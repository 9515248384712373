"""The pytest hooks and the shared fixtures: one local SparkSession per test module,
configured by configure_spark.

Starting Spark costs tens of seconds on a small machine, so each module gets one session
(module scope) and the tests in it share it, each on its own tables.

What the tests share besides lives in modules of its own: tests/environment.py (what the run's
environment says, and what importing it changes there, first of all), tests/scheduling.py
(the order of the modules), tests/spark_sessions.py (every session a test starts),
tests/process_jvm.py (the test process's JVM and its module sessions), tests/stock_session.py
(stock delta-spark scripts), tests/script_runs.py (scripts in subprocesses, crash scripts),
tests/table_helpers.py (tables and their files) and tests/spark_line.py (what differs on the
Spark line the process runs).
"""

from __future__ import annotations

from typing import Any, Iterator, List

import pytest

# Let helper-module asserts show their operands like test asserts do.
pytest.register_assert_rewrite("deltalog", "script_runs", "table_helpers")

import environment  # noqa: E402,F401  (first: it sets up the environment of every JVM)
from pyspark.sql import SparkSession  # noqa: E402

import scheduling  # noqa: E402
import spark_sessions  # noqa: E402
from process_jvm import lifecycle_session  # noqa: E402


def pytest_configure(config: pytest.Config) -> None:
    # The controller of pytest-xdist's workers, before it starts them: their sessions would
    # otherwise all resolve a new build of this project's jar at once.
    if not hasattr(config, "workerinput") and config.getoption("numprocesses", None):
        spark_sessions.resolve_packages()


def pytest_collection_modifyitems(items: List[pytest.Item]) -> None:
    scheduling.longest_first(items)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    return scheduling.folder_grouped_scheduler(config, log)


@pytest.fixture(scope="module")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SparkSession]:
    """A local[2] session with delta-spark and delta-lifecycle, for one test module."""
    yield from lifecycle_session(tmp_path_factory)


@pytest.fixture(scope="module")
def hive_spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SparkSession]:
    """Like ``spark``, with tables by name in a Hive metastore of the module's own."""
    yield from lifecycle_session(tmp_path_factory, hive=True)
