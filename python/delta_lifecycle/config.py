"""Session configuration: the bundled jar, delta-spark, both extensions, Delta's catalog."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence

from pyspark.sql import SparkSession

from delta_lifecycle import _delta_tables
from delta_lifecycle._version import MAVEN_GROUP, __version__
from delta_lifecycle.lines import _spark_jars, current_line

__all__ = [
    "DELTA_CATALOG",
    "LIFECYCLE_CATALOG",
    "ROUTED_CATALOG_CLASSES",
    "ROUTING_CATALOG",
    "DELTA_EXTENSION",
    "LIFECYCLE_EXTENSION",
    "configure_spark",
    "delta_maven_coordinate",
    "hadoop_aws_package",
    "hadoop_version",
    "BUNDLED_REPOSITORY",
    "bundled_coordinate",
    "bundled_repository_url",
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

#: This project's wrapper of any other catalog: the catalog it names in
#: `spark.sql.catalog.<name>.deltaLifecycle.delegate` (its other options unchanged), made
#: redirect-aware the same way.
ROUTING_CATALOG = "io.github.deltalifecycle.sql.RoutingCatalog"

#: The option of a `ROUTING_CATALOG` that names the catalog it wraps.
ROUTING_DELEGATE_OPTION = "deltaLifecycle.delegate"

#: The catalog classes that serve Delta tables under a name other than `spark_catalog`, which
#: `spark_configuration` wraps in `ROUTING_CATALOG`: Unity Catalog's connector.
ROUTED_CATALOG_CLASSES = ("io.unitycatalog.spark.UCSingleCatalog",)

#: The package's jars, one per Spark line, as a small Maven repository (see
#: :func:`bundled_coordinate`).
BUNDLED_REPOSITORY = Path(__file__).resolve().parent / "maven"


def _bundled_release_dir() -> Path:
    """The bundled repository's directory of the running line's artifact, whose one
    version directory holds its jar and POM."""
    line = current_line()
    artifact_dir = BUNDLED_REPOSITORY.joinpath(*MAVEN_GROUP.split("."), line.artifact_id)
    releases = sorted(artifact_dir.glob(f"{__version__}-*")) if artifact_dir.is_dir() else []
    if len(releases) != 1:
        raise FileNotFoundError(
            f"The delta-lifecycle jar for Spark {line.line} is missing: {artifact_dir} holds "
            f"{len(releases)} builds of release {__version__}, expected one. In a checkout "
            "of the repository, run `make jar` (the primary line) or `make jars` (every "
            "line) to build the jars with build/sbt and bundle them into "
            "python/delta_lifecycle/maven/, then reinstall the package if it was not "
            "installed in editable mode."
        )
    return releases[0]


def jar_path() -> str:
    """Return the absolute path of the bundled delta-lifecycle jar for the running Spark line.

    The package bundles one jar per Spark line, in the Maven repository
    `BUNDLED_REPOSITORY`; the installed pyspark, delta-spark and Spark's Scala version
    choose it ([`current_line`][delta_lifecycle.lines.current_line]).

    Raises
    ------
    UnsupportedSparkLineError
        when the installed versions match no bundled line.
    FileNotFoundError
        when the package was installed without that line's jar (for example from a
        checkout where only `make jar`, the primary line, has run).

    Examples
    --------
    >>> jar_path()
    '/.../delta_lifecycle/maven/io/github/deltalifecycle/delta-lifecycle_4.2_2.13/0.1.0-.../delta-lifecycle_4.2_2.13-0.1.0-....jar'
    """
    release = _bundled_release_dir()
    return str(release / f"{release.parent.name}-{release.name}.jar")


def bundled_coordinate() -> str:
    """Return the Maven coordinate of the bundled jar for the running Spark line.

    The bundled jars are resolved like any package, so that Spark hands them to every
    executor together with delta-spark and its dependencies. Their version is the release
    followed by a digest of the jar: Ivy caches a resolved revision for good, so each build
    has a revision of its own.

    Examples
    --------
    >>> bundled_coordinate()
    'io.github.deltalifecycle:delta-lifecycle_4.2_2.13:0.1.0-...'
    """
    release = _bundled_release_dir()
    return f"{MAVEN_GROUP}:{release.parent.name}:{release.name}"


def bundled_repository_url() -> str:
    """Return the `file:` URL of the Maven repository inside the package, for
    `spark.jars.repositories` or `spark-submit --repositories`.

    Examples
    --------
    >>> bundled_repository_url()
    'file:///.../delta_lifecycle/maven'
    """
    return BUNDLED_REPOSITORY.as_uri()


def maven_coordinate() -> str:
    """Return the Maven coordinate of this project's jar for the running Spark line.

    Use it with `spark-submit --packages` (or `spark.jars.packages`) where the jar is
    published, instead of shipping the bundled file.

    Examples
    --------
    >>> maven_coordinate()
    'io.github.deltalifecycle:delta-lifecycle_4.2_2.13:0.1.0'
    """
    return current_line().maven_coordinate


def delta_maven_coordinate() -> str:
    """Return the delta-spark Maven coordinate matching the installed pyspark and delta-spark.

    The artifact is the running line's (`delta-spark_2.12` for Spark 3.5,
    `delta-spark_<line>_2.13` for Spark 4), at the delta-spark release the line's jar is
    built against (the installed delta-spark may be another patch of it, which may have no
    Maven artifact for the line: see [`SparkLine`][delta_lifecycle.lines.SparkLine]).

    Examples
    --------
    >>> delta_maven_coordinate()
    'io.delta:delta-spark_4.2_2.13:4.4.0'
    """
    return current_line().delta_coordinate()


def hadoop_version() -> str:
    """Return the version of the Hadoop client bundled with the installed pyspark.

    Read from the name of `hadoop-client-api-<version>.jar` in the jars directory Spark
    runs with: `$SPARK_HOME/jars` when `SPARK_HOME` is set, as pyspark itself does, else
    the one inside the pyspark package.

    Returns
    -------
    str
        The Hadoop version, such as `"3.5.0"`.

    Raises
    ------
    RuntimeError
        when that directory holds no `hadoop-client-api` jar, or more than one version
        of it.

    Examples
    --------
    >>> hadoop_version()
    '3.5.0'
    """
    prefix = "hadoop-client-api-"
    jars, found = _spark_jars(prefix)
    versions = sorted(found)
    if len(versions) != 1:
        raise RuntimeError(
            f"Cannot tell which Hadoop version Spark runs with: {jars} holds "
            f"{len(versions)} {prefix}<version>.jar versions ({', '.join(versions) or 'none'}), "
            "expected exactly one."
        )
    return versions[0]


def hadoop_aws_package() -> str:
    """Return the Maven coordinate of `hadoop-aws` matching the installed pyspark's Hadoop.

    `hadoop-aws` provides the `s3a://` file system (S3A) and must be exactly the version
    of the Hadoop client Spark runs with (see `hadoop_version`). Pass it to
    [`configure_spark`][delta_lifecycle.config.configure_spark] to read and write tables on S3 or an S3-compatible store; it
    brings in the AWS SDK bundle (about 700 MB, downloaded once into the Ivy cache). The
    S3A settings themselves (endpoint, credentials) are the user's: `spark.hadoop.fs.s3a.*`.

    Returns
    -------
    str
        The coordinate, `org.apache.hadoop:hadoop-aws:<Hadoop version>`.

    Examples
    --------
    >>> from pyspark.sql import SparkSession
    >>> builder = SparkSession.builder.master("local[2]")
    >>> builder = configure_spark(builder, extra_packages=[hadoop_aws_package()])
    >>> hadoop_aws_package()
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
    """Return the Spark settings delta-lifecycle needs, merged into `existing`.

    The result holds only the settings this function manages (`spark.jars.packages`,
    `spark.jars.repositories`, `spark.sql.extensions`,
    `spark.sql.catalog.spark_catalog`, and for each catalog of `ROUTED_CATALOG_CLASSES` in
    `existing`, `spark.sql.catalog.<name>` and `spark.sql.catalog.<name>.deltaLifecycle.delegate`);
    see [`configure_spark`][delta_lifecycle.config.configure_spark] for how each is
    merged. `spark.jars` is never set: a value for it replaces the jars Spark resolves for
    `spark.jars.packages`, and the executors of a cluster would then lack delta-spark. Use
    it where there is no builder to configure, e.g. to pass `--conf` options to
    `spark-submit` or to a Spark Connect server:

    ```python
    args = []
    for key, value in spark_configuration().items():
        args += ["--conf", f"{key}={value}"]
    ```

    Parameters
    ----------
    existing:
        settings already in place (any mapping of setting name to value).
    extra_packages:
        more Maven coordinates for `spark.jars.packages`.

    Returns
    -------
    Dict[str, str]
        The merged values of the managed settings.
    """
    existing = existing or {}
    packages = _split(existing.get("spark.jars.packages"))
    repositories = _split(existing.get("spark.jars.repositories"))
    # A delta-spark the caller pinned explicitly wins over the one derived from pip, and a
    # published delta-lifecycle artifact (spark-submit --packages) over the bundled one.
    if not any(p.startswith("io.delta:delta-spark_") for p in packages):
        packages.append(delta_maven_coordinate())
    if not any(p.startswith(f"{MAVEN_GROUP}:delta-lifecycle_") for p in packages):
        packages.append(bundled_coordinate())
        repositories = _append_unique(repositories, [bundled_repository_url()])
    packages = _append_unique(packages, extra_packages)

    others = [
        e for e in _split(existing.get("spark.sql.extensions")) if e != LIFECYCLE_EXTENSION
    ]
    extensions = _append_unique(others, [DELTA_EXTENSION, LIFECYCLE_EXTENSION])

    # Delta's own catalog is replaced by ours (a subclass of it); any other choice is kept.
    chosen = existing.get("spark.sql.catalog.spark_catalog")
    catalog = LIFECYCLE_CATALOG if chosen in (None, "", DELTA_CATALOG) else chosen
    settings = {
        "spark.jars.packages": ",".join(packages),
        "spark.sql.extensions": ",".join(extensions),
        "spark.sql.catalog.spark_catalog": str(catalog),
    }
    if repositories:
        settings["spark.jars.repositories"] = ",".join(repositories)
    settings.update(_routed_catalogs(existing))
    return settings


def _routed_catalogs(existing: Mapping[str, Any]) -> Dict[str, str]:
    """Every catalog of `ROUTED_CATALOG_CLASSES` in `existing`, wrapped in
    `ROUTING_CATALOG` (its own options stay where they are, for the wrapped catalog).

    Examples
    --------
    >>> settings = _routed_catalogs({
    ...     "spark.sql.catalog.lake": "io.unitycatalog.spark.UCSingleCatalog",
    ...     "spark.sql.catalog.lake.uri": "http://uc:8080"})
    >>> settings["spark.sql.catalog.lake"]
    'io.github.deltalifecycle.sql.RoutingCatalog'
    >>> settings["spark.sql.catalog.lake.deltaLifecycle.delegate"]
    'io.unitycatalog.spark.UCSingleCatalog'
    """
    prefix = "spark.sql.catalog."
    settings: Dict[str, str] = {}
    for key, value in existing.items():
        name = key[len(prefix):] if key.startswith(prefix) else ""
        if not name or "." in name or name == "spark_catalog":
            continue
        if str(value) in ROUTED_CATALOG_CLASSES:
            settings[key] = ROUTING_CATALOG
            settings[f"{key}.{ROUTING_DELEGATE_OPTION}"] = str(value)
    return settings


def configure_spark(
    builder: SparkSession.Builder, extra_packages: Sequence[str] = ()
) -> SparkSession.Builder:
    """Configure a `SparkSession` builder for delta-lifecycle and return it.

    The builder gets:

    * delta-spark's Maven coordinate (see [`delta_maven_coordinate`][delta_lifecycle.config.delta_maven_coordinate]; skipped when
      `spark.jars.packages` already names a delta-spark artifact), the bundled jar's
      coordinate (see `bundled_coordinate`; skipped when it already names a
      delta-lifecycle artifact) and `extra_packages` appended to
      `spark.jars.packages`, and the package's own Maven repository
      (`bundled_repository_url`) appended to `spark.jars.repositories`. Spark
      resolves them all as packages, so on a cluster every executor gets this project's jar
      and delta-spark with its dependencies. `spark.jars` and `spark.jars.ivySettings`
      are left as they are;
    * `spark.sql.extensions` with Delta's extension and then this project's extension
      last, keeping any other extension already set in its place;
    * this project's catalog (Delta's, made redirect-aware) as `spark_catalog`, unless
      the builder already names a catalog other than Delta's;
    * every other catalog on the builder that serves Delta tables (`ROUTED_CATALOG_CLASSES`:
      Unity Catalog's connector) wrapped in this project's `ROUTING_CATALOG`, so that its
      tables follow a redirect by name too; the catalog's own options stay as they are. Set
      such catalogs on the builder before calling this.

    It also makes delta-spark's `DeltaTable.forPath`, `DeltaTable.forName` and
    `DeltaTable.isDeltaTable` follow a redirect in sessions with this extension ([`route_delta_tables`][delta_lifecycle.config.route_delta_tables]);
    in other sessions they are delta-spark's own.

    Values already on the builder are kept, so this can be combined with other
    configuration, before or after. Like delta-spark's `configure_spark_with_delta_pip`,
    it is meant for sessions started from Python (`python app.py`, notebooks, tests,
    `SparkSession.builder.remote("local")`); with `spark-submit`, pass `--packages`
    and `--conf` instead (see [`maven_coordinate`][delta_lifecycle.config.maven_coordinate] and [`spark_configuration`][delta_lifecycle.config.spark_configuration]).

    Parameters
    ----------
    builder:
        the builder to configure; it is changed in place and returned.
    extra_packages:
        more Maven coordinates for `spark.jars.packages`.

    Returns
    -------
    SparkSession.Builder
        The same `builder`, configured.

    Examples
    --------
    >>> from pyspark.sql import SparkSession
    >>> from delta_lifecycle import configure_spark
    >>> builder = SparkSession.builder.master("local[2]").appName("lifecycle")
    >>> spark = configure_spark(builder).getOrCreate()
    >>> history = spark.sql("DESCRIBE PROTOCOL HISTORY delta.`/data/events`")
    >>> history.select("version", "operation", "minReaderVersion", "minWriterVersion").show()
    +-------+-----------------+----------------+----------------+
    |version|        operation|minReaderVersion|minWriterVersion|
    +-------+-----------------+----------------+----------------+
    |      0|     CREATE TABLE|               1|               2|
    |      1|            WRITE|               1|               2|
    |      2|SET TBLPROPERTIES|               3|               7|
    |      3|           DELETE|               3|               7|
    |      4|            WRITE|               3|               7|
    |      5|            WRITE|               3|               7|
    +-------+-----------------+----------------+----------------+
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
    route_delta_tables()
    return builder


def route_delta_tables() -> None:
    """Make delta-spark's `DeltaTable.forPath`, `forName` and `isDeltaTable` follow a redirect.

    delta-spark opens the table behind these without asking any catalog, so a redirect
    would not reach it. This wraps them, once per process: in a session with this extension,
    classic or over Spark Connect, they ask the session where the table is and hand
    delta-spark the redirect's destination; in any other session they are delta-spark's own.
    [`configure_spark`][delta_lifecycle.config.configure_spark] calls it; call it yourself
    where the session is made without it: a Spark Connect client of a server started with
    this extension, or a session that `spark-submit --conf` configured. Importing the package
    does not call it: importing changes nothing.

    Examples
    --------
    A table moved to `/new/events`, opened by its old path:

    >>> from delta.tables import DeltaTable
    >>> from delta_lifecycle import route_delta_tables
    >>> route_delta_tables()
    >>> DeltaTable.forPath(spark, "/data/events").detail().first()["location"]
    'file:/new/events'
    """
    _delta_tables.install()
