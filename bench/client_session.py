"""The session a benchmark's worker process starts for one client: this project's
(``configure_spark``) or stock delta-spark's (its extension and catalog, through
``configure_spark_with_delta_pip``). Workers are scripts run in a process of their own, so
this is source text: :func:`client_session` returns the lines that leave ``spark`` defined.
"""

from __future__ import annotations


def client_session(client: str, builder: str) -> str:
    """Source that starts ``spark`` from ``builder`` (an expression) for the client named by
    the expression ``client``: "delta-lifecycle" is this project, anything else stock."""
    return f"""
builder = {builder}
if {client} == "delta-lifecycle":
    from delta_lifecycle import configure_spark
    spark = configure_spark(builder).getOrCreate()
else:
    from delta import configure_spark_with_delta_pip
    builder = (builder.config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
        .config("spark.sql.catalog.spark_catalog",
                "org.apache.spark.sql.delta.catalog.DeltaCatalog"))
    spark = configure_spark_with_delta_pip(builder).getOrCreate()
spark.sparkContext.setLogLevel("ERROR")
"""
