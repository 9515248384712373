"""SET and UNSET REDIRECT between buckets of one MinIO server: server-side copies, their
fallback to streams, and the DRY RUN.

MinIO counts the requests it serves (``ObjectStore.request_counts``) and the bytes it sends
and receives, so the tests see from the server's side that a server-side copy sends one
CopyObject per file (UploadPartCopy requests for an object copied in parts) and moves no data
bytes through the client, and that a copy through streams sends none.

The module's application starts with per-bucket S3A settings (an administrator's, applied
when a bucket's file system is first created): one destination bucket is reached through
another endpoint spelling (``localhost`` against ``127.0.0.1``: another store, as far as a
client can tell), another carries a storage class a bare CopyObject would not apply, and a
third is reached with the credentials of a MinIO user who may use that bucket only.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any, Dict, Iterator

import pytest
from pyspark.sql import SparkSession

from delta_lifecycle import LifecycleTable, RedirectPlan, RedirectStatus
from objectstore.helpers import (
    FULL_OBJECTSTORE_SUITE,
    FULL_SUITE_ONLY,
    delta_rs_ids,
    ids,
    s3_stock_conf,
)
from stock_session import stock_read_ids
from objectstore.server import ObjectStore

if not FULL_OBJECTSTORE_SUITE:
    pytest.skip(FULL_SUITE_ONLY, allow_module_level=True)

PART_BYTES_KEY = "spark.deltaLifecycle.test.serverSideCopyPartBytes"
COPY_DELAY_KEY = "spark.deltaLifecycle.test.copyDelayMillis"
LIMITED_USER, LIMITED_SECRET = "limited-user", "limited-user-secret"
FILES = 6
ROWS_PER_FILE = 8000  # two 64-byte digests a row: about 1 MB a file, incompressible


@pytest.fixture(scope="module")
def minio(object_store: ObjectStore) -> ObjectStore:
    if object_store.kind != "minio":
        pytest.skip("request counts and users need MinIO; this run fell back to moto")
    return object_store


@pytest.fixture(scope="module")
def places(minio: ObjectStore, new_bucket: Any) -> Dict[str, str]:
    names = ("source", "destination", "other-endpoint", "storage-class", "limited")
    return {name: new_bucket(f"copy-{name}") for name in names}


@pytest.fixture(scope="module")
def start_conf(minio: ObjectStore, places: Dict[str, str]) -> Dict[str, str]:
    """Per-bucket S3A settings, and a MinIO user who may only use the ``limited`` bucket."""
    limited = places["limited"].removeprefix("s3a://")
    policy = {
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Action": ["s3:*"],
                       "Resource": [f"arn:aws:s3:::{limited}", f"arn:aws:s3:::{limited}/*"]}],
    }
    policy_file = minio.workdir / "limited-policy.json"
    policy_file.write_text(json.dumps(policy))
    minio.mc("admin", "user", "add", "local", LIMITED_USER, LIMITED_SECRET)
    minio.mc("admin", "policy", "create", "local", "limited-only", str(policy_file))
    minio.mc("admin", "policy", "attach", "local", "limited-only", "--user", LIMITED_USER)

    def bucket(key: str) -> str:
        return "spark.hadoop.fs.s3a.bucket." + places[key].removeprefix("s3a://") + "."

    return {
        bucket("other-endpoint") + "endpoint": minio.endpoint.replace("127.0.0.1", "localhost"),
        bucket("storage-class") + "create.storage.class": "standard",
        bucket("limited") + "access.key": LIMITED_USER,
        bucket("limited") + "secret.key": LIMITED_SECRET,
    }


def _table(spark: SparkSession, uri: str, files: int = FILES, rows: int = ROWS_PER_FILE,
           deletion_vectors: bool = False) -> None:
    spark.sql(f"CREATE TABLE delta.`{uri}` (id BIGINT, b BINARY) USING delta TBLPROPERTIES "
              f"('delta.enableDeletionVectors' = '{str(deletion_vectors).lower()}')")
    spark.sql(
        f"INSERT INTO delta.`{uri}` SELECT id, concat(unhex(sha2(string(id), 512)), "
        f"unhex(sha2(string(-id), 512))) FROM range(0, {files * rows}, 1, {files})"
    )


def _data_bytes(store: ObjectStore, uri: str) -> Dict[str, int]:
    """The table's data objects (not its log, not the pre-copy marker) by key."""
    fs = store.filesystem()
    from pyarrow import fs as pafs

    path = uri.removeprefix("s3a://")
    infos = fs.get_file_info(pafs.FileSelector(path, recursive=True, allow_not_found=True))
    return {i.path[len(path) + 1:]: i.size for i in infos
            if i.type == pafs.FileType.File and "_delta_log" not in i.path
            and not i.base_name.startswith("_")}


def _delta(before: Dict[str, int], after: Dict[str, int]) -> Dict[str, int]:
    return {k: after.get(k, 0) - before.get(k, 0) for k in set(before) | set(after)
            if after.get(k, 0) != before.get(k, 0)}


def _redirect(spark: SparkSession, store: ObjectStore, src: str, dest: str
              ) -> Dict[str, Any]:
    requests = store.request_counts()
    status = LifecycleTable.for_path(spark, src).set_redirect(dest)
    return {"status": status, "requests": _delta(requests, store.request_counts())}


@pytest.fixture(scope="module")
def server_side(spark: SparkSession, minio: ObjectStore, places: Dict[str, str]
                ) -> Dict[str, Any]:
    """A table with a deletion vector, redirected between buckets, then written through."""
    src, dest = f"{places['source']}/t", f"{places['destination']}/t"
    _table(spark, src, deletion_vectors=True)
    spark.sql(f"DELETE FROM delta.`{src}` WHERE id % 1000 = 7")
    expected = ids(spark, src)
    data = _data_bytes(minio, src)
    return {"src": src, "dest": dest, "expected": expected, "data": data,
            **_redirect(spark, minio, src, dest)}


def test_the_store_copies_every_file_itself(server_side: Dict[str, Any]) -> None:
    status: RedirectStatus = server_side["status"]
    assert status.state == "READY"
    assert status.copy_mode == "server-side" and status.copy_mode_reason is None
    assert status.bytes_through_executors == 0
    # One CopyObject per file copied, data and log alike; no data goes up or down.
    requests = server_side["requests"]
    assert requests.get("CopyObject") == status.files_copied, requests
    assert "CopyObjectPart" not in requests
    data_bytes = sum(server_side["data"].values())
    assert status.bytes_copied > data_bytes > FILES * 900_000
    assert requests.get("traffic_received_bytes", 0) < data_bytes / 10, requests
    assert requests.get("traffic_sent_bytes", 0) < data_bytes / 10, requests
    assert any("server-side" in s for s in status.steps), status.steps


def test_the_destination_is_the_table(
    spark: SparkSession, minio: ObjectStore, server_side: Dict[str, Any]
) -> None:
    dest = server_side["dest"]
    assert _data_bytes(minio, dest) == server_side["data"]
    assert ids(spark, dest) == server_side["expected"]
    # This deltalake release does not read deletion vectors: it reads the multipart copy below.
    assert stock_read_ids({"dest": (dest, None)}, s3_stock_conf(minio))["dest"] == \
        server_side["expected"]


def test_unset_copies_back_in_the_store(
    spark: SparkSession, minio: ObjectStore, server_side: Dict[str, Any]
) -> None:
    src = server_side["src"]
    spark.sql(f"INSERT INTO delta.`{src}` SELECT id, unhex('00') FROM range(100000, 100010, 1, 2)")
    table = LifecycleTable.for_path(spark, src)
    plan = table.unset_redirect(dry_run=True)
    assert (plan.copy_mode, plan.files_to_copy, plan.refusals) == ("server-side", 2, ())
    requests = minio.request_counts()
    status = table.unset_redirect()
    done = _delta(requests, minio.request_counts())
    assert status.state == "NORMAL" and status.files_copied == 2
    assert status.copy_mode == "server-side" and status.bytes_through_executors == 0
    assert done.get("CopyObject") == 2, done
    assert ids(spark, src) == sorted(server_side["expected"] + list(range(100000, 100010)))


def test_an_object_over_the_part_limit_is_copied_in_parts(
    spark: SparkSession, minio: ObjectStore, places: Dict[str, str], tmp_path: Path
) -> None:
    """UploadPartCopy, as for objects over 5 GB: the test lowers the limit to 5 MiB (S3's
    smallest part) and copies a file of about 12 MiB."""
    src, dest = f"{places['source']}/parts", f"{places['destination']}/parts"
    _table(spark, src, files=1, rows=96000)
    [size] = _data_bytes(minio, src).values()
    assert size > 10 << 20
    spark.conf.set(PART_BYTES_KEY, str(5 << 20))
    try:
        done = _redirect(spark, minio, src, dest)
    finally:
        spark.conf.unset(PART_BYTES_KEY)
    status = done["status"]
    assert status.copy_mode == "server-side" and status.bytes_through_executors == 0
    requests = done["requests"]
    assert requests.get("CopyObjectPart") == (size + (5 << 20) - 1) // (5 << 20), requests
    assert requests.get("CompleteMultipartUpload") == 1, requests
    assert _data_bytes(minio, dest) == _data_bytes(minio, src)
    assert delta_rs_ids(minio, dest) == list(range(96000))


def test_another_store_is_copied_through_streams(
    spark: SparkSession, minio: ObjectStore, places: Dict[str, str]
) -> None:
    src, dest = f"{places['source']}/elsewhere", f"{places['other-endpoint']}/elsewhere"
    _table(spark, src, files=2, rows=1000)
    done = _redirect(spark, minio, src, dest)
    status = done["status"]
    assert status.state == "READY" and status.copy_mode == "streams"
    assert status.copy_mode_reason is not None
    assert "different stores" in status.copy_mode_reason and "localhost" in status.copy_mode_reason
    assert status.bytes_through_executors == status.bytes_copied > 0
    # The bytes went up to the server (and down); CopyObject only renames the log files into
    # place (S3A's rename), as a copy through streams does for every log file.
    requests = done["requests"]
    assert requests["traffic_received_bytes"] > status.bytes_copied
    assert requests.get("CopyObject", 0) == status.files_copied - 2, requests
    assert ids(spark, dest) == list(range(2000))


def test_credentials_that_cannot_read_the_source_copy_through_streams(
    spark: SparkSession, minio: ObjectStore, places: Dict[str, str]
) -> None:
    """The limited bucket's S3A client (its own user) may not read the source bucket: the
    probe says so before anything is copied, and the executors copy with each side's client."""
    src, dest = f"{places['source']}/limited", f"{places['limited']}/limited"
    _table(spark, src, files=2, rows=1000)
    plan = LifecycleTable.for_path(spark, src).set_redirect(dest, dry_run=True)
    assert plan.copy_mode == "streams" and plan.copy_mode_reason is not None
    assert "cannot read" in plan.copy_mode_reason and "HTTP 403" in plan.copy_mode_reason
    done = _redirect(spark, minio, src, dest)
    assert done["status"].copy_mode == "streams"
    # The same reason, but for the request ids the store gives each answer.
    reason = done["status"].copy_mode_reason
    assert reason is not None and reason.split("Request ID")[0] == \
        plan.copy_mode_reason.split("Request ID")[0]
    assert done["requests"].get("CopyObject", 0) == done["status"].files_copied - 2
    assert ids(spark, dest) == list(range(2000))


def test_dry_run_writes_nothing_and_names_a_setting_the_copy_would_not_carry(
    spark: SparkSession, minio: ObjectStore, places: Dict[str, str]
) -> None:
    src = f"{places['source']}/dry"
    _table(spark, src, files=3, rows=1000)
    listing = {k: minio.list_prefix(places[k]) for k in places}
    requests = minio.request_counts()
    table = LifecycleTable.for_path(spark, src)
    plan = table.set_redirect(f"{places['destination']}/dry", dry_run=True)
    sql = spark.sql(f"ALTER TABLE delta.`{src}` SET REDIRECT TO "
                    f"'{places['destination']}/dry' DRY RUN").collect()[0]
    assert RedirectPlan.from_row(sql) == plan
    assert (plan.copy_mode, plan.copy_mode_reason, plan.refusals) == ("server-side", None, ())
    data = _data_bytes(minio, src)
    assert (plan.files_to_copy, plan.bytes_to_copy) == (3, sum(data.values()))
    assert plan.files_already_there == 0 and plan.tasks >= 1 and plan.log_files_to_copy >= 2

    classed = table.set_redirect(f"{places['storage-class']}/dry", dry_run=True)
    assert classed.copy_mode == "streams" and classed.copy_mode_reason is not None
    assert "fs.s3a.create.storage.class" in classed.copy_mode_reason

    # Neither location changed, and nothing was written anywhere.
    assert {k: minio.list_prefix(places[k]) for k in places} == listing
    writes = {"PutObject", "CopyObject", "DeleteObject", "DeleteMultipleObjects",
              "NewMultipartUpload", "PutObjectPart", "CopyObjectPart", "CompleteMultipartUpload"}
    assert not writes & set(_delta(requests, minio.request_counts()))


@pytest.fixture()
def slow_copies(spark: SparkSession) -> Iterator[None]:
    spark.conf.set(COPY_DELAY_KEY, "400")
    try:
        yield
    finally:
        spark.conf.unset(COPY_DELAY_KEY)


def test_a_dry_run_after_a_cut_short_copy_reports_the_objects_already_there(
    spark: SparkSession, minio: ObjectStore, places: Dict[str, str], slow_copies: None
) -> None:
    src, dest = f"{places['source']}/cut", f"{places['destination']}/cut"
    _table(spark, src, files=8, rows=500)
    table_id = spark.sql(f"DESCRIBE DETAIL delta.`{src}`").collect()[0]["id"]
    table = LifecycleTable.for_path(spark, src)
    outcome: Dict[str, Any] = {}

    def redirect() -> None:
        try:
            outcome["status"] = table.set_redirect(dest)
        except Exception as e:  # the cancelled statement's error is checked below
            outcome["error"] = e

    thread = threading.Thread(target=redirect)
    thread.start()
    deadline = time.monotonic() + 180
    while len(_data_bytes(minio, dest)) < 2:
        assert time.monotonic() < deadline and thread.is_alive(), outcome
        time.sleep(0.05)
    spark.sparkContext.cancelJobGroup(f"delta-lifecycle-copy-{table_id}")
    thread.join(180)
    assert "cancel" in str(outcome.get("error")).lower(), outcome
    spark.conf.unset(COPY_DELAY_KEY)

    there = _data_bytes(minio, dest)
    assert 2 <= len(there) < 8
    plan = table.set_redirect(dest, dry_run=True)
    assert plan.refusals == ()  # the destination holds this source's own pre-copy
    assert plan.copy_mode == "server-side"
    assert (plan.files_already_there, plan.bytes_already_there) == \
        (len(there), sum(there.values()))
    assert plan.files_to_copy == 8 - len(there)
    assert _data_bytes(minio, dest) == there

    status = table.set_redirect(dest)
    assert status.state == "READY" and status.copy_mode == "server-side"
    assert status.files_copied == plan.files_to_copy + plan.log_files_to_copy
    assert _data_bytes(minio, dest) == _data_bytes(minio, src)
    assert ids(spark, dest) == list(range(4000))
