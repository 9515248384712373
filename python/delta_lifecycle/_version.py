"""Versions of this package and of the jar it bundles.

They must equal `versions.properties` at the repository root (the one place sbt reads
them from); `tests/test_versions.py` keeps the two in step.
"""

from __future__ import annotations

__version__ = "0.1.0"

#: The primary Spark ``major.minor`` line (the one the tests and CI run on); it is part of
#: the jar's artifact name, as in delta-spark's ``delta-spark_4.2_2.13``. The package
#: bundles a jar for every line of ``delta_lifecycle.lines.SUPPORTED_LINES``.
SPARK_LINE = "4.2"

#: The Scala binary version of the primary line's jar.
SCALA_BINARY_VERSION = "2.13"

#: The Maven group the jar is published under (``build/sbt lifecycle/publishM2``).
MAVEN_GROUP = "io.github.deltalifecycle"

#: The artifact name of the primary line's jar, without the version.
ARTIFACT_ID = f"delta-lifecycle_{SPARK_LINE}_{SCALA_BINARY_VERSION}"
