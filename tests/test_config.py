"""configure_spark and spark_configuration merge with what is already set, without Spark."""

from __future__ import annotations

from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from delta_lifecycle import configure_spark, jar_path, spark_configuration
from delta_lifecycle.config import (
    DELTA_CATALOG,
    LIFECYCLE_CATALOG,
    DELTA_EXTENSION,
    LIFECYCLE_EXTENSION,
    delta_maven_coordinate,
)


def test_fresh_builder_gets_everything() -> None:
    builder = configure_spark(SparkSession.builder.master("local[1]"))
    options = builder._options
    assert options["spark.jars"] == jar_path()
    assert Path(jar_path()).is_file()
    assert options["spark.jars.packages"] == delta_maven_coordinate()
    assert options["spark.sql.extensions"] == f"{DELTA_EXTENSION},{LIFECYCLE_EXTENSION}"
    assert options["spark.sql.catalog.spark_catalog"] == LIFECYCLE_CATALOG
    assert options["spark.master"] == "local[1]"


def test_deltas_own_catalog_is_replaced_by_the_redirect_aware_one() -> None:
    builder = SparkSession.builder.config("spark.sql.catalog.spark_catalog", DELTA_CATALOG)
    options = configure_spark(builder)._options
    assert options["spark.sql.catalog.spark_catalog"] == LIFECYCLE_CATALOG


def test_existing_values_are_kept_and_extended() -> None:
    builder = (
        SparkSession.builder.config("spark.jars", "/opt/a.jar")
        .config("spark.jars.packages", "org.example:x_2.13:1.0")
        .config("spark.sql.extensions", f"com.example.Ext,{DELTA_EXTENSION},com.example.Other")
        .config("spark.sql.catalog.spark_catalog", "com.example.Catalog")
    )
    options = configure_spark(builder, extra_packages=["org.example:y_2.13:2.0"])._options
    assert options["spark.jars"] == f"/opt/a.jar,{jar_path()}"
    assert options["spark.jars.packages"] == (
        f"org.example:x_2.13:1.0,{delta_maven_coordinate()},org.example:y_2.13:2.0"
    )
    # Delta's extension stays where the user put it; ours goes last, after it.
    assert options["spark.sql.extensions"] == (
        f"com.example.Ext,{DELTA_EXTENSION},com.example.Other,{LIFECYCLE_EXTENSION}"
    )
    assert options["spark.sql.catalog.spark_catalog"] == "com.example.Catalog"


def test_configuring_twice_changes_nothing() -> None:
    once = dict(configure_spark(SparkSession.builder)._options)
    twice = dict(configure_spark(configure_spark(SparkSession.builder))._options)
    assert once == twice


def test_misplaced_lifecycle_extension_moves_after_delta() -> None:
    merged = spark_configuration(
        {"spark.sql.extensions": f"{LIFECYCLE_EXTENSION},{DELTA_EXTENSION}"}
    )
    assert merged["spark.sql.extensions"] == f"{DELTA_EXTENSION},{LIFECYCLE_EXTENSION}"


def test_explicit_delta_package_wins() -> None:
    pinned = "io.delta:delta-spark_4.2_2.13:4.4.0-custom"
    merged = spark_configuration({"spark.jars.packages": pinned})
    assert merged["spark.jars.packages"] == pinned


def test_rejects_non_builders() -> None:
    with pytest.raises(TypeError):
        configure_spark("local[2]")  # type: ignore[arg-type]


def test_packages_resolve_from_maven_central_and_the_local_repository_only() -> None:
    """The bundled Ivy settings name no resolver but the local Maven repository and Maven
    Central; a session's own settings file wins."""
    import xml.etree.ElementTree as ET

    merged = spark_configuration({})
    root = ET.parse(merged["spark.jars.ivySettings"]).getroot()
    roots = [r.get("root") for r in root.iter("ibiblio")]
    assert roots == ["file:${user.home}/.m2/repository", "https://repo1.maven.org/maven2/"]

    own = spark_configuration({"spark.jars.ivySettings": "/etc/ivy/mine.xml"})
    assert own["spark.jars.ivySettings"] == "/etc/ivy/mine.xml"


def test_hadoop_aws_follows_the_hadoop_spark_runs_with(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The version comes from the ``hadoop-client-api`` jar in Spark's jars directory, the
    one ``SPARK_HOME`` names when it is set."""
    from delta_lifecycle import hadoop_aws_package
    from delta_lifecycle.config import hadoop_version

    import pyspark

    bundled = sorted((Path(pyspark.__file__).parent / "jars").glob("hadoop-client-api-*.jar"))
    assert [jar.name for jar in bundled] == [f"hadoop-client-api-{hadoop_version()}.jar"]
    assert hadoop_aws_package() == f"org.apache.hadoop:hadoop-aws:{hadoop_version()}"

    (tmp_path / "jars").mkdir()
    monkeypatch.setenv("SPARK_HOME", str(tmp_path))
    with pytest.raises(RuntimeError, match="none"):
        hadoop_aws_package()
    (tmp_path / "jars" / "hadoop-client-api-9.8.7.jar").touch()
    assert hadoop_aws_package() == "org.apache.hadoop:hadoop-aws:9.8.7"
