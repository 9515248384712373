"""Tables that each carry one table feature, and probes that try to read and write them with
another Delta client, for the compatibility checks (tests/test_compatibility_clients.py).

The tables are written by the delta-spark of the main venv (the newest, which knows every
feature); each probe runs in the client's own venv (tests/client_venvs.py), one process per
client for all tables, and prints one JSON object: table name -> {"read": ok, "write": ok,
"readError": ..., "writeError": ...}. A read is a full scan of the latest version; a write is
an append of one row with the table's own schema.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable, Dict, List, Mapping, Sequence, Tuple

from pyspark.sql import SparkSession

from client_venvs import client_venv, run_python
from spark_sessions import SessionSpec, preamble

Builder = Callable[[SparkSession, str], None]


def _create(spark: SparkSession, path: str, columns: str, props: str = "", rows: str = "") -> None:
    tbl = f"delta.`{path}`"
    spark.sql(
        f"CREATE TABLE {tbl} ({columns}) USING delta"
        + (f" TBLPROPERTIES ({props})" if props else "")
    )
    if rows:
        spark.sql(f"INSERT INTO {tbl} VALUES {rows}")


def _plain(spark: SparkSession, path: str) -> None:
    _create(spark, path, "id BIGINT", rows="(1), (2)")


def _deletion_vectors(spark: SparkSession, path: str) -> None:
    _create(spark, path, "id BIGINT", "'delta.enableDeletionVectors' = 'true'")
    spark.range(0, 20, 1, 1).write.format("delta").mode("append").save(path)
    spark.sql(f"DELETE FROM delta.`{path}` WHERE id = 3")


def _column_mapping(spark: SparkSession, path: str) -> None:
    _create(
        spark,
        path,
        "id BIGINT, name STRING",
        "'delta.columnMapping.mode' = 'name', 'delta.minReaderVersion' = '2', "
        "'delta.minWriterVersion' = '5'",
        "(1, 'a')",
    )
    spark.sql(f"ALTER TABLE delta.`{path}` RENAME COLUMN name TO label")


def _v2_checkpoint(spark: SparkSession, path: str) -> None:
    _create(spark, path, "id BIGINT", "'delta.checkpointPolicy' = 'v2'", "(1), (2)")
    # A v2 checkpoint in the log: the feature's reason to exist, and what readers stumble on.
    spark.sql(f"INSERT INTO delta.`{path}` VALUES (3)")
    from delta.tables import DeltaTable

    DeltaTable.forPath(spark, path).toDF()  # noqa: B018 (a snapshot to checkpoint)
    spark._jvm.org.apache.spark.sql.delta.DeltaLog.forTable(  # type: ignore[union-attr]
        spark._jsparkSession, path
    ).checkpoint()


def _checkpoint_protection(spark: SparkSession, path: str) -> None:
    # delta-spark 4's own fast drop leaves checkpointProtection in the protocol.
    _deletion_vectors(spark, path)
    spark.sql(f"ALTER TABLE delta.`{path}` DROP FEATURE deletionVectors")


def _feature(prop: str, columns: str = "id BIGINT", rows: str = "(1)") -> Builder:
    return lambda spark, path: _create(spark, path, columns, prop, rows)


#: table name -> how to build it; each name is also the feature it carries (plain has none).
TABLES: Dict[str, Builder] = {
    "plain": _plain,
    "deletionVectors": _deletion_vectors,
    "columnMapping": _column_mapping,
    "v2Checkpoint": _v2_checkpoint,
    "checkpointProtection": _checkpoint_protection,
    "timestampNtz": _feature("", "id BIGINT, ts TIMESTAMP_NTZ", "(1, TIMESTAMP_NTZ'2024-01-01')"),
    "typeWidening": _feature("'delta.enableTypeWidening' = 'true'"),
    "inCommitTimestamp": _feature("'delta.enableInCommitTimestamps' = 'true'"),
    "rowTracking": _feature("'delta.enableRowTracking' = 'true'"),
    "changeDataFeed": _feature("'delta.enableChangeDataFeed' = 'true'"),
    "checkConstraints": _feature("'delta.feature.checkConstraints' = 'supported'"),
    "vacuumProtocolCheck": _feature("'delta.feature.vacuumProtocolCheck' = 'supported'"),
    "variantType": _feature("", "id BIGINT, v VARIANT", "(1, parse_json('{\"a\": 1}'))"),
}


def build_tables(spark: SparkSession, root: Path, names: Sequence[str]) -> Dict[str, str]:
    """Build the named tables under ``root``; returns name -> path."""
    paths = {}
    for name in names:
        path = str(root / name)
        TABLES[name](spark, path)
        paths[name] = path
    return paths


#: Each probe reads its tables (JSON name -> path) from argv[1] and prints the result object.
_DELTALAKE_PROBE = """
import json, sys, traceback
import pyarrow as pa
from deltalake import DeltaTable, write_deltalake
out = {}
for name, path in json.loads(sys.argv[1]).items():
    r = {}
    try:
        t = DeltaTable(path)
        data = t.to_pyarrow_table()
        r["read"] = True
    except Exception as e:
        r["read"] = False; r["readError"] = repr(e)[:300]; data = None
    try:
        t = DeltaTable(path)
        sample = data.slice(0, 1) if data is not None and data.num_rows else None
        if sample is None:
            raise RuntimeError("no row to append (the read failed)")
        write_deltalake(path, sample, mode="append")
        r["write"] = True
    except Exception as e:
        r["write"] = False; r["writeError"] = repr(e)[:300]
    out[name] = r
print("PROBE-RESULT " + json.dumps(out))
"""

_POLARS_PROBE = """
import json, sys
import polars as pl
out = {}
for name, path in json.loads(sys.argv[1]).items():
    r = {}
    try:
        df = pl.scan_delta(path).collect(); r["read"] = True
    except Exception as e:
        r["read"] = False; r["readError"] = repr(e)[:300]; df = None
    try:
        if df is None or df.height == 0:
            raise RuntimeError("no row to append (the read failed)")
        df.head(1).write_delta(path, mode="append"); r["write"] = True
    except Exception as e:
        r["write"] = False; r["writeError"] = repr(e)[:300]
    out[name] = r
print("PROBE-RESULT " + json.dumps(out))
"""

_SPARK_PROBE = preamble(
    SessionSpec(
        extension=False,
        master="local[1]",
        app_name="compat-probe",
        conf={"spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "1"},
        stock_delta="given",
    ),
    packages="sys.argv[2].split(',')",
) + """
out = {}
for name, path in json.loads(sys.argv[1]).items():
    r = {}
    try:
        df = spark.read.format("delta").load(path); rows = df.collect(); r["read"] = True
    except Exception as e:
        r["read"] = False; r["readError"] = str(e)[:300]; rows = None
    try:
        if not rows:
            raise RuntimeError("no row to append (the read failed)")
        spark.createDataFrame(rows[:1], df.schema).write.format("delta").mode("append").save(path)
        r["write"] = True
    except Exception as e:
        r["write"] = False; r["writeError"] = str(e)[:300]
    out[name] = r
spark.stop()
print("PROBE-RESULT " + json.dumps(out))
"""


#: A client that runs here: its id in the capability file, its venv requirements, its probe
#: and the extra probe arguments.
RunnableClient = Tuple[str, List[str], str, List[str]]

RUNNABLE: Dict[str, RunnableClient] = {
    "deltalake-0.25": ("deltalake-0.25", ["deltalake==0.25.5", "pyarrow"], _DELTALAKE_PROBE, []),
    "deltalake-1.x": ("deltalake-1.x", ["deltalake==1.6.6", "pyarrow"], _DELTALAKE_PROBE, []),
    "polars": ("polars", ["polars==1.33.1", "deltalake==1.6.6", "pyarrow"], _POLARS_PROBE, []),
    "delta-spark-2.4": (
        "delta-spark-2.4",
        ["pyspark==3.4.4", "delta-spark==2.4.0"],
        _SPARK_PROBE,
        ["io.delta:delta-core_2.12:2.4.0"],
    ),
    "delta-spark-3.3": (
        "delta-spark-3.3",
        ["pyspark==3.5.6", "delta-spark==3.3.2"],
        _SPARK_PROBE,
        ["io.delta:delta-spark_2.12:3.3.2"],
    ),
}


def probe(client: str, tables: Mapping[str, str]) -> Dict[str, Dict[str, object]]:
    """Try to read and write each table with ``client`` (a key of RUNNABLE), in one process."""
    name, requirements, code, extra = RUNNABLE[client]
    python = client_venv(name, requirements)
    done = run_python(python, code, json.dumps(dict(tables)), *extra, timeout=1800)
    for line in done.stdout.splitlines():
        if line.startswith("PROBE-RESULT "):
            result: Dict[str, Dict[str, object]] = json.loads(line[len("PROBE-RESULT ") :])
            return result
    raise AssertionError(f"the {client} probe printed no result:\n{done.stdout}\n{done.stderr}")
