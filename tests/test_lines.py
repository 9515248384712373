"""The choice of the bundled jar and delta-spark artifact from the installed versions.
Pure Python: no Spark session."""

from __future__ import annotations

import pytest

from delta_lifecycle.errors import UnsupportedSparkLineError
from delta_lifecycle.lines import SUPPORTED_LINES, line_for, supported_combinations


@pytest.mark.parametrize(
    ("spark", "delta", "scala", "artifact", "delta_coordinate"),
    [
        ("3.5.6", "3.3.2", "2.12", "delta-lifecycle_3.5_2.12", "io.delta:delta-spark_2.12:3.3.3"),
        ("3.5.3", "3.3.0", None, "delta-lifecycle_3.5_2.12", "io.delta:delta-spark_2.12:3.3.3"),
        ("4.0.1", "4.4.0", "2.13", "delta-lifecycle_4.0_2.13", "io.delta:delta-spark_4.0_2.13:4.4.0"),
        ("4.1.3", "4.4.0", "2.13", "delta-lifecycle_4.1_2.13", "io.delta:delta-spark_4.1_2.13:4.4.0"),
        ("4.2.0", "4.4.0", "2.13", "delta-lifecycle_4.2_2.13", "io.delta:delta-spark_4.2_2.13:4.4.0"),
        # PyPI's delta-spark 4.4.1 has no delta-spark_4.2_2.13 on Maven: the built-against
        # release is loaded.
        ("4.2.1", "4.4.1", None, "delta-lifecycle_4.2_2.13", "io.delta:delta-spark_4.2_2.13:4.4.0"),
    ],
)
def test_supported_combination_picks_its_jar_and_delta_artifact(
    spark: str, delta: str, scala: str | None, artifact: str, delta_coordinate: str
) -> None:
    line = line_for(spark, delta, scala)
    assert line.artifact_id == artifact
    assert line.jar_name == f"{artifact}-{line.maven_coordinate.rsplit(':', 1)[1]}.jar"
    assert line.delta_coordinate() == delta_coordinate


@pytest.mark.parametrize(
    ("spark", "delta", "scala", "why"),
    [
        ("4.3.0", "4.4.0", "2.13", "no delta-lifecycle jar for Spark 4.3"),
        ("3.4.1", "2.4.0", "2.12", "no delta-lifecycle jar for Spark 3.4"),
        ("3.5.1", "3.2.0", "2.12", "built against delta-spark 3.3.x, not 3.2"),
        ("4.0.1", "3.2.0", "2.13", "built against delta-spark 4.4.x, not 3.2"),
        ("4.2.0", "4.3.0", "2.13", "built against delta-spark 4.4.x, not 4.3"),
        ("3.5.6", "3.3.2", "2.13", "built for Scala 2.12, and this Spark runs Scala 2.13"),
    ],
)
def test_unsupported_combination_names_every_supported_one(
    spark: str, delta: str, scala: str, why: str
) -> None:
    with pytest.raises(UnsupportedSparkLineError) as caught:
        line_for(spark, delta, scala)
    error = caught.value
    assert why in str(error)
    assert f"pyspark {spark} with delta-spark {delta}" in str(error)
    for line in SUPPORTED_LINES:
        assert line.describe() in str(error)
    assert (error.spark_version, error.delta_version, error.scala_version) == (spark, delta, scala)
    assert error.supported == supported_combinations()
