"""delta-spark's `DeltaTable.forPath` and `DeltaTable.forName`, made to follow a redirect.

delta-spark builds the table behind a `DeltaTable` from a path, or from the metastore entry of
a one- or two-part name, without asking any catalog, so neither this project's catalog nor its
analyzer rules see it: `history()`, `detail()`, `vacuum()`, `optimize()` and the other
operations that open the table's log would open a redirected table's source (delta-spark refuses
a reader-writer source; a writer-only source answers with its own, frozen history).
`configure_spark` installs these two wrappers: in a session with this extension they ask
the JVM (`DeltaTableRouting`) where the table is, and hand delta-spark the redirect's
destination (a three-part name, for a name, which delta-spark loads through the catalog). A table
that is not redirected, and every session without this extension, gets exactly what delta-spark
alone gives. See docs/redirection.md, "Where delta-spark opens the table first".
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Dict

from pyspark.sql import SparkSession

from delta_lifecycle.errors import translate_errors

_EXTENSION = "io.github.deltalifecycle.sql.DeltaLifecycleSparkSessionExtension"
_installed = False


def install() -> None:
    """Wrap `delta.tables.DeltaTable.forPath` and `forName`; once per process."""
    global _installed
    if _installed:
        return
    from delta.tables import DeltaTable

    for_path = DeltaTable.__dict__["forPath"].__func__
    for_name = DeltaTable.__dict__["forName"].__func__

    @functools.wraps(for_path)
    def routed_for_path(
        cls: Any, sparkSession: SparkSession, path: str, hadoopConf: Dict[str, str] = {}
    ) -> Any:
        return for_path(cls, sparkSession, _routed(sparkSession, "pathFor", path), hadoopConf)

    @functools.wraps(for_name)
    def routed_for_name(cls: Any, sparkSession: SparkSession, tableOrViewName: str) -> Any:
        return for_name(cls, sparkSession, _routed(sparkSession, "nameFor", tableOrViewName))

    setattr(DeltaTable, "forPath", classmethod(routed_for_path))
    setattr(DeltaTable, "forName", classmethod(routed_for_name))
    _installed = True


def _routed(spark: SparkSession, method: str, table: str) -> str:
    """`table` as `DeltaTableRouting.<method>` routes it, in a classic session with this
    extension; as it is anywhere else (a Spark Connect session, a stock session)."""
    jsession = getattr(spark, "_jsparkSession", None)
    if jsession is None or _EXTENSION not in (spark.conf.get("spark.sql.extensions", "") or ""):
        return table
    jvm: Any = spark.sparkContext._jvm
    routing: Callable[[Any, str], str] = getattr(
        jvm.io.github.deltalifecycle.sql.routing.DeltaTableRouting, method
    )
    with translate_errors():
        return str(routing(jsession, table))
