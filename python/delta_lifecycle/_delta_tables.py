"""delta-spark's `DeltaTable.forPath`, `forName` and `isDeltaTable`, made to follow a redirect.

delta-spark builds the table behind a `DeltaTable` from a path, or from the metastore entry of
a one- or two-part name, without asking any catalog, so neither this project's catalog nor its
analyzer rules see it: `history()` and the protocol changes, which open the table's log
directly, would open a redirected table's source (delta-spark refuses a reader-writer source; a
writer-only source answers with its own, frozen history).
`isDeltaTable` opens the log at a path too: delta-spark refuses a reader-writer source there,
and answers True on its destination.
`configure_spark` installs these three wrappers, and so does
[`route_delta_tables`][delta_lifecycle.route_delta_tables] where the session is made elsewhere
(a Spark Connect client, a session that `spark-submit` configured); importing the package
changes nothing. In a session with this extension they ask the JVM (`DeltaTableArguments`; over
Spark Connect, the server, through the SQL functions `delta_lifecycle_routed_path` and
`delta_lifecycle_routed_name`) where the table is, and hand delta-spark the redirect's
destination (a three-part name, for a name, which delta-spark loads through the catalog). A table that is not redirected, and every session without this extension,
gets exactly what delta-spark alone gives. See docs/redirection.md, "Where each access is
routed".
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Dict

from pyspark.sql import SparkSession

from delta_lifecycle.errors import translate_errors

_EXTENSION = "io.github.deltalifecycle.sql.DeltaLifecycleSparkSessionExtension"
_installed = False


def install() -> None:
    """Wrap `delta.tables.DeltaTable.forPath`, `forName` and `isDeltaTable`, which hand a Spark
    Connect session on to delta-spark's Connect `DeltaTable`; once per process."""
    global _installed
    if _installed:
        return
    from delta.tables import DeltaTable

    for_path = DeltaTable.__dict__["forPath"].__func__
    for_name = DeltaTable.__dict__["forName"].__func__
    is_delta_table = DeltaTable.__dict__["isDeltaTable"].__func__

    @functools.wraps(for_path)
    def routed_for_path(
        cls: Any, sparkSession: SparkSession, path: str, hadoopConf: Dict[str, str] = {}
    ) -> Any:
        return for_path(cls, sparkSession, _routed(sparkSession, "pathFor", path), hadoopConf)

    @functools.wraps(for_name)
    def routed_for_name(cls: Any, sparkSession: SparkSession, tableOrViewName: str) -> Any:
        return for_name(cls, sparkSession, _routed(sparkSession, "nameFor", tableOrViewName))

    @functools.wraps(is_delta_table)
    def routed_is_delta_table(cls: Any, sparkSession: SparkSession, identifier: str) -> bool:
        routed = _routed(sparkSession, "pathFor", identifier)
        return bool(is_delta_table(cls, sparkSession, routed))

    setattr(DeltaTable, "forPath", classmethod(routed_for_path))
    setattr(DeltaTable, "forName", classmethod(routed_for_name))
    setattr(DeltaTable, "isDeltaTable", classmethod(routed_is_delta_table))
    _installed = True


#: The SQL function of the server that answers each question, for clients without a JVM.
_FUNCTIONS = {"pathFor": "delta_lifecycle_routed_path", "nameFor": "delta_lifecycle_routed_name"}


def _routed(spark: Any, method: str, table: str) -> str:
    """`table` as `DeltaTableArguments.<method>` routes it in a session with this
    extension: through py4j in a classic session, through the same answer's SQL function
    over Spark Connect; as it is in a session without the extension."""
    if _EXTENSION not in (spark.conf.get("spark.sql.extensions", "") or ""):
        return table
    jsession = getattr(spark, "_jsparkSession", None)
    with translate_errors():
        if jsession is None:
            literal = "'" + table.replace("\\", "\\\\").replace("'", "\\'") + "'"
            return str(spark.sql(f"SELECT {_FUNCTIONS[method]}({literal})").first()[0])
        jvm: Any = spark.sparkContext._jvm
        routing: Callable[[Any, str], str] = getattr(
            jvm.io.github.deltalifecycle.sql.routing.DeltaTableArguments, method
        )
        return str(routing(jsession, table))
