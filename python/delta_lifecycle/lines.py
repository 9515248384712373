"""The Spark lines delta-lifecycle ships a jar for, and which one is running.

The package bundles one jar per Spark line (in its Maven repository `maven/`, see
`bundled_coordinate`)
and requires no exact pyspark or delta-spark version: [`current_line`][delta_lifecycle.lines.current_line] reads the installed
pyspark, delta-spark and Spark's Scala version, and picks the line whose jar and
delta-spark artifact match. Any other combination raises
[`UnsupportedSparkLineError`][delta_lifecycle.errors.UnsupportedSparkLineError] naming the supported ones.

Examples
--------
>>> line_for("4.1.3", "4.4.0").artifact_id
'delta-lifecycle_4.1_2.13'
>>> line_for("3.5.6", "3.3.2").delta_coordinate()
'io.delta:delta-spark_2.12:3.3.3'
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Optional, Set, Tuple

from delta_lifecycle._version import MAVEN_GROUP, __version__
from delta_lifecycle.errors import UnsupportedSparkLineError

__all__ = [
    "SUPPORTED_LINES",
    "SparkLine",
    "current_line",
    "installed_scala_binary_version",
    "line_for",
    "supported_combinations",
]


@dataclass(frozen=True)
class SparkLine:
    """One Spark line with a bundled jar.

    Attributes
    ----------
    line:
        Spark's `major.minor`, e.g. `"3.5"`.
    scala:
        the Scala binary version of the line's jar (that of the line's pyspark).
    delta_version:
        the delta-spark release the jar is built against, e.g. `"3.3.3"`. Any installed
        patch release of its `major.minor` ([`delta_line`][delta_lifecycle.lines.SparkLine.delta_line]) is accepted, and the
        session loads this release's Maven artifact: it is known to exist for the line,
        while a newer patch on PyPI may have none (delta-spark 4.4.1 has no
        `delta-spark_4.2_2.13`).
    """

    line: str
    scala: str
    delta_version: str

    @property
    def delta_line(self) -> str:
        """delta-spark's `major.minor` the jar is built against, e.g. `"3.3"`."""
        return _major_minor(self.delta_version)

    @property
    def artifact_id(self) -> str:
        """This project's artifact for the line, e.g. `delta-lifecycle_3.5_2.12`."""
        return f"delta-lifecycle_{self.line}_{self.scala}"

    @property
    def jar_name(self) -> str:
        """The file name of the line's jar as sbt builds and publishes it (the bundled copy
        carries a digest in its version: `bundled_coordinate`)."""
        return f"{self.artifact_id}-{__version__}.jar"

    @property
    def maven_coordinate(self) -> str:
        """This project's Maven coordinate for the line (`spark-submit --packages`)."""
        return f"{MAVEN_GROUP}:{self.artifact_id}:{__version__}"

    def delta_coordinate(self) -> str:
        """delta-spark's Maven coordinate for the line, at `delta_version`: delta-spark
        names its Spark 3.5 artifact `delta-spark_<scala>` and its Spark 4 ones
        `delta-spark_<line>_<scala>`.

        Examples
        --------
        >>> SparkLine("4.2", "2.13", "4.4.0").delta_coordinate()
        'io.delta:delta-spark_4.2_2.13:4.4.0'
        """
        if self.line.startswith("3."):
            return f"io.delta:delta-spark_{self.scala}:{self.delta_version}"
        return f"io.delta:delta-spark_{self.line}_{self.scala}:{self.delta_version}"

    def describe(self) -> str:
        """`Spark 3.5 (Scala 2.12) with delta-spark 3.3.x`."""
        return f"Spark {self.line} (Scala {self.scala}) with delta-spark {self.delta_line}.x"


#: Every line the package bundles a jar for (docs/spark-lines.md), oldest first.
SUPPORTED_LINES: Tuple[SparkLine, ...] = (
    SparkLine("3.5", "2.12", "3.3.3"),
    SparkLine("4.0", "2.13", "4.4.0"),
    SparkLine("4.1", "2.13", "4.4.0"),
    SparkLine("4.2", "2.13", "4.4.0"),
)


def supported_combinations() -> str:
    """The supported combinations, for messages.

    Examples
    --------
    >>> supported_combinations().split("; ")[0]
    'Spark 3.5 (Scala 2.12) with delta-spark 3.3.x'
    """
    return "; ".join(line.describe() for line in SUPPORTED_LINES)


def _major_minor(version: str) -> str:
    return ".".join(version.split(".")[:2])


def line_for(spark_version: str, delta_version: str, scala: Optional[str] = None) -> SparkLine:
    """Return the line for these pyspark and delta-spark versions (and Spark's Scala binary
    version, when known).

    Raises
    ------
    UnsupportedSparkLineError
        for any combination without a bundled jar: another Spark line (4.3), a delta-spark
        line the jar is not built against (delta-spark 3.2 on Spark 3.5, 3.3 on Spark 4),
        or a Scala build of Spark the line does not ship (Spark 3.5 for Scala 2.13).

    Examples
    --------
    >>> line_for("4.0.1", "4.4.0").line
    '4.0'
    >>> line_for("4.3.0", "4.4.0")
    Traceback (most recent call last):
    ...
    delta_lifecycle.errors.UnsupportedSparkLineError: pyspark 4.3.0 ...
    """
    spark_line = _major_minor(spark_version)
    delta_line = _major_minor(delta_version)
    match = next((line for line in SUPPORTED_LINES if line.line == spark_line), None)
    problem: Optional[str] = None
    if match is None:
        problem = f"there is no delta-lifecycle jar for Spark {spark_line}"
    elif match.delta_line != delta_line:
        problem = (
            f"the Spark {spark_line} jar is built against delta-spark {match.delta_line}.x, "
            f"not {delta_line}"
        )
    elif scala is not None and scala != match.scala:
        problem = (
            f"the Spark {spark_line} jar is built for Scala {match.scala}, and this Spark "
            f"runs Scala {scala}"
        )
    if problem is not None or match is None:
        scala_text = f", Scala {scala}" if scala else ""
        raise UnsupportedSparkLineError(
            f"pyspark {spark_version} with delta-spark {delta_version}{scala_text} is not "
            f"supported: {problem}. Supported: {supported_combinations()}.",
            spark_version=spark_version,
            delta_version=delta_version,
            scala_version=scala,
            supported=supported_combinations(),
        )
    return match


def installed_scala_binary_version() -> Optional[str]:
    """The Scala binary version of the Spark that pyspark runs (`$SPARK_HOME/jars` when
    `SPARK_HOME` is set, else pyspark's own), read from its `spark-core_<scala>` jar;
    `None` when no such jar is found.

    Examples
    --------
    >>> installed_scala_binary_version()
    '2.13'
    """
    _, names = _spark_jars("spark-core_")
    found = {name.split("-", 1)[0] for name in names}
    return found.pop() if len(found) == 1 else None


def _spark_jars(prefix: str) -> Tuple[Path, Set[str]]:
    """The jars directory Spark runs with (`$SPARK_HOME/jars` when `SPARK_HOME` is set, as
    pyspark itself does, else pyspark's own), and what follows `prefix` in the names of its
    jars that start with it, `.jar` left out."""
    import pyspark

    spark_home = os.environ.get("SPARK_HOME")
    home = Path(spark_home) if spark_home else Path(pyspark.__file__).resolve().parent
    jars = home / "jars"
    return jars, {jar.name[len(prefix):-len(".jar")] for jar in jars.glob(f"{prefix}*.jar")}


def installed_delta_version() -> str:
    """The installed delta-spark's version.

    Raises `RuntimeError` when delta-spark is not installed.
    """
    try:
        return metadata.version("delta-spark")
    except metadata.PackageNotFoundError as e:
        raise RuntimeError(
            "delta-spark is not installed; install it next to pyspark "
            f"(supported: {supported_combinations()})."
        ) from e


def current_line() -> SparkLine:
    """The line of the installed pyspark and delta-spark (see [`line_for`][delta_lifecycle.lines.line_for]).

    Examples
    --------
    >>> current_line().line
    '4.2'
    """
    import pyspark

    return line_for(
        pyspark.__version__, installed_delta_version(), installed_scala_binary_version()
    )
