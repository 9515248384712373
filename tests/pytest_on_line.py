"""Run test modules with another Spark line's pyspark and delta-spark.

    python tests/pytest_on_line.py 3.5 tests/test_drop_every_feature.py -q

The line's venv (tests/client_venvs.py, built once and cached) holds the line's pyspark and
delta-spark (``LINE_REQUIREMENTS``) and what the test modules import. This project's package
is the wheel ``DELTA_LIFECYCLE_WHEEL`` names, installed into that venv, or else its sources
(``python/``, with the jars ``make jars`` bundled there, so a rebuilt jar needs no reinstall);
``configure_spark`` picks the line's jar as it would for a user.
``make test-all-lines`` runs this for every line but the primary one.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import List

sys.path.insert(0, str(Path(__file__).resolve().parent))

from client_venvs import LINE_REQUIREMENTS, client_venv, package_env  # noqa: E402

REPO = Path(__file__).resolve().parent.parent

#: What the line-portable test modules import besides pyspark and delta-spark.
TEST_REQUIREMENTS = [
    "pytest>=8",
    "pytest-xdist>=3.8",
    "deltalake>=1.0",
    "pyarrow",
    "hypothesis>=6.100",
]


def main(argv: List[str]) -> int:
    if not argv or argv[0] not in LINE_REQUIREMENTS:
        print(f"usage: pytest_on_line.py {{{','.join(LINE_REQUIREMENTS)}}} [pytest args]")
        return 2
    line, *pytest_args = argv
    python = client_venv(f"pytest-{line}", LINE_REQUIREMENTS[line] + TEST_REQUIREMENTS)
    env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
    env.pop("PYTHONPATH", None)
    env.update(
        **package_env(python),
        PYSPARK_PYTHON=str(python),
        PYSPARK_DRIVER_PYTHON=str(python),
    )
    return subprocess.run([str(python), "-m", "pytest", *pytest_args], env=env, cwd=REPO).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
