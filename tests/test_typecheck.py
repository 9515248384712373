"""The package is mypy --strict clean (it ships py.typed, so users' type checkers read it)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]


def test_mypy_strict() -> None:
    run = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "python/delta_lifecycle"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stdout + run.stderr


def test_one_docstring_style() -> None:
    """numpy-style sections (Parameters, Returns, Raises, Attributes, Examples) throughout:
    no reST field lists, no ``Example::`` blocks, and every doctest under an Examples
    heading."""
    import ast
    import re

    for source in sorted((REPO_ROOT / "python" / "delta_lifecycle").rglob("*.py")):
        tree = ast.parse(source.read_text())
        nodes = [tree] + [
            n
            for n in ast.walk(tree)
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        ]
        for node in nodes:
            doc = ast.get_docstring(node, clean=False) or ""
            where = f"{source.name}:{getattr(node, 'name', '<module>')}"
            assert not re.search(r"^\s*:(param|type|return|rtype|raises)\b", doc, re.M), where
            assert "Example::" not in doc, where
            if ">>>" in doc:
                assert re.search(r"^\s*Examples\n\s*--------$", doc, re.M), where
