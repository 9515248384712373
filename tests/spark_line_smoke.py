"""Every statement of delta-lifecycle once, on whatever Spark line runs this script.

Run by tests/test_spark_lines.py with another line's pyspark and delta-spark (its own venv)
and this project's package installed there from the built wheel (or, in a developer's run
without one, on PYTHONPATH):

    python spark_line_smoke.py <workdir> <session conf as JSON>

It runs every statement in a session with the extension, then stops that session and reads
every table it touched with stock delta-spark (a session without the extension, same JVM). It
prints one JSON line (prefixed ``RESULT ``) with what it saw, the stock reads under ``stock``;
every check that needs a session is an assert here, the checks with other clients are the
caller's.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any, Dict, List

sys.path.append(str(Path(__file__).resolve().parent))  # tests/, for the session factory
from spark_sessions import SessionSpec, start_session  # noqa: E402

workdir = Path(sys.argv[1])
conf: Dict[str, str] = json.loads(sys.argv[2])

# Seconds spent in each part of the run (session start, each group of statements), reported
# with the result so a slow line shows where its time goes.
timings: Dict[str, float] = {}
_last = [time.monotonic()]


def lap(name: str) -> None:
    now = time.monotonic()
    timings[name] = round(now - _last[0], 1)
    _last[0] = now


#: Both sessions: the extension's, then stock delta-spark's in the same JVM. Each starts from a
#: fresh builder with the test sessions' settings: the stock session must not inherit the
#: extension's settings from the builder configure_spark filled in.
SESSION = SessionSpec(
    master="local[1]",
    app_name="spark-line-smoke",
    conf={**conf, "spark.sql.warehouse.dir": str(workdir / "warehouse")},
)


def ids(df: Any) -> List[int]:
    return sorted(int(r[0]) for r in df.select("id").collect())


def stock_reads() -> Dict[str, Any]:
    """Stock delta-spark of the same line reads every table the statements touched: a session
    with delta-spark's own extension and catalog, no delta-lifecycle."""
    # The JVM has delta-spark's jars already: the extension's session loaded them.
    spark = start_session(SESSION.updated(extension=False, stock_delta="given"))
    lap("stock_session")
    extensions = spark.conf.get("spark.sql.extensions")
    assert "DeltaLifecycle" not in extensions, extensions
    catalog = spark.conf.get("spark.sql.catalog.spark_catalog")
    assert catalog == "org.apache.spark.sql.delta.catalog.DeltaCatalog", catalog
    seen: Dict[str, Any] = {}
    for name in ("dropped", "dvs", "for_client", "redirect_src", "redirect_dest", "policy"):
        path = str(workdir / name)
        seen[name] = ids(spark.read.format("delta").load(path))
        # Stock delta-spark's own view of the protocol: what it would refuse, it refuses here.
        seen[name + "_features"] = sorted(
            spark.sql(f"DESCRIBE DETAIL delta.`{path}`").collect()[0]["tableFeatures"] or []
        )
    lap("stock_reads")
    spark.stop()
    return seen


from delta_lifecycle import LifecycleTable, current_line  # noqa: E402
from delta_lifecycle.errors import DropNotSupportedOnLineError, translate_errors  # noqa: E402

line = current_line()
spark = start_session(SESSION)
lap("session")
out = {"line": line.line, "spark": spark.version}
droppable = spark._jvm.io.github.deltalifecycle.features.dropfeature.DroppableFeatures
out["droppable"] = sorted(str(droppable.Names().mkString(",")).split(","))
out["droppable_beyond_stock"] = sorted(filter(None, str(droppable.beyondStock().mkString(",")).split(",")))


def sql(text: str) -> List[Any]:
    with translate_errors():
        return spark.sql(text).collect()


# ---- DESCRIBE PROTOCOL HISTORY, DROP FEATURE (fast, then TRUNCATE HISTORY) -----------------
dropped = workdir / "dropped"
sql(
    f"create table delta.`{dropped}` (id BIGINT) using delta "
    "tblproperties ('delta.checkpointPolicy' = 'v2', 'delta.checkpointInterval' = '3')"
)
for i in range(4):
    sql(f"INSERT INTO delta.`{dropped}` VALUES ({i})")
history = sql(f"DESCRIBE PROTOCOL HISTORY delta.`{dropped}`")
out["protocol_history_rows"] = len(history)
assert history, "DESCRIBE PROTOCOL HISTORY returned nothing"

# Fast drop of a reader-writer feature: checkpoint protection, written by this project's
# committer (delta-spark 3.3's own fast drop is off by default).
plan = LifecycleTable.for_path(spark, str(dropped)).drop_feature("v2Checkpoint", dry_run=True)
result = LifecycleTable.for_path(spark, str(dropped)).drop_feature("v2Checkpoint")
assert (plan.mode, result.mode, result.status) == ("fast", "fast", "dropped"), result
assert result.protected_before is not None, result
out["fast_drop_protected_before"] = result.protected_before
props = {r[0]: r[1] for r in sql(f"SHOW TBLPROPERTIES delta.`{dropped}`")}
assert props.get("delta.requireCheckpointProtectionBeforeVersion") == str(
    result.protected_before
), props
sql(f"INSERT INTO delta.`{dropped}` VALUES (10)")
lap("fast_drop")

# deletionVectors: dropped on every line (on 3.5 by this project's own removal: delta-spark 3.3
# declares none).
dvs = workdir / "dvs"
sql(
    f"CREATE TABLE delta.`{dvs}` (id BIGINT) USING delta "
    "TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')"
)
sql(f"INSERT INTO delta.`{dvs}` VALUES (1), (2), (3)")
sql(f"DELETE FROM delta.`{dvs}` WHERE id = 2")
try:
    dv_result = LifecycleTable.for_path(spark, str(dvs)).drop_feature("deletionVectors")
    out["deletion_vectors"] = dv_result.status
except DropNotSupportedOnLineError as e:
    out["deletion_vectors"] = "refused: " + e.condition
assert ids(spark.read.format("delta").load(str(dvs))) == [1, 3]
lap("deletion_vectors")

# DESCRIBE COMPATIBILITY and DROP FEATURES FOR CLIENT: delta-rs 1.x reads neither v2Checkpoint
# nor deletion vectors; the client drop removes both (fast drops) and the table becomes readable
# to it.
for_client = workdir / "for_client"
sql(
    f"CREATE TABLE delta.`{for_client}` (id BIGINT) USING delta "
    "TBLPROPERTIES ('delta.checkpointPolicy' = 'v2', 'delta.enableDeletionVectors' = 'true')"
)
sql(f"INSERT INTO delta.`{for_client}` VALUES (1), (2), (5)")
sql(f"DELETE FROM delta.`{for_client}` WHERE id = 5")


def delta_rs_verdict() -> Any:
    row = sql(f"DESCRIBE COMPATIBILITY delta.`{for_client}` FOR 'deltalake-1.x'")[0]
    return [row["canRead"], list(row["readBlockers"]), list(row["dropForRead"])]


out["compatibility_before"] = delta_rs_verdict()
client_drops = sql(f"ALTER TABLE delta.`{for_client}` DROP FEATURES FOR CLIENT 'deltalake-1.x'")
out["client_drops"] = [[r["feature"], r["status"]] for r in client_drops]
out["compatibility_after"] = delta_rs_verdict()
sql(f"INSERT INTO delta.`{for_client}` VALUES (3)")
lap("compatibility")

# TRUNCATE HISTORY: checkpointProtection itself goes with the history before its boundary,
# once that history is older than the truncation retention (24 hours): age the log files.
latest = max(int(n[:20]) for n in os.listdir(dropped / "_delta_log") if n.endswith(".json"))
base = time.time() - 48 * 3600
for name in os.listdir(dropped / "_delta_log"):
    if name[:20].isdigit():
        stamp = base + int(name[:20])
        os.utime(dropped / "_delta_log" / name, (stamp, stamp))
truncated = LifecycleTable.for_path(spark, str(dropped)).drop_feature(
    "checkpointProtection", truncate_history=True
)
assert (truncated.mode, truncated.status) == ("truncate-history", "dropped"), truncated
out["truncate_history_before"] = truncated.history_truncated_before
assert ids(spark.read.format("delta").load(str(dropped))) == [0, 1, 2, 3, 10]
lap("truncate_history")

# ---- COMPACT LOG, the post-commit policy, CLEAN LOG -----------------------------------------
policy = workdir / "policy"
sql(
    f"CREATE TABLE delta.`{policy}` (id BIGINT) USING delta TBLPROPERTIES "
    "('delta.checkpointInterval' = '100', 'deltaLifecycle.logCompaction.interval' = '3')"
)
for i in range(7):
    sql(f"INSERT INTO delta.`{policy}` VALUES ({i})")
deadline = time.time() + 120
while time.time() < deadline and not any(
    n.endswith(".compacted.json") for n in os.listdir(policy / "_delta_log")
):
    time.sleep(0.5)
out["policy_compactions"] = sorted(
    n for n in os.listdir(policy / "_delta_log") if n.endswith(".compacted.json")
)
assert out["policy_compactions"], "the post-commit policy wrote no compaction"
compacted = sql(f"ALTER TABLE delta.`{policy}` COMPACT LOG")
out["compact_log"] = [str(r[0]) for r in compacted]
cleaned = sql(f"ALTER TABLE delta.`{policy}` CLEAN LOG RETAIN 0 HOURS DRY RUN")
out["clean_log_dry_run_rows"] = len(cleaned)
sql(f"ALTER TABLE delta.`{policy}` CLEAN LOG")
assert ids(spark.read.format("delta").load(str(policy))) == list(range(7))
lap("compaction")

# ---- SET / DESCRIBE / UNSET REDIRECT, routing by name, path and DataFrame -------------------
src, dest = workdir / "redirect_src", workdir / "redirect_dest"
sql(f"CREATE TABLE events (id BIGINT) USING delta LOCATION '{src}'")
sql("INSERT INTO events VALUES (1), (2)")
sql(f"ALTER TABLE events SET REDIRECT TO '{dest}'")
described = sql("DESCRIBE REDIRECT events")
out["describe_redirect"] = [str(v) for v in described[0]]
sql("INSERT INTO events VALUES (3)")  # by name
sql(f"INSERT INTO delta.`{src}` VALUES (4)")  # by path
spark.createDataFrame([(5,)], "id BIGINT").write.format("delta").mode("append").save(str(src))
by_name = ids(spark.table("events"))
by_path = ids(spark.sql(f"SELECT * FROM delta.`{src}`"))
try:
    by_dataframe: Any = ids(spark.read.format("delta").load(str(src)))
except Exception as e:
    # Spark 3.5's DataFrameReader.load opens the path itself, before any analyzer rule, and
    # delta-spark 3.3 refuses a reader-writer redirected source (docs/spark-lines.md).
    if line.line != "3.5" or "redirectReaderWriter" not in str(e):
        raise
    by_dataframe = "refused: " + ("DELTA_UNSUPPORTED_FEATURES_FOR_READ" if
                                  "DELTA_UNSUPPORTED_FEATURES_FOR_READ" in str(e) else str(e)[:200])
out["routed"] = {"name": by_name, "path": by_path, "dataframe": by_dataframe}
assert by_name == by_path == [1, 2, 3, 4, 5], out["routed"]

# A writer-only redirect: the source stays readable, so DataFrame reads are routed on every line.
wo, wo_dest = workdir / "wo_src", workdir / "wo_dest"
sql(f"CREATE TABLE delta.`{wo}` (id BIGINT) USING delta")
sql(f"INSERT INTO delta.`{wo}` VALUES (1)")
sql(f"ALTER TABLE delta.`{wo}` SET REDIRECT WRITER ONLY TO '{wo_dest}'")
spark.createDataFrame([(2,)], "id BIGINT").write.format("delta").mode("append").save(str(wo))
out["routed"]["dataframe_writer_only"] = ids(spark.read.format("delta").load(str(wo)))
assert out["routed"]["dataframe_writer_only"] == [1, 2], out["routed"]
assert ids(spark.read.format("delta").load(str(wo_dest))) == [1, 2]
assert ids(spark.read.format("delta").load(str(dest))) == [1, 2, 3, 4, 5]
sql("ALTER TABLE events UNSET REDIRECT")
assert ids(spark.table("events")) == [1, 2, 3, 4, 5]
lap("redirect")

# Stock delta-spark, in this process: saves a second JVM start and delta-spark's resolution per
# line. The extension's session and its SparkContext stop; a new SparkContext on the same JVM
# (whose class path holds the same delta-spark jars) starts a session configured with
# delta-spark's extension and catalog only, and DeltaLog's JVM-wide cache is emptied so every
# table is read from storage again, not from a snapshot the extension's session loaded.
jvm = spark.sparkContext._jvm
spark.stop()
jvm.org.apache.spark.sql.delta.DeltaLog.clearCache()
out["stock"] = stock_reads()
out["timings"] = timings
print("RESULT " + json.dumps(out), flush=True)
