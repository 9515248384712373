"""Virtual environments for the other clients the tests run: another Spark line, an older
delta-spark, other deltalake versions. Each is built once from its pip requirements and cached
across runs, so only the first run of a machine pays the downloads.

    python = client_venv("delta-spark-3.3", ["pyspark==3.5.6", "delta-spark==3.3.2"])
    result = run_python(python, "import pyspark; print(pyspark.__version__)")

The cache lives in ``DELTA_LIFECYCLE_VENV_CACHE`` (default ``~/.cache/delta-lifecycle/venvs``),
one folder per name and requirement set; a lock file keeps two test processes from building the
same venv at once, and a venv is only used once its build finished (a ``ready`` marker).
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Mapping, Optional, Sequence

VENV_CACHE = Path(
    os.environ.get(
        "DELTA_LIFECYCLE_VENV_CACHE", Path.home() / ".cache" / "delta-lifecycle" / "venvs"
    )
)

_READY = "ready"
#: Which wheel of this project a venv holds (its SHA-256), once package_env installed it.
_PACKAGE = "delta-lifecycle-wheel"

REPO = Path(__file__).resolve().parents[1]

#: The wheel ``make test`` built (``DELTA_LIFECYCLE_WHEEL``): other lines' venvs run this
#: project's package as users install it. Without it (a developer's run of one module) they
#: import it from the checkout's ``python/``.
WHEEL = os.environ.get("DELTA_LIFECYCLE_WHEEL")

#: The pyspark and delta-spark of each Spark line's venv (tests/test_spark_lines.py checks these
#: are the supported lines).
LINE_REQUIREMENTS: Dict[str, List[str]] = {
    "3.5": ["pyspark==3.5.6", "delta-spark==3.3.2"],
    "4.0": ["pyspark==4.0.1", "delta-spark==4.4.0"],
    "4.1": ["pyspark==4.1.3", "delta-spark==4.4.0"],
    "4.2": ["pyspark==4.2.0", "delta-spark==4.4.0"],
}


def client_venv(
    name: str, requirements: Sequence[str], python: str = sys.executable
) -> Path:
    """The python executable of a venv holding exactly ``requirements`` (pip specifiers or
    paths to wheels), built on first use with ``python``. ``name`` only makes the folder
    readable; the requirements decide which venv is reused."""
    key = hashlib.sha256("\n".join([python, *requirements]).encode()).hexdigest()[:12]
    home = VENV_CACHE / f"{name}-{key}"
    executable = home / "bin" / "python"
    VENV_CACHE.mkdir(parents=True, exist_ok=True)
    with open(VENV_CACHE / f"{name}-{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (home / _READY).exists():
            _build(home, requirements, python)
    return executable


def package_env(python: Path) -> Dict[str, str]:
    """The environment under which ``python`` (of a venv from :func:`client_venv`) imports this
    project's package: none when the built wheel is installed into its venv (``WHEEL``),
    else ``PYTHONPATH`` on the checkout's sources."""
    if not WHEEL:
        return {"PYTHONPATH": str(REPO / "python")}
    wheel = Path(WHEEL)
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    home = python.parent.parent
    with open(f"{home}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        marker = home / _PACKAGE
        if not marker.is_file() or marker.read_text().strip() != digest:
            subprocess.run(
                [str(python), "-m", "pip", "install", "--quiet", "--force-reinstall",
                 "--no-deps", str(wheel)],
                check=True,
            )
            marker.write_text(digest + "\n")
    return {}


def run_python(
    python: Path,
    code: str,
    *args: str,
    env: Optional[Mapping[str, str]] = None,
    timeout: float = 900,
) -> subprocess.CompletedProcess[str]:
    """Run ``code`` with the venv's interpreter and return the finished process; the caller
    asserts on ``returncode`` and the output. The venv sees none of this process's
    ``PYTHONPATH`` (so not this project's sources) unless ``env`` passes one."""
    child_env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    child_env.update(
        {"PYSPARK_PYTHON": str(python), "PYSPARK_DRIVER_PYTHON": str(python)}
    )
    child_env.update(env or {})
    return subprocess.run(
        [str(python), "-c", code, *args],
        env=child_env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def _build(home: Path, requirements: Sequence[str], python: str) -> None:
    # A half-built venv from an interrupted run is rebuilt from scratch.
    shutil.rmtree(home, ignore_errors=True)
    subprocess.run([python, "-m", "venv", str(home)], check=True)
    pip = [str(home / "bin" / "python"), "-m", "pip", "install", "--quiet"]
    subprocess.run([*pip, "--upgrade", "pip"], check=True)
    subprocess.run([*pip, *requirements], check=True)
    (home / _READY).write_text("\n".join(requirements) + "\n")
