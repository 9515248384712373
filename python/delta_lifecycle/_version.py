"""Versions of this package and of the jar it bundles.

They must equal ``versions.properties`` at the repository root (the one place sbt reads
them from); ``tests/test_versions.py`` keeps the two in step.
"""

from __future__ import annotations

__version__ = "0.1.0"

#: The Spark ``major.minor`` line the bundled jar is compiled against; it is part of the
#: jar's artifact name, as in delta-spark's ``delta-spark_4.2_2.13``.
SPARK_LINE = "4.2"

#: The Scala binary version of the bundled jar.
SCALA_BINARY_VERSION = "2.13"

#: The Maven group the jar is published under (``build/sbt lifecycle/publishM2``).
MAVEN_GROUP = "io.github.deltalifecycle"

#: The artifact name of the jar, without the version.
ARTIFACT_ID = f"delta-lifecycle_{SPARK_LINE}_{SCALA_BINARY_VERSION}"
