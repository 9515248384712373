"""Log-only Delta tables of many files, written straight into the log: for the driver-memory
benchmark (``bench/driver_memory.py``) and the out-of-memory tests.

A table of ``n`` files is a checkpoint at ``checkpoint_version`` holding ``n`` ``add`` actions
(with statistics, as delta-spark 4.4 writes them: JSON and parsed), that version's commit (an
append with no file of its own), and ``small_commits`` commits after it of one added file each,
as a writer's appends leave them. The commits before the checkpoint are gone, as after a log
cleanup. The checkpoint is written by one Spark job, in the schema delta-spark gave the same
table's version 0, so ten million files take minutes and little memory. No data file exists.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

#: The values of the partition column ``part`` that the files spread over.
PARTITIONS = 100


def write_log_only_table(spark: Any, path: Path, n: int, outside: str = "",
                         checkpoint_version: int = 10, small_commits: int = 50) -> None:
    """Write the table at ``path`` (which must not exist) with a session that has delta-spark.
    With ``outside`` (a URI), the data files' paths are absolute, under it, instead of relative
    to the table root."""
    from pyspark.sql import functions as F

    log_dir = path / "_delta_log"
    # Version 0 by delta-spark, and its checkpoint: the protocol, the metadata and the
    # checkpoint schema the big checkpoint takes.
    spark.sql(f"CREATE TABLE delta.`{path}` (id BIGINT, part STRING) USING delta "
              "PARTITIONED BY (part) TBLPROPERTIES ('delta.enableDeletionVectors' = 'true', "
              "'delta.checkpointInterval' = '1000000')")
    jvm = spark._jvm
    jvm.org.apache.spark.sql.delta.DeltaLog.forTable(spark._jsparkSession, str(path)).checkpoint()
    first = spark.read.parquet(str(log_dir / f"{0:020d}.checkpoint.parquet"))
    add_type = first.schema["add"].dataType

    part = (F.col("id") % PARTITIONS).cast("string")
    relative = F.concat(F.lit("part="), part, F.lit("/"),
                        F.format_string("part-%010d-bench.snappy.parquet", F.col("id")))
    stats = F.struct(
        F.lit(10).cast("long").alias("numRecords"),
        F.struct(F.col("id").alias("id")).alias("minValues"),
        F.struct((F.col("id") + 9).alias("id")).alias("maxValues"),
        F.struct(F.lit(0).cast("long").alias("id")).alias("nullCount"),
        F.lit(True).alias("tightBounds"))
    values = {
        "path": F.concat(F.lit(outside.rstrip("/") + "/"), relative) if outside else relative,
        "partitionValues": F.create_map(F.lit("part"), part),
        "size": F.col("id") % 100000 + 1000,
        "modificationTime": F.lit(1700000000000),
        "dataChange": F.lit(False),
        "stats": F.to_json(stats),
        "partitionValues_parsed": F.struct(part.alias("part")),
        "stats_parsed": stats,
    }
    add = F.struct(*[(values[f.name] if f.name in values else F.lit(None)).cast(f.dataType)
                     .alias(f.name) for f in add_type.fields])
    adds = spark.range(n).select(*[
        (add if c == "add" else F.lit(None).cast(first.schema[c].dataType)).alias(c)
        for c in first.columns])
    staging = Path(str(path) + "_staging")
    (first.where("add IS NULL").unionByName(adds).coalesce(1)
     .write.mode("overwrite").parquet(str(staging)))
    [part_file] = [f for f in os.listdir(staging) if f.startswith("part-")]
    checkpoint = log_dir / f"{checkpoint_version:020d}.checkpoint.parquet"
    shutil.move(str(staging / part_file), str(checkpoint))
    shutil.rmtree(staging)

    # The log starts at the checkpoint's version, as after a log cleanup; Hadoop's checksum
    # sidecars of the files replaced go too.
    for name in os.listdir(log_dir):
        if name.startswith(f"{0:020d}.") or name.startswith((f".{0:020d}.", "._last_checkpoint")):
            os.remove(log_dir / name)
    commit_info = {"timestamp": 1700000000000, "operation": "WRITE",
                   "operationParameters": {"mode": "Append"}}
    with open(log_dir / f"{checkpoint_version:020d}.json", "x") as f:
        f.write(json.dumps({"commitInfo": commit_info}) + "\n")
    with open(log_dir / "_last_checkpoint", "w") as f:
        f.write(json.dumps({"version": checkpoint_version, "size": n + 2,
                            "sizeInBytes": checkpoint.stat().st_size,
                            "numOfAddFiles": n}) + "\n")
    for version in range(checkpoint_version + 1, checkpoint_version + small_commits + 1):
        append_one_file(log_dir, version, outside)


def append_one_file(log_dir: Path, version: int, outside: str = "") -> None:
    """Commit ``version``: one added file, written into the log as an append leaves it."""
    relative = f"part=0/part-small-{version:05d}.snappy.parquet"
    add = {"path": f"{outside.rstrip('/')}/{relative}" if outside else relative,
           "partitionValues": {"part": "0"}, "size": 1000,
           "modificationTime": 1700000000000 + version, "dataChange": True,
           "stats": json.dumps({"numRecords": 10, "minValues": {"id": 0},
                                "maxValues": {"id": 9}, "nullCount": {"id": 0},
                                "tightBounds": True})}
    info = {"timestamp": 1700000000000 + version * 1000, "operation": "WRITE",
            "operationParameters": {"mode": "Append"}}
    with open(log_dir / f"{version:020d}.json", "x") as f:
        f.write(json.dumps({"commitInfo": info}) + "\n" + json.dumps({"add": add}) + "\n")
