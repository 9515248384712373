"""The smoke suite of the other Spark lines: for each line in
``DELTA_LIFECYCLE_SMOKE_LINES`` (e.g. ``"3.5 4.0 4.1"``; none by default), a venv with that
line's pyspark and delta-spark (tests/client_venvs.py) runs every statement once with this
package and the line's bundled jar (tests/spark_line_smoke.py), then stock delta-spark of the
same line (no extension) and delta-rs read what it wrote. ``make smoke-lines`` builds every
line's jar and runs it on every line but the primary one.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

import pytest
from deltalake import DeltaTable

from client_venvs import LINE_REQUIREMENTS, client_venv, package_env, run_python
from spark_sessions import SESSION_CONF
from table_helpers import documented_droppable
from delta_lifecycle.lines import SUPPORTED_LINES

REPO = Path(__file__).resolve().parents[1]
SCRIPT = Path(__file__).resolve().parent / "spark_line_smoke.py"

#: The pip requirements of each line's venv: the versions versions.properties builds against.

LINES = os.environ.get("DELTA_LIFECYCLE_SMOKE_LINES", "").split()

pytestmark = pytest.mark.skipif(
    not LINES, reason="set DELTA_LIFECYCLE_SMOKE_LINES (make smoke-lines) to run"
)


def test_every_supported_line_has_requirements() -> None:
    assert sorted(LINE_REQUIREMENTS) == sorted(line.line for line in SUPPORTED_LINES)


def run_smoke(
    python: Path, workdir: Path, conf: Optional[Dict[str, str]] = None
) -> Dict[str, Any]:
    """Run the smoke script with ``python`` in ``workdir``; ``conf`` (default
    :data:`SESSION_CONF`) may name a master, such as a standalone cluster's."""
    started = time.monotonic()
    settings = json.dumps(SESSION_CONF if conf is None else conf)
    run = run_python(
        python,
        f"import runpy, sys; sys.argv = {[str(SCRIPT), str(workdir), settings]!r}; "
        f"runpy.run_path({str(SCRIPT)!r}, run_name='__main__')",
        env=package_env(python),
        timeout=1200,
    )
    results = [l for l in run.stdout.splitlines() if l.startswith("RESULT ")]
    assert run.returncode == 0 and results, (run.stdout[-3000:], run.stderr[-6000:])
    parsed: Dict[str, Any] = json.loads(results[-1][len("RESULT "):])
    # Where the run's time went (shown by pytest -rA): session start and each statement group.
    took = time.monotonic() - started
    print(f"{python.parent.parent.name}: {took:.0f} s, {parsed.get('timings')}")
    return parsed


def line_python(line: str) -> Path:
    """The Python of ``line``'s venv (built on first use)."""
    return client_venv(f"spark-line-{line}", LINE_REQUIREMENTS[line])


@pytest.mark.parametrize("line", LINES)
def test_every_statement_on_the_line(line: str, tmp_path: Path) -> None:
    assert_smoke_result(line, run_smoke(line_python(line), tmp_path), tmp_path)


def assert_smoke_result(line: str, seen: Dict[str, Any], tmp_path: Path) -> None:
    """What every line's smoke run must have seen, and delta-rs reads its tables."""
    assert seen["line"] == line and seen["spark"].startswith(line), seen
    # docs/sql-reference.md lists what DROP FEATURE removes on the line: the code's own list.
    family = "3.5" if line == "3.5" else "4.x"
    assert seen["droppable"] == documented_droppable(family)
    # On 3.5 this project drops what delta-spark 3.3 cannot; on 4.x delta-spark drops them all.
    assert seen["droppable_beyond_stock"] == (
        documented_droppable(family, beyond_stock=True)
    )
    routed = seen["routed"]
    assert routed["name"] == routed["path"] == [1, 2, 3, 4, 5]
    assert routed["dataframe_writer_only"] == [1, 2]
    assert seen["deletion_vectors"] == "dropped"
    if line == "3.5":
        # delta-spark 3.3 opens a load(path) before any rule can route it (docs/spark-lines.md).
        assert routed["dataframe"] == "refused: DELTA_UNSUPPORTED_FEATURES_FOR_READ"
    else:
        assert routed["dataframe"] == [1, 2, 3, 4, 5]

    blockers = ["deletionVectors", "v2Checkpoint"]
    assert seen["compatibility_before"] == ["no", blockers, blockers]
    assert sorted(seen["client_drops"]) == [[f, "dropped"] for f in blockers]
    assert seen["compatibility_after"] == ["yes", [], []]

    # Stock delta-spark of the same line (a session without the extension, started in the same
    # process once the extension's stopped) read every table the statements touched.
    stock = seen["stock"]
    assert stock["dropped"] == [0, 1, 2, 3, 10]
    assert "v2Checkpoint" not in stock["dropped_features"]
    assert "checkpointProtection" not in stock["dropped_features"]
    assert stock["policy"] == list(range(7))
    assert stock["for_client"] == [1, 2, 3]
    assert not set(blockers) & set(stock["for_client_features"])
    assert stock["dvs"] == [1, 3]
    assert "deletionVectors" not in stock["dvs_features"]
    assert stock["redirect_src"] == stock["redirect_dest"] == [1, 2, 3, 4, 5]

    # delta-rs too.
    for name, expected in (
        ("dropped", [0, 1, 2, 3, 10]),
        ("for_client", [1, 2, 3]),
        ("dvs", [1, 3]),
        ("wo_dest", [1, 2]),
        ("policy", list(range(7))),
        ("redirect_src", [1, 2, 3, 4, 5]),
        ("redirect_dest", [1, 2, 3, 4, 5]),
    ):
        table = DeltaTable(str(tmp_path / name))
        assert sorted(table.to_pyarrow_table().column("id").to_pylist()) == expected, name
