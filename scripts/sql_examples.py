"""Run the examples of the documentation's SQL reference and how-to pages against a real local
session with this extension, and print each statement with its output as Markdown.

    make jar                               # the bundled jar the session loads
    .venv/bin/python scripts/sql_examples.py > /tmp/examples.md

The pages show these outputs as they were printed (sizes, timestamps and paths are those of the
run that produced them); paste a block from the output to refresh one. The site's build never
runs this: it needs Spark, the docs build does not.

Tables live under /tmp/lakehouse (removed first): a managed table `events` with deletion
vectors, a second one `orders` for DROP FEATURES FOR CLIENT, and a path table for the redirect
examples.
"""

from __future__ import annotations

import contextlib
import io
import shutil
import time
import sys
from pathlib import Path
from typing import List, Optional

from pyspark.sql import SparkSession

from delta_lifecycle import configure_spark

BASE = Path("/tmp/lakehouse")


def session() -> SparkSession:
    builder = (
        SparkSession.builder.master("local[2]")
        .appName("sql-examples")
        .config("spark.sql.warehouse.dir", str(BASE / "warehouse"))
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.ui.enabled", "false")
    )
    return configure_spark(builder).getOrCreate()


def trimmed(output: str) -> str:
    """show()'s vertical output pads every line to the widest value, and its -RECORD n- lines
    with dashes to the same width: the padding is cut, the dashes to the widest field name's
    line (at most 80 columns)."""
    lines = [line.rstrip() for line in output.rstrip().splitlines()]
    fields = [len(line) for line in lines if not line.startswith("-RECORD")]
    width = min(80, max(fields, default=0))
    return "\n".join(
        line[:max(width, line.index("-", 1))] if line.startswith("-RECORD") else line
        for line in lines
    )


def show(spark: SparkSession, statement: str, vertical: bool = False,
         columns: Optional[List[str]] = None, where: Optional[str] = None) -> None:
    """Runs a statement and prints it with its output as two Markdown code blocks: all of it,
    or the columns named (and the rows where `where` holds), which the SQL block says."""
    df = spark.sql(statement)  # a command runs here, once
    total = len(df.columns)
    if where:
        df = df.where(where)
    if columns:
        df = df.select(*columns)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        df.show(n=100, truncate=False, vertical=vertical)
    parts = ([f"{len(columns)} of its {total} columns"] if columns else []) + (
        [f"rows where {where}"] if where else [])
    shown = f"  -- output: {', '.join(parts)}" if parts else ""
    print("```sql")
    print(statement.strip() + ";" + shown)
    print("```")
    print()
    print("```text")
    print(trimmed(out.getvalue()))
    print("```")
    print()
    sys.stdout.flush()


def python(code: str) -> None:
    """Runs Python code (another client, such as delta-rs) and prints it with its output."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(code, {})
    print("```python")
    print(code.strip())
    print("```")
    print()
    print("```text")
    print(out.getvalue().rstrip())
    print("```")
    print()
    sys.stdout.flush()


def run(spark: SparkSession, statement: str) -> None:
    spark.sql(statement).collect()


def heading(text: str) -> None:
    print(f"## {text}\n")


def main() -> None:
    shutil.rmtree(BASE, ignore_errors=True)
    BASE.mkdir(parents=True)
    spark = session()
    spark.sparkContext.setLogLevel("ERROR")

    # events: created, written, deletion vectors on, a DELETE that writes one.
    run(spark, "CREATE TABLE events (id BIGINT, kind STRING) USING delta")
    run(spark, "INSERT INTO events SELECT id, IF(id % 2 = 0, 'click', 'view') FROM range(1000)")
    run(spark, "ALTER TABLE events SET TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')")
    run(spark, "DELETE FROM events WHERE id % 10 = 0")
    for i in range(3):
        run(spark, f"INSERT INTO events VALUES ({1000 + i}, 'view')")

    heading("DESCRIBE PROTOCOL HISTORY")
    show(spark, "DESCRIBE PROTOCOL HISTORY events",
         columns=["version", "operation", "minReaderVersion", "minWriterVersion",
                  "readerFeatures", "writerFeatures", "checkpoint"])
    show(spark, "DESCRIBE PROTOCOL HISTORY events", vertical=True, where="version = 3")

    heading("COMPACT LOG")
    show(spark, "ALTER TABLE events COMPACT LOG FROM VERSION 1 TO VERSION 3", vertical=True)
    show(spark, "ALTER TABLE events COMPACT LOG", vertical=True)

    heading("DESCRIBE LOG FILES")
    show(spark, "DESCRIBE LOG FILES events",
         columns=["version", "endVersion", "kind", "file", "size"])

    heading("DESCRIBE COMPATIBILITY")
    show(spark, "DESCRIBE COMPATIBILITY events FOR 'deltalake-0.25'", vertical=True)
    show(spark, "DESCRIBE COMPATIBILITY events",
         columns=["client", "versions", "canRead", "canWrite", "dropForRead"])

    heading("DROP FEATURE")
    drop_columns = ["feature", "mode", "status", "filesRewritten", "bytesRewritten",
                    "commitVersions", "checkpointVersions", "protectedBefore",
                    "readableWithoutFeatureFrom", "steps"]
    show(spark, "ALTER TABLE events DROP FEATURE deletionVectors DRY RUN", vertical=True,
         columns=drop_columns)
    show(spark, "ALTER TABLE events DROP FEATURE deletionVectors", vertical=True,
         columns=drop_columns + ["clientsBlockedByProtection"])
    show(spark, "DESCRIBE PROTOCOL HISTORY events",
         columns=["version", "operation", "readerFeatures", "writerFeatures", "checkpoint",
                  "requireCheckpointProtectionBeforeVersion"])

    heading("CLEAN LOG")
    show(spark, "ALTER TABLE events CLEAN LOG RETAIN 0 HOURS DRY RUN",
         columns=["path", "kind", "version", "sizeInBytes", "action", "reason"])

    heading("DROP FEATURES FOR CLIENT")
    run(spark, "CREATE TABLE orders (id BIGINT, amount DECIMAL(10, 2)) USING delta "
               "TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')")
    run(spark, "INSERT INTO orders SELECT id, id * 1.5 FROM range(100)")
    run(spark, "DELETE FROM orders WHERE id < 10")
    show(spark, "DESCRIBE COMPATIBILITY orders FOR 'deltalake'",
         columns=["client", "canRead", "canWrite", "readBlockers", "dropForRead"])
    show(spark, "ALTER TABLE orders DROP FEATURES FOR CLIENT 'deltalake-0.25' DRY RUN",
         columns=["feature", "mode", "status", "filesRewritten", "commitVersions",
                  "readableWithoutFeatureFrom"])
    show(spark, "ALTER TABLE orders DROP FEATURES FOR CLIENT 'deltalake-0.25'",
         columns=["feature", "mode", "status", "filesRewritten", "commitVersions",
                  "readableWithoutFeatureFrom"])
    show(spark, "DESCRIBE COMPATIBILITY orders FOR 'deltalake'",
         columns=["client", "canRead", "canWrite", "readBlockers", "writeBlockers"])
    orders = spark.sql("DESCRIBE DETAIL orders").first()["location"]
    python(f"""
from deltalake import DeltaTable
t = DeltaTable("{orders}")
print(t.version(), t.to_pyarrow_table().num_rows)
""")

    heading("SET REDIRECT, DESCRIBE REDIRECT, UNSET REDIRECT")
    source = BASE / "bucket-a" / "clicks"
    spark.range(0, 500).selectExpr("id", "'click' AS kind").write.format("delta").save(
        str(source))
    spark.range(500, 600).selectExpr("id", "'click' AS kind").write.format("delta").mode(
        "append").save(str(source))
    target = BASE / "bucket-b" / "clicks"
    show(spark, f"ALTER TABLE delta.`{source}` SET REDIRECT TO '{target}' DRY RUN",
         vertical=True)
    show(spark, f"ALTER TABLE delta.`{source}` SET REDIRECT TO '{target}'", vertical=True)
    show(spark, f"DESCRIBE REDIRECT delta.`{source}`",
         columns=["state", "mode", "type", "destination", "version"])
    show(spark, f"SELECT count(*) FROM delta.`{source}`")
    run(spark, f"INSERT INTO delta.`{source}` VALUES (600, 'click')")
    show(spark, f"ALTER TABLE delta.`{source}` UNSET REDIRECT DRY RUN",
         columns=["state", "destination", "filesToCopy", "logFilesToCopy", "copyMode",
                  "refusals"])
    show(spark, f"ALTER TABLE delta.`{source}` UNSET REDIRECT",
         columns=["state", "mode", "destination", "version", "filesCopied", "commitVersions"])

    heading("Catalog table moved to a new table")
    run(spark, "CREATE DATABASE archive")
    show(spark, "ALTER TABLE orders SET REDIRECT WRITER ONLY TO TABLE archive.orders",
         columns=["table", "state", "mode", "type", "destination", "destinationLocation"])
    show(spark, "SELECT count(*) FROM orders")

    heading("Log compaction settings")
    run(spark, "CREATE TABLE metrics (ts TIMESTAMP, value DOUBLE) USING delta "
               "TBLPROPERTIES ('delta.checkpointInterval' = '100', "
               "'deltaLifecycle.logCompaction.interval' = '10')")
    for i in range(25):
        run(spark, f"INSERT INTO metrics VALUES (current_timestamp(), {i})")
    time.sleep(10)  # the post-commit policy compacts in the background
    show(spark, "DESCRIBE LOG FILES metrics", columns=["version", "endVersion", "kind", "file"],
         where="kind <> 'checksum'")

    heading("CHECKPOINT")
    run(spark, "CREATE TABLE visits (id BIGINT, page STRING) USING delta "
               "TBLPROPERTIES ('delta.checkpointInterval' = '100')")
    run(spark, "INSERT INTO visits SELECT id, 'home' FROM range(1000)")
    for i in range(3):
        run(spark, f"INSERT INTO visits SELECT id, 'page{i}' FROM range({i * 10}, {i * 10 + 10})")
    run(spark, "ALTER TABLE visits CHECKPOINT")
    for i in range(3, 6):
        run(spark, f"INSERT INTO visits SELECT id, 'page{i}' FROM range({i * 10}, {i * 10 + 10})")
    show(spark, "ALTER TABLE visits CHECKPOINT DRY RUN", vertical=True)
    show(spark, "ALTER TABLE visits CHECKPOINT", vertical=True)

    spark.stop()


if __name__ == "__main__":
    main()
