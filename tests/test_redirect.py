"""Table redirection end to end through Python, against clients this project did not write.

One module session (with the extension and its catalog) redirects tables and writes through
the DataFrame API; then stock delta-spark (a subprocess without the extension) and delta-rs
act as the RFC's legacy clients: with ``redirectReaderWriter`` they can neither read nor
write the source, with ``redirectWriterOnly`` they read the source as it was and cannot
write it, and both read every destination and every source after UNSET REDIRECT.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict

import pyarrow as pa
import pytest
from deltalake import DeltaTable, write_deltalake
from pyspark.sql import SparkSession

from delta.tables import DeltaTable as SparkDeltaTable
from spark_line import ON_SPARK_35
from stock_session import run_stock_script
from table_helpers import delta_rs_ids, ids
from delta_lifecycle import LifecycleTable, RedirectStatus
from delta_lifecycle.errors import (
    InvalidRedirectError,
    RedirectDestinationNotEmptyError,
    RedirectInvalidTransitionError,
    RedirectNotRoutedError,
    RedirectStateError,
    RedirectWriteRefusedError,
    translate_errors,
)


#: The module's tables: three sources and their destinations.
TABLE_NAMES = ("rw", "rw_dest", "wo", "wo_dest", "back", "back_dest")


def _table(spark: SparkSession, path: Path, rows: range) -> None:
    spark.sql(f"CREATE TABLE delta.`{path}` (id BIGINT) USING delta")
    spark.sql(f"INSERT INTO delta.`{path}` SELECT id FROM range({rows.start}, {rows.stop})")


def _append(spark: SparkSession, path: Path, value: int) -> None:
    df = spark.createDataFrame([(value,)], "id BIGINT")
    df.write.format("delta").mode("append").save(str(path))


@pytest.fixture(scope="module")
def tables(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Dict[str, Any]:
    """Three redirects: reader-writer and writer-only (left READY), and one set, written
    through and unset again."""
    root = tmp_path_factory.mktemp("redirect")
    t: Dict[str, Any] = {name: root / name for name in TABLE_NAMES}
    _table(spark, t["rw"], range(0, 10))
    t["rw_status"] = LifecycleTable.for_path(spark, str(t["rw"])).set_redirect(str(t["rw_dest"]))
    _append(spark, t["rw"], 100)
    spark.sql(f"INSERT INTO delta.`{t['rw']}` VALUES (101)")

    _table(spark, t["wo"], range(0, 5))
    LifecycleTable.for_path(spark, str(t["wo"])).set_redirect(str(t["wo_dest"]), mode="writer_only")
    _append(spark, t["wo"], 50)

    _table(spark, t["back"], range(0, 3))
    back = LifecycleTable.for_path(spark, str(t["back"]))
    back.set_redirect(str(t["back_dest"]))
    _append(spark, t["back"], 30)
    spark.sql(f"DELETE FROM delta.`{t['back']}` WHERE id = 0")
    t["back_unset"] = back.unset_redirect()
    return t


@pytest.fixture(scope="module")
def stock(tables: Dict[str, Any]) -> Dict[str, Any]:
    """What stock delta-spark (no extension) can do with each table."""
    body = """
        paths = json.loads(sys.argv[1])
        out = {}
        for name, path in paths.items():
            try:
                rows = spark.read.format("delta").load(path).collect()
                out[name + ".read"] = sorted(int(r[0]) for r in rows)
            except Exception as e:
                out[name + ".read"] = refusal(e)
            if name in ("rw", "wo"):
                try:
                    df = spark.createDataFrame([(999,)], "id BIGINT")
                    df.write.format("delta").mode("append").save(path)
                    out[name + ".write"] = "written"
                except Exception as e:
                    out[name + ".write"] = refusal(e)
        emit(out)
    """
    paths = {n: str(tables[n]) for n in TABLE_NAMES}
    return run_stock_script(body, [json.dumps(paths)])


def test_set_redirect_reports_the_copy(tables: Dict[str, Any]) -> None:
    status: RedirectStatus = tables["rw_status"]
    assert status.state == "READY" and status.mode == "READER WRITER"
    assert status.type == "Object Store"
    location = status.destination_location
    assert location is not None and location.endswith("rw_dest")
    assert status.files_copied > 0 and status.bytes_copied > 0
    assert len(status.commit_versions) == 2


def test_reads_and_writes_by_path_follow_the_redirect(
    spark: SparkSession, tables: Dict[str, Any]
) -> None:
    expected = list(range(0, 10)) + [100, 101]
    if ON_SPARK_35:
        # delta-spark 3.3 opens a reader-writer redirected source by path itself, and refuses it
        # before any rule can route the read (docs/spark-lines.md).
        with pytest.raises(Exception, match="DELTA_UNSUPPORTED_FEATURES_FOR_READ"):
            ids(spark, tables["rw"])
    else:
        assert ids(spark, tables["rw"]) == expected
    assert ids(spark, tables["rw_dest"]) == expected
    rows = spark.sql(f"SELECT id FROM delta.`{tables['rw']}`").collect()
    assert sorted(int(r[0]) for r in rows) == expected
    assert ids(spark, tables["wo"]) == [0, 1, 2, 3, 4, 50]


def test_this_projects_statements_follow_the_redirect(
    spark: SparkSession, tables: Dict[str, Any]
) -> None:
    """The RFC routes all queries on a READY source, this project's statements too; the
    result says which table each acted on. The source's own log takes no more commits."""
    source = LifecycleTable.for_path(spark, str(tables["rw"]))
    destination = str(tables["rw_dest"])
    history = source.protocol_history()
    assert all(v.table.endswith(f"{destination}`") for v in history)
    assert [v.operation for v in history][-2:] == ["WRITE", "WRITE"]  # the writes routed there
    assert source.compact_log().table.endswith(f"{destination}`")
    assert all(c.table.endswith(f"{destination}`") for c in source.compatibility())
    assert source.redirect_status() is not None  # the redirect's own statement: the source


def test_delta_table_is_delta_table_follows_the_redirect(
    spark: SparkSession, tables: Dict[str, Any]
) -> None:
    """Stock delta-spark refuses a reader-writer source in `isDeltaTable`, and answers True on its
    destination; routed, the source answers as its destination does."""
    assert SparkDeltaTable.isDeltaTable(spark, str(tables["rw"])) is True
    assert SparkDeltaTable.isDeltaTable(spark, str(tables["wo"])) is True
    assert SparkDeltaTable.isDeltaTable(spark, str(tables["rw"].parent / "no-table")) is False


def test_redirect_status(spark: SparkSession, tables: Dict[str, Any]) -> None:
    status = LifecycleTable.for_path(spark, str(tables["wo"])).redirect_status()
    assert status is not None and status.state == "READY" and status.mode == "WRITER ONLY"
    assert LifecycleTable.for_path(spark, str(tables["back"])).redirect_status() is None


def test_stock_delta_spark_is_a_legacy_client(stock: Dict[str, Any]) -> None:
    assert "redirectReaderWriter" in stock["rw.read"]
    assert "redirectReaderWriter" in stock["rw.write"]
    assert stock["rw_dest.read"] == list(range(0, 10)) + [100, 101]
    # Writer-only: legacy readers see the source as it was when the redirect began.
    assert stock["wo.read"] == [0, 1, 2, 3, 4]
    assert "redirectWriterOnly" in stock["wo.write"]
    assert stock["wo_dest.read"] == [0, 1, 2, 3, 4, 50]


#: One row, as delta-rs writes it.
ONE_ROW = pa.table({"id": pa.array([7], pa.int64())})


def test_delta_rs_is_a_legacy_client(tables: Dict[str, Any]) -> None:
    with pytest.raises(Exception, match="redirectReaderWriter"):
        DeltaTable(str(tables["rw"])).to_pyarrow_table()
    with pytest.raises(Exception, match="redirect"):
        write_deltalake(str(tables["rw"]), ONE_ROW, mode="append")
    assert delta_rs_ids(tables["rw_dest"]) == list(range(0, 10)) + [100, 101]
    assert delta_rs_ids(tables["wo"]) == [0, 1, 2, 3, 4]
    with pytest.raises(Exception, match="redirectWriterOnly"):
        write_deltalake(str(tables["wo"]), ONE_ROW, mode="append")


def test_unset_redirect_brings_every_row_back_for_every_client(
    spark: SparkSession, tables: Dict[str, Any], stock: Dict[str, Any]
) -> None:
    status: RedirectStatus = tables["back_unset"]
    assert status.state == "NORMAL" and not status.redirected
    expected = [1, 2, 30]
    assert ids(spark, tables["back"]) == expected
    assert stock["back.read"] == expected
    assert delta_rs_ids(tables["back"]) == expected
    # The destination stays readable and refuses writes from everyone.
    assert stock["back_dest.read"] == expected
    assert delta_rs_ids(tables["back_dest"]) == expected
    with pytest.raises(RedirectWriteRefusedError, match="read-only"), translate_errors():
        spark.sql(f"INSERT INTO delta.`{tables['back_dest']}` VALUES (5)").collect()


def test_typed_errors(spark: SparkSession, tables: Dict[str, Any], tmp_path: Path) -> None:
    src = tmp_path / "src"
    _table(spark, src, range(0, 2))
    table = LifecycleTable.for_path(spark, str(src))
    with pytest.raises(RedirectDestinationNotEmptyError):
        table.set_redirect(str(tables["rw_dest"]))
    with pytest.raises(RedirectStateError):
        table.unset_redirect()
    with pytest.raises(RedirectStateError):
        LifecycleTable.for_path(spark, str(tables["rw"])).set_redirect(str(tmp_path / "elsewhere"))
    key = "delta.redirectReaderWriter"
    with pytest.raises(InvalidRedirectError), translate_errors():
        spark.sql(f"ALTER TABLE delta.`{src}` SET TBLPROPERTIES ('{key}' = '[1, 2]')").collect()
    ready = json.dumps(
        {"Type": "Object Store", "State": "READY", "Spec": {"Location": str(tmp_path / "x")}}
    )
    with pytest.raises(RedirectInvalidTransitionError), translate_errors():
        spark.sql(f"ALTER TABLE delta.`{src}` SET TBLPROPERTIES ('{key}' = '{ready}')").collect()
    with pytest.raises(ValueError):
        table.set_redirect()
    with pytest.raises(ValueError):
        table.set_redirect(str(tmp_path / "y"), mode="sideways")
    assert ids(spark, src) == [0, 1]


def test_quoted_path_statements_follow_the_redirect(
    spark: SparkSession, tables: Dict[str, Any]
) -> None:
    """delta-spark resolves the table of its statements on a quoted path itself, from the
    path; they follow a redirect as ``delta.`<path>` `` does. So does delta-spark's Scala
    ``DeltaTable`` by path for the operations it plans as statements (``detail``)."""
    if ON_SPARK_35:
        # No analyzer batch runs before delta-spark resolves the path (docs/spark-lines.md): a
        # writer-only source is refused by the routing check instead of answering stale.
        with pytest.raises(RedirectNotRoutedError), translate_errors():
            spark.sql(f"DESCRIBE HISTORY '{tables['wo']}'").collect()
        return
    for name in ("wo", "rw"):
        source, dest = tables[name], tables[name + "_dest"]
        versions = [r.version for r in spark.sql(f"DESCRIBE HISTORY '{source}'").collect()]
        assert versions == [r.version for r in
                            spark.sql(f"DESCRIBE HISTORY delta.`{dest}`").collect()], name
        assert spark.sql(f"DESCRIBE DETAIL '{source}'").collect()[0].location == f"file:{dest}"
    source, dest = tables["wo"], tables["wo_dest"]
    spark.sql(f"VACUUM '{source}' DRY RUN").collect()
    assert spark.sql(f"OPTIMIZE '{source}'").collect()[0].path == f"file:{dest}"
    assert ids(spark, source) == [0, 1, 2, 3, 4, 50]
    scala = spark.sparkContext._jvm.io.delta.tables.DeltaTable.forPath(  # type: ignore[union-attr]
        spark._jsparkSession, str(source)
    )
    assert json.loads(scala.detail().toJSON().first())["location"] == f"file:{dest}"
