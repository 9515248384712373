"""Session configuration: the bundled jar, delta-spark, both extensions, Delta's catalog."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence

from pyspark.sql import SparkSession

from delta_lifecycle.lines import current_line

__all__ = [
    "DELTA_CATALOG",
    "LIFECYCLE_CATALOG",
    "DELTA_EXTENSION",
    "LIFECYCLE_EXTENSION",
    "configure_spark",
    "delta_maven_coordinate",
    "hadoop_aws_package",
    "hadoop_version",
    "ivy_settings_path",
    "jar_path",
    "maven_coordinate",
    "spark_configuration",
]

#: Delta's own session extension; it must come before :data:`LIFECYCLE_EXTENSION`.
DELTA_EXTENSION = "io.delta.sql.DeltaSparkSessionExtension"

#: This project's session extension. Its parser wraps the one it is given, so it must be
#: listed after Delta's to see its statements first and hand every other one to Delta.
LIFECYCLE_EXTENSION = "io.github.deltalifecycle.sql.DeltaLifecycleSparkSessionExtension"

#: Delta's catalog.
DELTA_CATALOG = "org.apache.spark.sql.delta.catalog.DeltaCatalog"

#: This project's catalog, installed as ``spark_catalog``: Delta's catalog, made
#: redirect-aware (tables by name and ``delta.`path``` follow their redirect).
LIFECYCLE_CATALOG = "io.github.deltalifecycle.sql.LifecycleCatalog"

def jar_path() -> str:
    """Return the absolute path of the bundled delta-lifecycle jar for the running Spark line.

    The package bundles one jar per Spark line; the installed pyspark, delta-spark and
    Spark's Scala version choose it (:func:`delta_lifecycle.lines.current_line`).

    Raises
    ------
    UnsupportedSparkLineError
        when the installed versions match no bundled line.
    FileNotFoundError
        when the package was installed without that line's jar (for example from a
        checkout where only ``make jar``, the primary line, has run).

    Examples
    --------
    >>> jar_path()  # doctest: +SKIP
    '/.../site-packages/delta_lifecycle/jars/delta-lifecycle_4.2_2.13-0.1.0.jar'
    """
    line = current_line()
    jar = Path(__file__).resolve().parent / "jars" / line.jar_name
    if not jar.is_file():
        raise FileNotFoundError(
            f"The delta-lifecycle jar for Spark {line.line} is missing: {jar} does not exist. "
            "In a checkout of the repository, run `make jar` (the primary line) or "
            "`make jars` (every line) to build the jars with build/sbt and copy them into "
            "python/delta_lifecycle/jars/, then reinstall the package if it was not "
            "installed in editable mode."
        )
    return str(jar)


def ivy_settings_path() -> str:
    """Return the Ivy settings file that resolves ``spark.jars.packages`` from the local
    Maven repository and Maven Central only.

    Spark's built-in resolver chain also asks repos.spark-packages.org; where that host
    cannot be reached, the first session prints a "Host ... not found" line for every
    artifact. :func:`configure_spark` uses this file unless ``spark.jars.ivySettings`` is
    already set.

    Examples
    --------
    >>> ivy_settings_path()  # doctest: +SKIP
    '/.../site-packages/delta_lifecycle/ivysettings.xml'
    """
    return str(Path(__file__).resolve().parent / "ivysettings.xml")


def maven_coordinate() -> str:
    """Return the Maven coordinate of this project's jar for the running Spark line.

    Use it with ``spark-submit --packages`` (or ``spark.jars.packages``) where the jar is
    published, instead of shipping the bundled file.

    Examples
    --------
    >>> maven_coordinate()
    'io.github.deltalifecycle:delta-lifecycle_4.2_2.13:0.1.0'
    """
    return current_line().maven_coordinate


def delta_maven_coordinate() -> str:
    """Return the delta-spark Maven coordinate matching the installed pyspark and delta-spark.

    The artifact is the running line's (``delta-spark_2.12`` for Spark 3.5,
    ``delta-spark_<line>_2.13`` for Spark 4), at the delta-spark release the line's jar is
    built against (the installed delta-spark may be another patch of it, which may have no
    Maven artifact for the line: see :class:`~delta_lifecycle.lines.SparkLine`).

    Examples
    --------
    >>> delta_maven_coordinate()
    'io.delta:delta-spark_4.2_2.13:4.4.0'
    """
    return current_line().delta_coordinate()


def hadoop_version() -> str:
    """Return the version of the Hadoop client bundled with the installed pyspark.

    Read from the name of ``hadoop-client-api-<version>.jar`` in the jars directory Spark
    runs with: ``$SPARK_HOME/jars`` when ``SPARK_HOME`` is set, as pyspark itself does, else
    the one inside the pyspark package.

    Returns
    -------
    the Hadoop version, such as ``"3.5.0"``.

    Raises
    ------
    RuntimeError
        when that directory holds no ``hadoop-client-api`` jar, or more than one version
        of it.

    Examples
    --------
    >>> hadoop_version()  # doctest: +SKIP
    '3.5.0'
    """
    import pyspark

    spark_home = os.environ.get("SPARK_HOME")
    home = Path(spark_home) if spark_home else Path(pyspark.__file__).resolve().parent
    prefix = "hadoop-client-api-"
    versions = sorted(
        {jar.name[len(prefix):-len(".jar")] for jar in (home / "jars").glob(f"{prefix}*.jar")}
    )
    if len(versions) != 1:
        raise RuntimeError(
            f"Cannot tell which Hadoop version Spark runs with: {home / 'jars'} holds "
            f"{len(versions)} {prefix}<version>.jar versions ({', '.join(versions) or 'none'}), "
            "expected exactly one."
        )
    return versions[0]


def hadoop_aws_package() -> str:
    """Return the Maven coordinate of ``hadoop-aws`` matching the installed pyspark's Hadoop.

    ``hadoop-aws`` provides the ``s3a://`` file system (S3A) and must be exactly the version
    of the Hadoop client Spark runs with (see :func:`hadoop_version`). Pass it to
    :func:`configure_spark` to read and write tables on S3 or an S3-compatible store; it
    brings in the AWS SDK bundle (about 700 MB, downloaded once into the Ivy cache). The
    S3A settings themselves (endpoint, credentials) are the user's: ``spark.hadoop.fs.s3a.*``.

    Returns
    -------
    the coordinate, ``org.apache.hadoop:hadoop-aws:<Hadoop version>``.

    Examples
    --------
    >>> from pyspark.sql import SparkSession
    >>> builder = SparkSession.builder.master("local[2]")
    >>> builder = configure_spark(builder, extra_packages=[hadoop_aws_package()])
    >>> hadoop_aws_package()  # doctest: +SKIP
    'org.apache.hadoop:hadoop-aws:3.5.0'
    """
    return f"org.apache.hadoop:hadoop-aws:{hadoop_version()}"


def _split(value: object) -> List[str]:
    return [part.strip() for part in str(value).split(",") if part.strip()] if value else []


def _append_unique(existing: List[str], additions: Sequence[str]) -> List[str]:
    merged = list(existing)
    for item in additions:
        if item not in merged:
            merged.append(item)
    return merged


def spark_configuration(
    existing: Optional[Mapping[str, Any]] = None, extra_packages: Sequence[str] = ()
) -> Dict[str, str]:
    """Return the Spark settings delta-lifecycle needs, merged into ``existing``.

    The result holds only the settings this function manages (``spark.jars``,
    ``spark.jars.packages``, ``spark.jars.ivySettings``, ``spark.sql.extensions``,
    ``spark.sql.catalog.spark_catalog``); see :func:`configure_spark` for how each is merged. Use it where there is no builder
    to configure, e.g. to pass ``--conf`` options to ``spark-submit`` or to a Spark Connect
    server::

        args = []
        for key, value in spark_configuration().items():
            args += ["--conf", f"{key}={value}"]

    Parameters
    ----------
    existing:
        settings already in place (any mapping of setting name to value).
    extra_packages:
        more Maven coordinates for ``spark.jars.packages``.

    Returns
    -------
    the merged values of the managed settings.
    """
    existing = existing or {}
    jars = _append_unique(_split(existing.get("spark.jars")), [jar_path()])

    packages = _split(existing.get("spark.jars.packages"))
    # A delta-spark the caller pinned explicitly wins over the one derived from pip.
    if not any(p.startswith("io.delta:delta-spark_") for p in packages):
        packages.append(delta_maven_coordinate())
    packages = _append_unique(packages, extra_packages)

    others = [
        e for e in _split(existing.get("spark.sql.extensions")) if e != LIFECYCLE_EXTENSION
    ]
    extensions = _append_unique(others, [DELTA_EXTENSION, LIFECYCLE_EXTENSION])

    # Delta's own catalog is replaced by ours (a subclass of it); any other choice is kept.
    chosen = existing.get("spark.sql.catalog.spark_catalog")
    catalog = LIFECYCLE_CATALOG if chosen in (None, "", DELTA_CATALOG) else chosen
    ivy_settings = existing.get("spark.jars.ivySettings") or ivy_settings_path()
    return {
        "spark.jars": ",".join(jars),
        "spark.jars.packages": ",".join(packages),
        "spark.jars.ivySettings": str(ivy_settings),
        "spark.sql.extensions": ",".join(extensions),
        "spark.sql.catalog.spark_catalog": str(catalog),
    }


def configure_spark(
    builder: SparkSession.Builder, extra_packages: Sequence[str] = ()
) -> SparkSession.Builder:
    """Configure a ``SparkSession`` builder for delta-lifecycle and return it.

    The builder gets:

    * the bundled jar appended to ``spark.jars``;
    * delta-spark's Maven coordinate (see :func:`delta_maven_coordinate`; skipped when
      ``spark.jars.packages`` already names a delta-spark artifact) and
      ``extra_packages`` appended to ``spark.jars.packages``;
    * :func:`ivy_settings_path` as ``spark.jars.ivySettings`` unless one is set, so the
      packages come from the local Maven repository and Maven Central only;
    * ``spark.sql.extensions`` with Delta's extension and then this project's extension
      last, keeping any other extension already set in its place;
    * this project's catalog (Delta's, made redirect-aware) as ``spark_catalog``, unless
      the builder already names a catalog other than Delta's.

    Values already on the builder are kept, so this can be combined with other
    configuration, before or after. Like delta-spark's ``configure_spark_with_delta_pip``,
    it is meant for sessions started from Python (``python app.py``, notebooks, tests,
    ``SparkSession.builder.remote("local")``); with ``spark-submit``, pass ``--packages``
    and ``--conf`` instead (see :func:`maven_coordinate` and :func:`spark_configuration`).

    Parameters
    ----------
    builder:
        the builder to configure; it is changed in place and returned.
    extra_packages:
        more Maven coordinates for ``spark.jars.packages``.

    Returns
    -------
    ``builder``.

    Examples
    --------
    >>> from pyspark.sql import SparkSession
    >>> from delta_lifecycle import configure_spark
    >>> builder = SparkSession.builder.master("local[2]").appName("lifecycle")
    >>> spark = configure_spark(builder).getOrCreate()
    >>> spark.sql("DESCRIBE PROTOCOL HISTORY delta.`/data/events`").show()
    """
    if not isinstance(builder, SparkSession.Builder):
        raise TypeError(
            "configure_spark expects a SparkSession.Builder (e.g. SparkSession.builder), "
            f"got {type(builder).__name__}"
        )
    # Builder has no public getter; _options is where builder.config() stores values, and
    # reading it is the only way to append to what the caller has already set.
    for key, value in spark_configuration(builder._options, extra_packages).items():
        builder.config(key, value)
    return builder
