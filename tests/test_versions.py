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
from packaging.requirements import Requirement

from delta_lifecycle._version import SCALA_BINARY_VERSION, SPARK_LINE
from delta_lifecycle.config import delta_maven_coordinate, jar_path
from delta_lifecycle.lines import SUPPORTED_LINES

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


def line_versions(line: str) -> Dict[str, str]:
    """versions.properties' entries of one line: unsuffixed for the primary one."""
    primary = ".".join(PROPS["spark"].split(".")[:2])
    suffix = "" if line == primary else f".{line}"
    return {key: PROPS[key + suffix] for key in ("spark", "scala", "delta")}


def test_runtime_requirements_admit_every_line_and_pin_nothing() -> None:
    """No exact pin; every line's Spark and delta-spark (as sbt builds them) is admitted."""
    requirements = {
        r.name: r for r in map(Requirement, PYPROJECT["project"]["dependencies"])
    }
    assert set(requirements) == {"pyspark", "delta-spark"}
    assert not any(
        spec.operator in ("==", "===") for r in requirements.values() for spec in r.specifier
    )
    for line in PROPS["lines"].split(","):
        versions = line_versions(line)
        assert requirements["pyspark"].specifier.contains(versions["spark"]), line
        assert requirements["delta-spark"].specifier.contains(versions["delta"]), line
    # The next Spark line has no jar yet, so pip must not pick it for the user.
    assert not requirements["pyspark"].specifier.contains("4.3.0")


def test_supported_lines_follow_versions_properties() -> None:
    """lines.SUPPORTED_LINES is the build's list of lines, with each line's Scala and the
    delta-spark release it is built against."""
    expected = [
        (
            line,
            ".".join(line_versions(line)["scala"].split(".")[:2]),
            line_versions(line)["delta"],
        )
        for line in PROPS["lines"].split(",")
    ]
    assert [(x.line, x.scala, x.delta_version) for x in SUPPORTED_LINES] == expected


def test_test_extra_uses_the_primary_lines_pyspark_and_delta_spark() -> None:
    test_pins = pins(PYPROJECT["project"]["optional-dependencies"]["test"])
    assert test_pins.get("pyspark[connect]") == PROPS["spark"]
    # The stock sessions of the tests load delta-spark by its Python package's version
    # (configure_spark_with_delta_pip), so that version must have the line's Maven artifact.
    assert test_pins.get("delta-spark") == PROPS["delta"]


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
    assert re.fullmatch(rf"{artifact}-{PROPS['project']}-[0-9a-f]{{12}}\.jar", Path(jar_path()).name)


def test_installed_environment_matches_the_pins() -> None:
    """The venv runs what the jar was built against (delta-spark 4.4.1, for one, has no
    Maven artifact for the Spark 4.2 line)."""
    assert pyspark.__version__ == PROPS["spark"]
    assert metadata.version("delta-spark") == PROPS["delta"]
    assert delta_maven_coordinate() == (
        f"io.delta:delta-spark_{SPARK_LINE}_{SCALA_BINARY_VERSION}:{PROPS['delta']}"
    )
