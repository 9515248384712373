"""A writer process for tests/test_concurrent_writers.py: appends small batches to one
Delta table until told to stop, and records every attempt as one JSON line.

    python concurrent_appender.py CLIENT PATH WRITER STOP_FILE OUT_FILE PAUSE_S SESSION_CONF_JSON

CLIENT is ``delta-rs`` (``deltalake.write_deltalake``) or ``delta-spark`` (a session with
stock delta-spark and without delta-lifecycle). Batch ``n`` of writer ``w`` holds the ids
``w * 1_000_000 + n * ROWS .. + ROWS - 1``, so the table itself tells which batches landed
and how often. An attempt's record says whether the append returned, and if not, the
error's type and, for Spark, its error condition: what the test needs to tell a clear
conflict from an untyped failure.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any, Callable, Dict, List

ROWS = 3


def batch_ids(writer: int, batch: int) -> List[int]:
    return [writer * 1_000_000 + batch * ROWS + j for j in range(ROWS)]


def delta_rs_appender(path: str) -> Callable[[List[int]], None]:
    import pyarrow as pa
    from deltalake import write_deltalake

    def append(ids: List[int]) -> None:
        write_deltalake(path, pa.table({"id": pa.array(ids, pa.int64())}), mode="append")

    return append


def delta_spark_appender(path: str, conf: Dict[str, str]) -> Callable[[List[int]], None]:
    from spark_sessions import SessionSpec, start_session

    spark = start_session(SessionSpec(extension=False, master="local[1]", conf=conf))
    assert "DeltaLifecycle" not in spark.conf.get("spark.sql.extensions", "")

    def append(ids: List[int]) -> None:
        frame = spark.createDataFrame([(i,) for i in ids], "id BIGINT")
        frame.write.format("delta").mode("append").save(path)

    return append


def describe(error: BaseException) -> Dict[str, Any]:
    condition = None
    get_condition = getattr(error, "getCondition", None)
    if callable(get_condition):
        condition = get_condition()
    return {
        "error": type(error).__name__,
        "error_module": type(error).__module__,
        "condition": condition,
        "message": str(error).strip().splitlines()[0][:400] if str(error).strip() else "",
    }


def main() -> None:
    client, path, writer, stop_file, out_file, pause, conf = sys.argv[1:8]
    if client == "delta-rs":
        append = delta_rs_appender(path)
    elif client == "delta-spark":
        append = delta_spark_appender(path, json.loads(conf))
    else:
        raise SystemExit(f"unknown client {client!r}")
    batch = 0
    with open(out_file, "a", encoding="utf-8") as out:
        while not Path(stop_file).exists():
            ids = batch_ids(int(writer), batch)
            record: Dict[str, Any] = {"client": client, "writer": int(writer), "batch": batch, "start": time.time()}
            try:
                append(ids)
                record["ok"] = True
            except Exception as error:  # every failure is recorded; the test judges it
                record.update(ok=False, **describe(error))
            record["end"] = time.time()
            out.write(json.dumps(record) + "\n")
            out.flush()
            batch += 1
            time.sleep(float(pause))


if __name__ == "__main__":
    main()
