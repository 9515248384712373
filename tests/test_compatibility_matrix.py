"""The compatibility matrix of docs/compatibility.md is generated from the capability file the jar
reads."""

from __future__ import annotations

import subprocess
import sys

from environment import REPO_ROOT


def test_docs_matrix_is_up_to_date() -> None:
    done = subprocess.run(
        [sys.executable, str(REPO_ROOT / "scripts" / "render_compatibility.py"), "--check"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
