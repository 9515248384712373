"""configure_spark and spark_configuration merge with what is already set, without Spark."""

from __future__ import annotations

import hashlib
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from delta_lifecycle import configure_spark, jar_path, spark_configuration
from delta_lifecycle.config import (
    BUNDLED_REPOSITORY,
    bundled_coordinate,
    bundled_repository_url,
    DELTA_CATALOG,
    LIFECYCLE_CATALOG,
    DELTA_EXTENSION,
    LIFECYCLE_EXTENSION,
    ROUTING_CATALOG,
    delta_maven_coordinate,
)
from spark_sessions import fresh_builder


def test_fresh_builder_gets_everything() -> None:
    builder = configure_spark(fresh_builder(master="local[1]"))
    options = builder._options
    # Every jar comes as a package, so Spark ships them all to the executors; spark.jars
    # would replace the resolved packages' jars (issue: plain writes failed on a cluster).
    assert "spark.jars" not in options
    assert options["spark.jars.packages"] == f"{delta_maven_coordinate()},{bundled_coordinate()}"
    assert options["spark.jars.repositories"] == bundled_repository_url()
    assert options["spark.sql.extensions"] == f"{DELTA_EXTENSION},{LIFECYCLE_EXTENSION}"
    assert options["spark.sql.catalog.spark_catalog"] == LIFECYCLE_CATALOG
    assert options["spark.master"] == "local[1]"


def test_deltas_own_catalog_is_replaced_by_the_redirect_aware_one() -> None:
    builder = fresh_builder({"spark.sql.catalog.spark_catalog": DELTA_CATALOG})
    options = configure_spark(builder)._options
    assert options["spark.sql.catalog.spark_catalog"] == LIFECYCLE_CATALOG


def test_unity_catalog_catalogs_are_wrapped_to_follow_redirects() -> None:
    uc = "io.unitycatalog.spark.UCSingleCatalog"
    builder = fresh_builder({
        "spark.sql.catalog.lake": uc,
        "spark.sql.catalog.lake.uri": "http://uc.example.org:8080",
        "spark.sql.catalog.iceberg": "org.apache.iceberg.spark.SparkCatalog",
    })
    once = dict(configure_spark(builder)._options)
    assert once["spark.sql.catalog.lake"] == ROUTING_CATALOG
    assert once["spark.sql.catalog.lake.deltaLifecycle.delegate"] == uc
    assert once["spark.sql.catalog.lake.uri"] == "http://uc.example.org:8080"
    # A catalog that serves no Delta tables is left as it is.
    assert once["spark.sql.catalog.iceberg"] == "org.apache.iceberg.spark.SparkCatalog"
    assert dict(configure_spark(builder)._options) == once


def test_existing_values_are_kept_and_extended() -> None:
    builder = fresh_builder({
        "spark.jars": "/opt/a.jar",
        "spark.jars.packages": "org.example:x_2.13:1.0",
        "spark.sql.extensions": f"com.example.Ext,{DELTA_EXTENSION},com.example.Other",
        "spark.sql.catalog.spark_catalog": "com.example.Catalog",
    })
    builder = builder.config("spark.jars.repositories", "https://repo.example.org/maven")
    options = configure_spark(builder, extra_packages=["org.example:y_2.13:2.0"])._options
    assert options["spark.jars"] == "/opt/a.jar"
    assert options["spark.jars.packages"] == (
        f"org.example:x_2.13:1.0,{delta_maven_coordinate()},{bundled_coordinate()},"
        "org.example:y_2.13:2.0"
    )
    assert options["spark.jars.repositories"] == (
        f"https://repo.example.org/maven,{bundled_repository_url()}"
    )
    # Delta's extension stays where the user put it; ours goes last, after it.
    assert options["spark.sql.extensions"] == (
        f"com.example.Ext,{DELTA_EXTENSION},com.example.Other,{LIFECYCLE_EXTENSION}"
    )
    assert options["spark.sql.catalog.spark_catalog"] == "com.example.Catalog"


def test_configuring_twice_changes_nothing() -> None:
    once = dict(configure_spark(fresh_builder())._options)
    twice = dict(configure_spark(configure_spark(fresh_builder()))._options)
    assert once == twice


def test_misplaced_lifecycle_extension_moves_after_delta() -> None:
    merged = spark_configuration(
        {"spark.sql.extensions": f"{LIFECYCLE_EXTENSION},{DELTA_EXTENSION}"}
    )
    assert merged["spark.sql.extensions"] == f"{DELTA_EXTENSION},{LIFECYCLE_EXTENSION}"


def test_explicit_delta_package_wins() -> None:
    pinned = "io.delta:delta-spark_4.2_2.13:4.4.0-custom"
    merged = spark_configuration({"spark.jars.packages": pinned})
    assert merged["spark.jars.packages"] == f"{pinned},{bundled_coordinate()}"


def test_rejects_non_builders() -> None:
    with pytest.raises(TypeError):
        configure_spark("local[2]")  # type: ignore[arg-type]


def test_bundled_jar_is_a_maven_artifact_of_its_own_build() -> None:
    """The bundled repository holds the jar and a POM under the coordinate configure_spark
    asks for; its version is the release plus the jar's digest, so Ivy's cache never serves
    an earlier build of the same release."""
    group, artifact, version = bundled_coordinate().split(":")
    release = BUNDLED_REPOSITORY.joinpath(*group.split("."), artifact, version)
    jar = release / f"{artifact}-{version}.jar"
    assert Path(jar_path()) == jar and jar.is_file()
    assert hashlib.sha256(jar.read_bytes()).hexdigest().startswith(version.split("-", 1)[1])
    pom = ET.parse(release / f"{artifact}-{version}.pom").getroot()
    ns = {"m": "http://maven.apache.org/POM/4.0.0"}
    assert [pom.findtext(f"m:{k}", namespaces=ns) for k in ("groupId", "artifactId", "version")] == [
        group, artifact, version
    ]
    # No dependencies: delta-spark is a package of the session's own.
    assert pom.find("m:dependencies", ns) is None
    assert bundled_repository_url() == BUNDLED_REPOSITORY.as_uri()


def test_a_published_lifecycle_package_wins_over_the_bundled_one() -> None:
    published = "io.github.deltalifecycle:delta-lifecycle_4.2_2.13:0.1.0"
    merged = spark_configuration({"spark.jars.packages": published})
    assert merged["spark.jars.packages"] == f"{published},{delta_maven_coordinate()}"
    assert "spark.jars.repositories" not in merged


def test_ivy_settings_and_jars_are_left_to_the_session() -> None:
    own = {"spark.jars.ivySettings": "/etc/ivy/mine.xml", "spark.jars": "/opt/a.jar"}
    merged = spark_configuration(own)
    assert "spark.jars.ivySettings" not in merged and "spark.jars" not in merged


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
