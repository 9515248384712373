"""Every Spark session a test or a benchmark starts, built one way.

A session is described by a :class:`SessionSpec`: with this project's extension (set up by
``delta_lifecycle.configure_spark``, as a user sets it up) or stock delta-spark (its extension
and catalog only, no jar of this project), its master, application name, settings and the Maven
packages it needs besides delta-spark. The same spec starts a session

- in this process: :func:`start_session` (or :func:`configured_builder`, not started yet);
- in a script of its own, run in a subprocess, possibly with another venv's pyspark and
  delta-spark (another Spark line, an older delta-spark): :func:`preamble`, source that imports
  this module from this checkout and leaves ``spark`` defined. Values only the script knows
  (its arguments) go in as Python expressions.

Settings are a dict; what a spec's ``conf`` sets is set in order, before what the setup of the
extension or of stock delta-spark adds, and its ``spark.jars.packages`` are kept (for stock
delta-spark through ``configure_spark_with_delta_pip``, which replaces them, as its extra
packages). :data:`SESSION_CONF` holds what keeps the tests' local sessions small and quiet.

This module imports only the standard library when imported: the scripts of other venvs import
it, some without this project's package (a stock session imports delta-spark's, and this
project's only when it builds an extension session or needs its delta-spark release).
"""

from __future__ import annotations

import dataclasses
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Literal, Mapping, Optional, Tuple

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

#: This folder (tests/): the scripts of :func:`preamble` import this module from it.
TESTS = Path(__file__).resolve().parent

#: delta-spark's own session extension and catalog: what a stock session is set up with.
STOCK_EXTENSION = "io.delta.sql.DeltaSparkSessionExtension"
STOCK_CATALOG = "org.apache.spark.sql.delta.catalog.DeltaCatalog"

#: Settings that keep local Spark small and quiet; every test session (in process and in
#: subprocesses) starts with them.
SESSION_CONF: Dict[str, str] = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.shuffle.partitions": "2",
    # Delta rebuilds snapshots with 50 partitions by default, slow on 2 cores.
    "spark.databricks.delta.snapshotPartitions": "2",
    # VACUUM lists a table's folders with this many tasks (10,000 by default): minutes on two
    # cores for a table of a few files.
    "spark.sql.sources.parallelPartitionDiscovery.parallelism": "4",
}

#: Spark compiles generated Java (Janino) for every query's operators and expressions, which the
#: tables of a few rows these sessions query never pay back: interpreted evaluation takes a
#: sixth less processor time end to end (bench/README.md, "CI time"). The engine's default,
#: code generation, runs in the Scala suites and with ``DELTA_LIFECYCLE_CODEGEN=1``.
INTERPRETED_CONF: Dict[str, str] = {
    "spark.sql.codegen.wholeStage": "false",
    "spark.sql.codegen.factoryMode": "NO_CODEGEN",
}
if os.environ.get("DELTA_LIFECYCLE_CODEGEN") != "1":
    SESSION_CONF.update(INTERPRETED_CONF)

#: Where a stock session's delta-spark comes from:
#: ``"pip"``: the artifact of the delta-spark Python package installed beside pyspark, through
#: its ``configure_spark_with_delta_pip``, as delta-spark's users set a session up;
#: ``"bundled"``: the delta-spark release this project's jar of the line is built against
#: (``delta_lifecycle.config.delta_maven_coordinate``), the same jars an extension session loads;
#: ``"given"``: none is added, ``packages`` name it or the process's JVM has it already.
StockDelta = Literal["pip", "bundled", "given"]

_PACKAGES = "spark.jars.packages"


@dataclass(frozen=True)
class SessionSpec:
    """What session to start.

    Attributes
    ----------
    extension:
        With this project's extension (``configure_spark``), or stock delta-spark.
    master, app_name:
        The builder's master and application name (none: Spark's default name).
    conf:
        Settings, set in this order.
    packages:
        Maven coordinates the session needs besides delta-spark (and this project's jar).
    stock_delta:
        For a stock session: where its delta-spark comes from (:data:`StockDelta`).
    log_level:
        The SparkContext's log level once started, or None to leave Spark's.
    """

    extension: bool = True
    master: str = "local[2]"
    app_name: Optional[str] = None
    conf: Mapping[str, str] = field(default_factory=dict)
    packages: Tuple[str, ...] = ()
    stock_delta: StockDelta = "pip"
    log_level: Optional[str] = None

    def updated(self, conf: Optional[Mapping[str, str]] = None, **changes: Any) -> "SessionSpec":
        """This spec with ``changes`` (fields by name) and ``conf`` set on top of its own."""
        merged = {**self.conf, **(conf or {})}
        if "packages" in changes:
            changes["packages"] = tuple(changes["packages"])
        return dataclasses.replace(self, conf=merged, **changes)

    def to_json(self) -> str:
        return json.dumps({**dataclasses.asdict(self), "conf": dict(self.conf)})

    @classmethod
    def from_json(cls, text: str) -> "SessionSpec":
        fields: Dict[str, Any] = json.loads(text)
        return cls(**{**fields, "packages": tuple(fields["packages"])})


#: Small, quiet local Spark for a benchmark's sessions of either engine (``extension`` says
#: which): two shuffle and snapshot partitions, no UI, errors only.
SMALL_LOCAL_SESSION = SessionSpec(
    conf={
        "spark.ui.enabled": "false",
        "spark.sql.shuffle.partitions": "2",
        "spark.databricks.delta.snapshotPartitions": "2",
    },
    log_level="ERROR",
)


def fresh_builder(
    conf: Optional[Mapping[str, str]] = None,
    master: Optional[str] = None,
    app_name: Optional[str] = None,
) -> "SparkSession.Builder":
    """A new builder with ``master``, ``app_name`` and ``conf`` only (each when given): what
    ``configure_spark`` or a stock setup starts from."""
    from pyspark.sql import SparkSession

    builder = SparkSession.builder
    if master is not None:
        builder = builder.master(master)
    if app_name is not None:
        builder = builder.appName(app_name)
    for key, value in (conf or {}).items():
        builder = builder.config(key, value)
    return builder


def _split_packages(value: str) -> List[str]:
    return [p for p in value.split(",") if p]


def configured_builder(spec: SessionSpec) -> "SparkSession.Builder":
    """The builder of ``spec``'s session, set up but not started."""
    conf = dict(spec.conf)
    if spec.extension:
        from delta_lifecycle import configure_spark

        builder = fresh_builder(conf, spec.master, spec.app_name)
        return configure_spark(builder, extra_packages=list(spec.packages))
    packages = [*_split_packages(conf.pop(_PACKAGES, "")), *spec.packages]
    builder = (
        fresh_builder(conf, spec.master, spec.app_name)
        .config("spark.sql.extensions", STOCK_EXTENSION)
        .config("spark.sql.catalog.spark_catalog", STOCK_CATALOG)
    )
    if spec.stock_delta == "pip":
        from delta import configure_spark_with_delta_pip

        return configure_spark_with_delta_pip(builder, extra_packages=packages)
    if spec.stock_delta == "bundled":
        from delta_lifecycle.config import delta_maven_coordinate

        packages = [delta_maven_coordinate(), *packages]
    return builder.config(_PACKAGES, ",".join(packages)) if packages else builder


def start_session(spec: SessionSpec) -> "SparkSession":
    """``spec``'s session, started in this process (or the process's active one, which
    ``getOrCreate`` returns)."""
    spark = configured_builder(spec).getOrCreate()
    if spec.log_level is not None:
        spark.sparkContext.setLogLevel(spec.log_level)
    return spark


def resolve_packages() -> None:
    """Resolve the Maven packages of an extension session (``spark_configuration``'s) into
    Spark's Ivy cache, in a ``spark-submit`` of a script that starts no session.

    Ivy locks nothing: sessions that start at once in several processes (pytest-xdist's
    workers) and all resolve a jar the cache does not hold yet, such as each new build of this
    project's (``<version>-<digest>``), copy it into the cache together, and one may read the
    file while another writes it (``download failed: ... Downloaded file size (0)``).
    Resolved here first, the jar is in the cache when they start.
    """
    import subprocess
    import sys
    import tempfile

    import pyspark
    from delta_lifecycle import spark_configuration

    settings = {k: v for k, v in spark_configuration().items() if k.startswith("spark.jars.")}
    spark_submit = Path(pyspark.__file__).parent / "bin" / "spark-submit"
    with tempfile.TemporaryDirectory(prefix="resolve-packages-") as work:
        script = Path(work) / "no_session.py"
        script.write_text("")
        command = [str(spark_submit)]
        for key, value in settings.items():
            command += ["--conf", f"{key}={value}"]
        run = subprocess.run(
            [*command, str(script)], capture_output=True, text=True, timeout=600,
            env={**os.environ, "PYSPARK_PYTHON": sys.executable},
        )
    if run.returncode != 0:
        raise RuntimeError(f"spark-submit could not resolve {settings}:\n{run.stderr[-3000:]}")


def preamble(spec: SessionSpec, **expressions: str) -> str:
    """Source that starts ``spec``'s session as ``spark``, for a script of its own.

    Each keyword names a field of :class:`SessionSpec`, its value a Python expression that the
    script evaluates where the preamble stands (``conf='json.loads(sys.argv[-1])'``,
    ``extension='mode != "stock"'``); ``conf``'s dict is set on top of ``spec.conf``. The
    source imports ``json`` and ``sys`` and this module, from this checkout's tests/, which
    it appends to ``sys.path``: the script may run with another venv's Python.

    Examples
    --------
    >>> source = preamble(SessionSpec(master="local[1]"), conf="json.loads(sys.argv[-1])")
    >>> "spark = spark_sessions.start_session(" in source
    True
    """
    unknown = set(expressions) - {f.name for f in dataclasses.fields(SessionSpec)}
    if unknown:
        raise ValueError(f"no such field of SessionSpec: {sorted(unknown)}")
    changes = "".join(f", {name}=({source})" for name, source in expressions.items())
    return (
        "import json, sys\n"
        f"if {str(TESTS)!r} not in sys.path:\n"
        f"    sys.path.append({str(TESTS)!r})\n"
        "import spark_sessions\n"
        "spark = spark_sessions.start_session(\n"
        f"    spark_sessions.SessionSpec.from_json({spec.to_json()!r}).updated({changes[2:]}))\n"
    )
