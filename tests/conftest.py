"""Shared fixtures: one local SparkSession per test module, configured by configure_spark.

Starting Spark costs tens of seconds on a small machine, so each module gets one session
(module scope) and the tests in it share it, each on its own tables.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path
import time
from typing import Any, Dict, Iterator, List, Optional, Sequence, Set, Tuple, Union

import pytest

# Let helper-module asserts show their operands like test asserts do.
pytest.register_assert_rewrite("deltalog")

import pyspark  # noqa: E402
from pyspark.errors import PySparkException  # noqa: E402
from pyspark.sql import SparkSession  # noqa: E402

from jvm_archive import ensure_archive, java_options as jvm_archive_options  # noqa: E402
from metastore import hive_metastore_conf  # noqa: E402
from spark_sessions import SESSION_CONF, SessionSpec, preamble, start_session  # noqa: E402,F401
from spark_errors import condition_of  # noqa: E402,F401  (re-exported to the tests)
from stock_session import (  # noqa: E402,F401  (re-exported to the tests)
    STOCK_READ_IDS_BODY,
    run_stock_script,
    stock_read_ids,
)
from deltalake import DeltaTable  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parents[1]

#: Tables written by other Delta clients (tests/data/README.md). Read-only: tests copy from it.
TESTDATA = Path(os.environ.get("DELTA_LIFECYCLE_TESTDATA", REPO_ROOT / "tests" / "data"))

#: CI runs each reliability matrix (crash steps, concurrent writers, generated bad input) at
#: a size that fits its time budget; ``DELTA_LIFECYCLE_FULL_MATRIX=1`` (``make reliability``)
#: runs all of it.
FULL_MATRIX = os.environ.get("DELTA_LIFECYCLE_FULL_MATRIX") == "1"


def behind_switch(variable: str, target: str) -> pytest.MarkDecorator:
    """Skips a module unless ``variable=1``: what CI (``make test``) leaves to a named target,
    which sets it, to keep within its time (bench/README.md, "CI time")."""
    return pytest.mark.skipif(
        os.environ.get(variable) != "1", reason=f"runs with {variable}=1 ({target})"
    )

#: The tests run on Spark 3.5 (delta-spark 3.3; tests/pytest_on_line.py). Where lines differ,
#: tests assert each line's own behaviour (docs/spark-lines.md, "Known differences between
#: lines").
ON_SPARK_35 = pyspark.__version__.startswith("3.5.")


def pyspark_error(message: str, condition: str) -> PySparkException:
    """A PySparkException with ``condition``, as the session's pyspark spells the argument
    (``errorClass`` from pyspark 4, ``error_class`` in 3.5)."""
    if ON_SPARK_35:
        # pyspark 3.5 takes a message or a condition, not both, as errors from the JVM carry.
        error = PySparkException(message=message)
        error.error_class = condition  # type: ignore[attr-defined]
        return error
    return PySparkException(message=message, errorClass=condition)


# Python workers (if a test ever needs one) must run this interpreter, which has pyspark.
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)

#: The JVM system property that turns this project's test switches on (fault injection and
#: slowed copies: ``FaultInjection.TestingProperty``); a production JVM never has it.
TEST_JVM_OPTION = "-DdeltaLifecycle.testing=true"

# A pytest-xdist worker inherits the environment of the controller, which imported this module
# already and kept what PYSPARK_SUBMIT_ARGS was before it: PRODUCTION_ENV is production in every
# process.
_ORIGINAL_SUBMIT_ARGS = "DELTA_LIFECYCLE_TESTS_ORIGINAL_SUBMIT_ARGS"
_submit_args = os.environ.setdefault(
    _ORIGINAL_SUBMIT_ARGS, os.environ.get("PYSPARK_SUBMIT_ARGS", "")
)

_executor_args = f"--conf spark.executor.defaultJavaOptions={TEST_JVM_OPTION} "
if "PYTEST_XDIST_WORKER" not in os.environ:
    # The controller (or a run without workers) makes the class-data archive before any test
    # JVM starts; the workers it starts then find it.
    ensure_archive(_executor_args + (_submit_args or "pyspark-shell"))
_driver_options = " ".join(o for o in (TEST_JVM_OPTION, jvm_archive_options()) if o)
_TEST_SUBMIT_ARGS = (
    f"--conf {shlex.quote('spark.driver.defaultJavaOptions=' + _driver_options)} "
    + _executor_args
)

#: The environment as it was, for a test that starts a production session (no test switches).
PRODUCTION_ENV: Dict[str, str] = {
    k: v for k, v in os.environ.items() if k not in ("PYSPARK_SUBMIT_ARGS", _ORIGINAL_SUBMIT_ARGS)
}
if _submit_args:
    PRODUCTION_ENV["PYSPARK_SUBMIT_ARGS"] = _submit_args

# Every JVM PySpark launches from this run (this process and its subprocesses) is a test JVM:
# its driver and executors get TEST_JVM_OPTION. The default options are Spark's own place
# for it, so a session's spark.driver.extraJavaOptions still applies on top.
os.environ["PYSPARK_SUBMIT_ARGS"] = _TEST_SUBMIT_ARGS + (_submit_args or "pyspark-shell")


#: The modules that take longest (``--durations`` of a CI run), longest first. The parallel
#: run (pytest-xdist, a module per worker, ``--no-loadscope-reorder`` in the Makefile) hands
#: out modules in collection order, so these start first instead of leaving one worker
#: running alone at the end.
LONGEST_MODULES = (
    "test_spark_lines.py",
    "test_redirect_streaming.py",
    "test_redirect_streaming_paths.py",
    "test_differential.py",
    # These three and test_unity_catalog.py run as one unit (ONE_WORKER_FOLDERS).
    "test_catalog_managed.py",
    "test_uc_move.py",
    "test_uc_routing.py",
    "test_redirect_copy.py",
    "test_out_of_memory.py",
    "test_concurrent_writers.py",
    "test_bad_input.py",
    "test_drop_feature.py",
)


def pytest_collection_modifyitems(items: List[pytest.Item]) -> None:
    rank = {name: i for i, name in enumerate(LONGEST_MODULES)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))


#: Test folders whose modules all run on one pytest-xdist worker, one after another, so that
#: they share what their session-scoped fixtures start: for tests/unitycatalog, one Unity Catalog
#: server, one JVM with UC's connector and one stock session with it, instead of one of each on
#: every worker that runs one of its modules.
ONE_WORKER_FOLDERS = ("unitycatalog",)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadfile`` (make test), but with each of :data:`ONE_WORKER_FOLDERS` one unit
    of work instead of one per module."""
    if config.getoption("dist", None) != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class FolderGroupedScheduling(LoadFileScheduling):  # type: ignore[misc]
        def _split_scope(self, nodeid: str) -> str:
            module = nodeid.split("::", 1)[0]
            folder = Path(module).parent
            return str(folder) if folder.name in ONE_WORKER_FOLDERS else module

    return FolderGroupedScheduling(config, log)


#: The extra packages on the classpath of this test process's JVM.
_JVM_PACKAGES: Set[str] = set()


def jvm_with_packages(packages: Sequence[str]) -> None:
    """Make the next session's JVM one with ``packages`` on its classpath.

    ``spark.jars.packages`` is resolved only when pyspark launches its JVM, which then serves
    every later session of the process, so a module whose packages the JVM lacks (hadoop-aws,
    Unity Catalog's connector) would miss them after another module's session. pyspark has no
    public way to relaunch, so this closes the gateway the way pyspark's own launcher arranges
    for (the JVM exits when its standard input closes) and forgets it; the next
    ``getOrCreate`` launches a JVM with the packages. A JVM with an active context stays."""
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
    jvm_with_packages(extra_packages)
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


@pytest.fixture(scope="module")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SparkSession]:
    """A local[2] session with delta-spark and delta-lifecycle, for one test module."""
    yield from lifecycle_session(tmp_path_factory)


@pytest.fixture(scope="module")
def hive_spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SparkSession]:
    """Like ``spark``, with tables by name in a Hive metastore of the module's own."""
    yield from lifecycle_session(tmp_path_factory, hive=True)


def copy_testdata(name: str, destination: Path) -> Path:
    """Copy the test table ``name`` (e.g. ``"delta-rs/simple_table"``) under ``destination``
    and return the copy; the shared originals must never be written to."""
    source = TESTDATA / name
    if not (source / "_delta_log").is_dir():
        raise FileNotFoundError(f"test table {source} is missing (tests/data/README.md)")
    target = destination / name.replace("/", "__")
    shutil.copytree(source, target)
    return target


def run_for_result(argv: Sequence[str]) -> Dict[str, Any]:
    """Run ``python *argv`` in a subprocess and return the JSON object it printed on its
    last ``RESULT `` line; fail with its output if it exits non-zero or prints none."""
    run = subprocess.run(
        [sys.executable, *argv], capture_output=True, text=True, timeout=600
    )
    assert run.returncode == 0, run.stderr[-4000:]
    lines = [line for line in run.stdout.splitlines() if line.startswith("RESULT ")]
    assert lines, run.stdout[-2000:] + run.stderr[-4000:]
    result: Dict[str, Any] = json.loads(lines[-1][len("RESULT "):])
    return result


# ---- crash tests ------------------------------------------------------------------------

#: The start of every crash script: ``spark``, a local session with this extension whose
#: test-only ``spark.deltaLifecycle.test.haltAtStep`` is the next-to-last argument (the
#: JSON Spark settings are the last), and ``args``, the script's own arguments. The script
#: ends with ``print("NOT HALTED")``.
CRASHING_SESSION_PREAMBLE = preamble(
    SessionSpec(master="local[1]"),
    conf='{**json.loads(sys.argv[-1]), "spark.deltaLifecycle.test.haltAtStep": sys.argv[-2]}',
) + "args = sys.argv[1:-2]\n"


@dataclass(frozen=True)
class CrashRun:
    halted: bool
    stdout: str
    stderr: str


def write_crash_script(path: Path, body: str) -> Path:
    path.write_text(CRASHING_SESSION_PREAMBLE + textwrap.dedent(body))
    return path


def run_until_halt(script: Path, args: Sequence[str], step: str) -> CrashRun:
    """Run a crash script in a subprocess, halting its JVM at ``step``. The JVM halts under
    the Python driver, which then fails on its lost gateway; the JVM's last words on the
    shared stderr say where it stopped."""
    run = subprocess.run([sys.executable, str(script), *args, step, json.dumps(SESSION_CONF)],
                         capture_output=True, text=True, timeout=600)
    halted = f"halting at step {step}" in run.stderr and "NOT HALTED" not in run.stdout
    return CrashRun(halted, run.stdout, run.stderr[-3000:])


# ---- Delta tables for the DROP FEATURE tests -------------------------------------------

LOG_FILE_PREFIX_DIGITS = 20


#: The droppable table of docs/sql-reference.md has a column per line family, in this order.
DROPPABLE_COLUMNS = {"4.x": 1, "3.5": 2}


def documented_droppable(line_family: str, beyond_stock: bool = False) -> List[str]:
    """The features the droppable table of docs/sql-reference.md (between
    ``<!-- droppable -->`` markers) marks droppable with ``line_family``'s delta-spark,
    sorted; with ``beyond_stock``, only those this project drops although stock delta-spark
    of the line does not."""
    page = (REPO_ROOT / "docs" / "sql-reference.md").read_text()
    block = page.split("<!-- droppable -->")[1].split("<!-- /droppable -->")[0]
    column = DROPPABLE_COLUMNS[line_family]
    names = []
    for row in block.strip().splitlines()[2:]:
        cells = [c.strip() for c in row.strip().strip("|").split("|")]
        verdict = cells[column]
        if verdict == "yes, beyond stock" or (verdict == "yes" and not beyond_stock):
            names.append(cells[0].strip("`"))
    return sorted(names)


def ids(spark: SparkSession, path: Path, version: Optional[int] = None) -> List[int]:
    reader = spark.read.format("delta")
    if version is not None:
        reader = reader.option("versionAsOf", version)
    return sorted(int(r[0]) for r in reader.load(str(path)).select("id").collect())


def redirected_ids(spark: SparkSession, path: Path) -> List[int]:
    """The rows of a table that may be redirected, read through the extension: by DataFrame
    ``load`` where the line routes it, by SQL on the path on Spark 3.5, whose delta-spark opens a
    reader-writer redirected source by path itself and refuses it (docs/spark-lines.md)."""
    if not ON_SPARK_35:
        return ids(spark, path)
    return sorted(int(r[0]) for r in spark.sql(f"SELECT id FROM delta.`{path}`").collect())


def delta_rs_ids(path: Path, version: Optional[int] = None) -> List[int]:
    table = DeltaTable(str(path)) if version is None else DeltaTable(str(path), version=version)
    return sorted(int(v) for v in table.to_pyarrow_table().column("id").to_pylist())


def files_of(table: Path) -> Dict[str, int]:
    """Every file under ``table`` with its size."""
    out: Dict[str, int] = {}
    for root, _, names in os.walk(table):
        for name in names:
            path = Path(root) / name
            out[str(path.relative_to(table))] = path.stat().st_size
    return out


def latest_version(path: Path) -> int:
    return max(int(n[:LOG_FILE_PREFIX_DIGITS]) for n in os.listdir(path / "_delta_log") if n.endswith(".json"))


def age_log(path: Path, through: int, hours: float) -> None:
    """Make the log files of versions up to ``through`` look ``hours`` old, in commit order."""
    base = time.time() - hours * 3600
    for name in os.listdir(path / "_delta_log"):
        if name[:LOG_FILE_PREFIX_DIGITS].isdigit() and int(name[:LOG_FILE_PREFIX_DIGITS]) <= through:
            stamp = base + int(name[:LOG_FILE_PREFIX_DIGITS])
            os.utime(path / "_delta_log" / name, (stamp, stamp))


def deletion_vector_table(spark: SparkSession, path: Path) -> None:
    """Ten one-file commits of two rows; three files then carry deletion vectors."""
    spark.sql(
        f"CREATE TABLE delta.`{path}` (id BIGINT) USING delta "
        "TBLPROPERTIES ('delta.enableDeletionVectors' = 'true', 'delta.checkpointInterval' = '4')"
    )
    for i in range(10):
        spark.sql(
            f"INSERT INTO delta.`{path}` SELECT /*+ COALESCE(1) */ * FROM VALUES ({i}), ({i + 100}) AS t(id)"
        )
    spark.sql(f"DELETE FROM delta.`{path}` WHERE id IN (101, 103, 105)")


