"""SET and UNSET REDIRECT with ``s3a://`` tables: from one bucket to another, and from a
bucket to local disk. Each is followed by stock delta-spark and delta-rs, which act as the
RFC's legacy clients: shut out of a reader-writer source, reading every destination and
every source after UNSET REDIRECT.

The session allows redirects only into the two buckets and the local directory
(``spark.deltaLifecycle.redirect.allowedLocationPrefixes``), so the check of allowed
locations runs on ``s3a`` paths too.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, Optional, Tuple

import pytest
from pyspark.sql import SparkSession

from delta_lifecycle import LifecycleTable, RedirectStatus
from delta_lifecycle.errors import RedirectLocationNotAllowedError, RedirectWriteRefusedError
from delta_lifecycle.errors import translate_errors
from objectstore.helpers import (
    FULL_OBJECTSTORE_SUITE,
    FULL_SUITE_ONLY,
    delta_rs_ids,
    ids,
    s3_stock_conf,
)
from stock_session import StockRead, stock_read_ids
from objectstore.server import ObjectStore

if not FULL_OBJECTSTORE_SUITE:
    pytest.skip(FULL_SUITE_ONLY, allow_module_level=True)

ALLOWED_PREFIXES = "spark.deltaLifecycle.redirect.allowedLocationPrefixes"


def _table(spark: SparkSession, uri: str, rows: range) -> None:
    spark.sql(f"CREATE TABLE delta.`{uri}` (id BIGINT) USING delta")
    spark.sql(f"INSERT INTO delta.`{uri}` SELECT id FROM range({rows.start}, {rows.stop})")


def _append(spark: SparkSession, uri: str, value: int) -> None:
    spark.createDataFrame([(value,)], "id BIGINT").write.format("delta").mode("append").save(uri)


@pytest.fixture(scope="module")
def places(new_bucket: Any, tmp_path_factory: pytest.TempPathFactory) -> Dict[str, str]:
    """Two buckets and a local directory, the only places redirects may point to, and a
    bucket they may not."""
    return {
        "source": new_bucket("redirect-source"),
        "destination": new_bucket("redirect-destination"),
        "local": str(tmp_path_factory.mktemp("redirect-local")),
        "elsewhere": new_bucket("redirect-elsewhere"),
    }


@pytest.fixture(scope="module")
def start_conf(places: Dict[str, str]) -> Dict[str, str]:
    """The allow-list is the administrator's: this module's application starts with it."""
    return {ALLOWED_PREFIXES: ",".join(places[k] for k in ("source", "destination", "local"))}


@pytest.fixture(scope="module")
def tables(spark: SparkSession, places: Dict[str, str]) -> Dict[str, Any]:
    """``rw``: a reader-writer redirect between buckets, written through and left READY.
    ``back``: the same, then unset. ``local``: a bucket to local disk, written through
    and unset."""
    t: Dict[str, Any] = {
        "rw": f"{places['source']}/rw",
        "rw_dest": f"{places['destination']}/rw",
        "back": f"{places['source']}/back",
        "back_dest": f"{places['destination']}/back",
        "local": f"{places['source']}/to-local",
        "local_dest": str(Path(places["local"]) / "to-local"),
    }
    _table(spark, t["rw"], range(0, 10))
    t["rw_status"] = LifecycleTable.for_path(spark, t["rw"]).set_redirect(t["rw_dest"])
    _append(spark, t["rw"], 100)
    spark.sql(f"INSERT INTO delta.`{t['rw']}` VALUES (101)")

    _table(spark, t["back"], range(0, 3))
    back = LifecycleTable.for_path(spark, t["back"])
    back.set_redirect(t["back_dest"])
    _append(spark, t["back"], 30)
    spark.sql(f"DELETE FROM delta.`{t['back']}` WHERE id = 0")
    t["back_unset"] = back.unset_redirect()

    _table(spark, t["local"], range(0, 4))
    to_local = LifecycleTable.for_path(spark, t["local"])
    t["local_status"] = to_local.set_redirect(t["local_dest"])
    _append(spark, t["local"], 40)
    t["local_rows_redirected"] = ids(spark, t["local"])
    t["local_unset"] = to_local.unset_redirect()

    # Object keys that need encoding: a space in the table's path, and partition values
    # that Delta escapes in directory names and URL-encodes in the log.
    t["odd"] = f"{places['source']}/with space/odd"
    t["odd_dest"] = f"{places['destination']}/with space/odd"
    spark.sql(
        f"CREATE TABLE delta.`{t['odd']}` (id BIGINT, p STRING) USING delta PARTITIONED BY (p)"
    )
    spark.sql(f"INSERT INTO delta.`{t['odd']}` VALUES (1, 'a b/%'), (2, 'c=d'), (3, 'e:f')")
    odd = LifecycleTable.for_path(spark, t["odd"])
    odd.set_redirect(t["odd_dest"])
    spark.sql(f"INSERT INTO delta.`{t['odd']}` VALUES (4, 'a b/%')")
    t["odd_unset"] = odd.unset_redirect()

    # A catalog table on S3: reads and writes by name follow the redirect.
    spark.sql(f"CREATE TABLE named_events (id BIGINT) USING delta LOCATION '{places['source']}/named'")
    spark.sql("INSERT INTO named_events VALUES (1), (2)")
    t["named"] = f"{places['source']}/named"
    t["named_dest"] = f"{places['destination']}/named"
    spark.sql(f"ALTER TABLE named_events SET REDIRECT TO '{t['named_dest']}'").collect()
    spark.sql("INSERT INTO named_events VALUES (3)")
    t["named_rows"] = sorted(int(r[0]) for r in spark.sql("SELECT id FROM named_events").collect())
    t["named_status"] = LifecycleTable.for_name(spark, "named_events").redirect_status()
    return t


@pytest.fixture(scope="module")
def stock(tables: Dict[str, Any], object_store: ObjectStore) -> Dict[str, StockRead]:
    names = ("rw", "rw_dest", "back", "back_dest", "local", "local_dest", "odd", "odd_dest",
             "named_dest")
    spec: Dict[str, Tuple[str, Optional[int]]] = {n: (tables[n], None) for n in names}
    return stock_read_ids(spec, s3_stock_conf(object_store))


def test_set_redirect_between_buckets(spark: SparkSession, tables: Dict[str, Any]) -> None:
    status: RedirectStatus = tables["rw_status"]
    assert status.state == "READY" and status.mode == "READER WRITER"
    assert status.destination_location == tables["rw_dest"]
    assert status.files_copied > 0 and status.bytes_copied > 0
    expected = list(range(0, 10)) + [100, 101]
    assert ids(spark, tables["rw"]) == ids(spark, tables["rw_dest"]) == expected


def test_legacy_clients_on_a_redirect_between_buckets(
    tables: Dict[str, Any], object_store: ObjectStore, stock: Dict[str, StockRead]
) -> None:
    expected = list(range(0, 10)) + [100, 101]
    # The message names the table and, after "unsupported by Delta Lake", the feature.
    refused = stock["rw"]
    assert isinstance(refused, str) and "unsupported by" in refused and "s3a://" in refused
    assert "redirectReaderWriter" in refused.split("unsupported by")[1]
    with pytest.raises(Exception, match="redirectReaderWriter"):
        delta_rs_ids(object_store, tables["rw"])
    assert stock["rw_dest"] == expected
    assert delta_rs_ids(object_store, tables["rw_dest"]) == expected


def test_unset_redirect_between_buckets(
    spark: SparkSession, tables: Dict[str, Any], object_store: ObjectStore,
    stock: Dict[str, StockRead],
) -> None:
    status: RedirectStatus = tables["back_unset"]
    assert status.state == "NORMAL" and not status.redirected
    expected = [1, 2, 30]
    assert ids(spark, tables["back"]) == stock["back"] == expected
    assert delta_rs_ids(object_store, tables["back"]) == expected
    assert stock["back_dest"] == delta_rs_ids(object_store, tables["back_dest"]) == expected
    with pytest.raises(RedirectWriteRefusedError, match="read-only"), translate_errors():
        spark.sql(f"INSERT INTO delta.`{tables['back_dest']}` VALUES (5)").collect()


def test_redirect_from_a_bucket_to_local_disk_and_back(
    spark: SparkSession, tables: Dict[str, Any], object_store: ObjectStore,
    stock: Dict[str, StockRead],
) -> None:
    status: RedirectStatus = tables["local_status"]
    assert status.state == "READY"
    assert status.destination_location is not None
    assert status.destination_location.startswith("file:")
    assert status.destination_location.endswith(tables["local_dest"])
    expected = [0, 1, 2, 3, 40]
    assert tables["local_rows_redirected"] == expected
    assert tables["local_unset"].state == "NORMAL"
    assert ids(spark, tables["local"]) == stock["local"] == expected
    assert delta_rs_ids(object_store, tables["local"]) == expected
    assert stock["local_dest"] == expected
    assert delta_rs_ids(object_store, tables["local_dest"]) == expected


def test_a_bucket_outside_the_allowed_prefixes_is_refused(
    spark: SparkSession, places: Dict[str, str], object_store: ObjectStore
) -> None:
    uri = f"{places['source']}/refused"
    _table(spark, uri, range(0, 2))
    with pytest.raises(RedirectLocationNotAllowedError):
        LifecycleTable.for_path(spark, uri).set_redirect(f"{places['elsewhere']}/t")
    # A prefix matches whole path components: the source bucket's name with a suffix is
    # another bucket, and refused too.
    with pytest.raises(RedirectLocationNotAllowedError):
        LifecycleTable.for_path(spark, uri).set_redirect(f"{places['source']}x/t")
    assert object_store.list_prefix(f"{places['elsewhere']}/t") == []
    assert ids(spark, uri) == [0, 1]


def test_keys_that_need_encoding_survive_the_copy_and_back(
    spark: SparkSession, tables: Dict[str, Any], object_store: ObjectStore,
    stock: Dict[str, StockRead],
) -> None:
    assert tables["odd_unset"].state == "NORMAL"
    for name in ("odd", "odd_dest"):
        uri = tables[name]
        rows = spark.read.format("delta").load(uri).collect()
        assert sorted((int(r.id), r.p) for r in rows) == [
            (1, "a b/%"), (2, "c=d"), (3, "e:f"), (4, "a b/%")
        ], name
        assert stock[name] == [1, 2, 3, 4], name
        assert delta_rs_ids(object_store, uri) == [1, 2, 3, 4], name
    # The destination holds the same data objects as the source, under the same keys.
    source = [k for k in object_store.list_prefix(tables["odd"]) if not k.startswith("_delta_log")]
    destination = object_store.list_prefix(tables["odd_dest"])
    assert source and set(source) <= set(destination)


def test_a_catalog_table_on_s3_follows_its_redirect(
    tables: Dict[str, Any], object_store: ObjectStore, stock: Dict[str, StockRead]
) -> None:
    status: Optional[RedirectStatus] = tables["named_status"]
    assert status is not None and status.state == "READY"
    assert status.destination_location == tables["named_dest"]
    assert tables["named_rows"] == [1, 2, 3]
    assert stock["named_dest"] == delta_rs_ids(object_store, tables["named_dest"]) == [1, 2, 3]
