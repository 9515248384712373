"""A table's protocol history, from creation through feature upgrades, a checkpoint and
a fast DROP FEATURE with checkpoint protection.

Run it with ``make demo`` (or ``.venv/bin/python python/examples/demo.py`` once
``make install`` has run). It starts a local Spark session configured by
``configure_spark``, writes a Delta table in a temporary directory, and prints
``DESCRIBE PROTOCOL HISTORY`` both as SQL output and as typed Python values. Then it plans
and runs ``DROP FEATURE deletionVectors`` (``v2Checkpoint`` on Spark 3.5, whose delta-spark
3.3 cannot remove deletion vectors) and shows the protocol history again. Last, it
redirects the table to a new location, writes through the old path, and removes the
redirect again, which brings the new rows home.
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
    ("insert", "INSERT INTO {t} VALUES (3, 'three')"),
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

# delta-spark 3.3 (Spark 3.5) cannot remove deletion vectors (docs/spark-lines.md).
FEATURE = "v2Checkpoint" if current_line().line == "3.5" else "deletionVectors"


def main() -> None:
    builder = (
        SparkSession.builder.master("local[2]")
        .appName("delta-lifecycle demo")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.databricks.delta.snapshotPartitions", "2")
    )
    spark = configure_spark(builder).getOrCreate()
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
    finally:
        spark.stop()
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
