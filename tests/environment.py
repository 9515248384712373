"""What the test run's environment says, and what importing this module changes in it.

``tests/conftest.py`` imports it first, so its changes are made before any test module is
collected or any JVM starts:

- Python workers run this interpreter (``PYSPARK_PYTHON``, ``PYSPARK_DRIVER_PYTHON``);
- every JVM that PySpark launches from the run, in this process and in its subprocesses, is a
  test JVM: its driver and executors get :data:`TEST_JVM_OPTION` (``PYSPARK_SUBMIT_ARGS``), and
  drivers map the class-data archive (tests/jvm_archive.py), made first by the controller;
- :data:`PRODUCTION_ENV` keeps the environment as it was, for a test that starts a production
  session (no test switches).
"""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path
from typing import Dict

import pytest

from jvm_archive import ensure_archive, java_options as jvm_archive_options

REPO_ROOT = Path(__file__).resolve().parents[1]

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
#: The JIT of the test JVMs: C1 only. Two thirds of a test session's start went to the JIT, most
#: of it C2 compiling code that the tests' small tables never run long enough to pay back;
#: results do not depend on it. ``DELTA_LIFECYCLE_TEST_JIT`` replaces it ("" for the JVM's
#: default, tiered up to C2).
TEST_JIT_OPTIONS = os.environ.get("DELTA_LIFECYCLE_TEST_JIT", "-XX:TieredStopAtLevel=1")
_driver_options = " ".join(
    o for o in (TEST_JVM_OPTION, TEST_JIT_OPTIONS, jvm_archive_options()) if o
)
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
