"""A table's protocol history, from creation through feature upgrades, a checkpoint and
a fast DROP FEATURE with checkpoint protection.

Run it with ``make demo`` (or ``.venv/bin/python python/examples/demo.py`` once
``make install`` has run). It starts a local Spark session configured by
``configure_spark``, writes a Delta table in a temporary directory, and prints
``DESCRIBE PROTOCOL HISTORY`` both as SQL output and as typed Python values. Then it plans
and runs ``DROP FEATURE deletionVectors`` on every line (on Spark 3.5 by this project's own
removal: delta-spark 3.3 cannot drop it) and shows the protocol history again. Then it
redirects the table to a new location, writes through the old path, and removes the
redirect again, which brings the new rows home. Last, a session of stock delta-spark (no
delta-lifecycle) reads the table.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from pyspark.sql import SparkSession

from delta_lifecycle import LifecycleTable, configure_spark, current_line
from delta_lifecycle.tables import quote_path

COMMITS = [
    ("create the table", "CREATE TABLE {t} (id BIGINT, name STRING) USING delta"),
    ("insert", "INSERT INTO {t} VALUES (1, 'one'), (2, 'two')"),
    (
        "enable deletion vectors (reader+writer feature: protocol 3/7)",
        "ALTER TABLE {t} SET TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')",
    ),
    (
        "insert two rows in one file",
        "INSERT INTO {t} SELECT /*+ COALESCE(1) */ * FROM VALUES (3, 'three'), (30, 'thirty')",
    ),
    ("delete (a deletion vector)", "DELETE FROM {t} WHERE id = 30"),
    (
        "enable change data feed (writer feature)",
        "ALTER TABLE {t} SET TBLPROPERTIES ('delta.enableChangeDataFeed' = 'true')",
    ),
    (
        "checkpoint every 2 commits",
        "ALTER TABLE {t} SET TBLPROPERTIES ('delta.checkpointInterval' = '2')",
    ),
    (
        "use v2 checkpoints (reader+writer feature)",
        "ALTER TABLE {t} SET TBLPROPERTIES ('delta.checkpointPolicy' = 'v2')",
    ),
    ("insert (delta-spark writes a checkpoint here)", "INSERT INTO {t} VALUES (4, 'four')"),
]

FEATURE = "deletionVectors"


def new_builder() -> SparkSession.Builder:
    return (
        SparkSession.builder.master("local[2]")
        .appName("delta-lifecycle demo")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.databricks.delta.snapshotPartitions", "2")
    )


def read_with_stock_delta_spark(path: Path) -> None:
    """A session with delta-spark's own extension and catalog only, in the same process (the
    jars are loaded already), reads the table this demo changed."""
    spark = (
        new_builder()
        .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
        .config("spark.sql.catalog.spark_catalog",
                "org.apache.spark.sql.delta.catalog.DeltaCatalog")
        .getOrCreate()
    )
    try:
        rows = sorted(r[0] for r in spark.read.format("delta").load(str(path)).collect())
        detail = spark.sql(f"DESCRIBE DETAIL {quote_path(str(path))}").head()
        assert detail is not None
        print(f"\nstock delta-spark (no delta-lifecycle, Spark {spark.version}) reads ids {rows}; "
              f"table features {sorted(detail['tableFeatures'])}")
    finally:
        spark.stop()


def main() -> None:
    print(f"Spark line {current_line().line}")
    spark = configure_spark(new_builder()).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    workdir = Path(tempfile.mkdtemp(prefix="delta-lifecycle-demo-"))
    try:
        path = workdir / "events"
        table = quote_path(str(path))
        for version, (what, statement) in enumerate(COMMITS):
            print(f"version {version}: {what}")
            spark.sql(statement.format(t=table))

        print(f"\nDESCRIBE PROTOCOL HISTORY {table}")
        spark.sql(f"DESCRIBE PROTOCOL HISTORY {table}").show(truncate=False)

        lifecycle = LifecycleTable.for_path(spark, str(path))
        print("LifecycleTable.for_path(spark, path).protocol_history():")
        for v in lifecycle.protocol_history():
            print(f"  {v}")

        print(f"\ndrop_feature({FEATURE!r}, dry_run=True):")
        for step in lifecycle.drop_feature(FEATURE, dry_run=True).steps:
            print(f"  {step}")
        done = lifecycle.drop_feature(FEATURE)
        print(f"dropped: versions {done.commit_versions}, checkpoints {done.checkpoint_versions}, "
              f"readable without {FEATURE} from version {done.readable_without_feature_from}")
        spark.sql(f"DESCRIBE PROTOCOL HISTORY {table}").show(truncate=False)

        moved = workdir / "events-moved"
        status = lifecycle.set_redirect(str(moved))
        print(f"\nset_redirect: {status.state} to {status.destination}, "
              f"{status.files_copied} files ({status.bytes_copied} bytes) copied")
        spark.sql(f"INSERT INTO {table} VALUES (5, 'five')")
        print(f"after an INSERT through the old path, the new location has "
              f"{spark.read.format('delta').load(str(moved)).count()} rows")
        spark.sql(f"DESCRIBE REDIRECT {table}").select("state", "mode", "destination").show(truncate=False)
        back = lifecycle.unset_redirect()
        print(f"unset_redirect: {back.state}; the original location now has "
              f"{spark.read.format('delta').load(str(path)).count()} rows")
        for step in back.steps:
            print(f"  {step}")
        spark.stop()
        read_with_stock_delta_spark(path)
    finally:
        spark.stop()
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
