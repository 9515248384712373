"""The wheel holds exactly the package's sources and bundled jars, and the tests run it.

A user installs the wheel, not the checkout, so a module left out of it (a new subpackage that
package discovery does not take) breaks every user while an editable install passes every test.
The wheel checked is ``DELTA_LIFECYCLE_WHEEL`` (``make test`` builds it once and sets it), or one
built here from the checkout.
"""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Set

import pytest

import delta_lifecycle

REPO_ROOT = Path(__file__).resolve().parents[1]
SOURCE = REPO_ROOT / "python" / "delta_lifecycle"


def source_files() -> Set[str]:
    """Every file of the package as the checkout holds it, relative to python/: modules,
    typing marker, bundled jars and POMs (nothing that Python or an editor leaves behind)."""
    files = set()
    for path in SOURCE.rglob("*"):
        if not path.is_file() or "__pycache__" in path.parts or path.suffix == ".pyc":
            continue
        files.add(path.relative_to(SOURCE.parent).as_posix())
    return files


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    given = os.environ.get("DELTA_LIFECYCLE_WHEEL")
    if given:
        return Path(given)
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(out),
         str(REPO_ROOT)],
        check=True, capture_output=True, timeout=600,
    )
    (built,) = out.glob("delta_lifecycle-*.whl")
    return built


def test_the_wheel_holds_exactly_the_package(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        packaged = {
            name for name in archive.namelist()
            if name.startswith("delta_lifecycle/") and not name.endswith("/")
        }
    sources = source_files()
    assert sources - packaged == set(), "missing from the wheel"
    assert packaged - sources == set(), "in the wheel but not in the sources"
    assert any(name.endswith(".jar") for name in packaged), "no bundled jar"


def test_the_tests_import_the_installed_package() -> None:
    """Under ``make test`` (``DELTA_LIFECYCLE_WHEEL`` set) the package comes from the installed
    wheel: a test run against python/ would not see a module the wheel lacks."""
    if not os.environ.get("DELTA_LIFECYCLE_WHEEL"):
        pytest.skip("make test installs the wheel and sets DELTA_LIFECYCLE_WHEEL")
    imported = Path(delta_lifecycle.__file__).resolve()
    assert SOURCE not in imported.parents, imported
    assert "site-packages" in imported.parts, imported
