"""Versions are pinned once for sbt (versions.properties) and once for Python
(pyproject.toml); they must agree with each other, with the package, and with the venv."""

from __future__ import annotations

import re
import sys
from importlib import metadata
from pathlib import Path
from typing import Dict, List

import pyspark

import delta_lifecycle
from delta_lifecycle import maven_coordinate
from delta_lifecycle._version import SCALA_BINARY_VERSION, SPARK_LINE
from delta_lifecycle.config import delta_maven_coordinate, jar_path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

REPO_ROOT = Path(__file__).resolve().parents[1]


def versions_properties() -> Dict[str, str]:
    props: Dict[str, str] = {}
    for line in (REPO_ROOT / "versions.properties").read_text().splitlines():
        line = line.strip()
        if line and not line.startswith(("#", "!")) and "=" in line:
            key, value = line.split("=", 1)
            props[key.strip()] = value.strip()
    return props


def pins(requirements: List[str]) -> Dict[str, str]:
    """name (with extras) -> exact version, for the ``name==version`` requirements."""
    found: Dict[str, str] = {}
    for req in requirements:
        m = re.fullmatch(r"\s*([A-Za-z0-9_.\-]+(?:\[[^\]]*\])?)\s*==\s*([^\s;]+)\s*", req)
        if m:
            found[m.group(1).lower()] = m.group(2)
    return found


PROPS = versions_properties()
PYPROJECT = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())


def test_runtime_pins_equal_versions_properties() -> None:
    dependencies = pins(PYPROJECT["project"]["dependencies"])
    assert dependencies == {"pyspark": PROPS["spark"], "delta-spark": PROPS["delta"]}


def test_test_extra_uses_the_same_pyspark() -> None:
    test_pins = pins(PYPROJECT["project"]["optional-dependencies"]["test"])
    assert test_pins.get("pyspark[connect]") == PROPS["spark"]


def test_package_version_equals_versions_properties() -> None:
    assert PYPROJECT["project"]["version"] == PROPS["project"]
    assert delta_lifecycle.__version__ == PROPS["project"]
    assert metadata.version("delta-lifecycle") == PROPS["project"]


def test_jar_coordinates_follow_the_build() -> None:
    spark_line = ".".join(PROPS["spark"].split(".")[:2])
    scala_binary = ".".join(PROPS["scala"].split(".")[:2])
    assert (SPARK_LINE, SCALA_BINARY_VERSION) == (spark_line, scala_binary)
    artifact = f"delta-lifecycle_{spark_line}_{scala_binary}"
    assert maven_coordinate() == f"io.github.deltalifecycle:{artifact}:{PROPS['project']}"
    assert Path(jar_path()).name == f"{artifact}-{PROPS['project']}.jar"


def test_installed_environment_matches_the_pins() -> None:
    """The venv runs what the jar was built against (delta-spark 4.4.1, for one, has no
    Maven artifact for the Spark 4.2 line)."""
    assert pyspark.__version__ == PROPS["spark"]
    assert metadata.version("delta-spark") == PROPS["delta"]
    assert delta_maven_coordinate() == (
        f"io.delta:delta-spark_{SPARK_LINE}_{SCALA_BINARY_VERSION}:{PROPS['delta']}"
    )
