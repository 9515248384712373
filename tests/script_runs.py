"""Scripts the tests run in subprocesses: one that reports a result, and crash scripts, whose
JVM halts at a named step of a statement."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, Sequence

from spark_sessions import SESSION_CONF, SessionSpec, preamble


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
