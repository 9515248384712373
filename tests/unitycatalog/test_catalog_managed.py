"""Catalog-managed tables through a real Unity Catalog server: this project's statements read
what the catalog ratified and write through the catalog's commit path, as delta-spark does.

Every table here is created by name in the module's catalog with
``'delta.feature.catalogManaged' = 'supported'``: Unity Catalog makes it a managed table with
deletion vectors, row tracking, column mapping, in-commit timestamps and V2 checkpoints, and
every commit goes through the catalog (staged in ``_delta_log/_staged_commits/``, ratified by
the catalog, then copied to ``_delta_log/<v>.json`` by the writer).

The module's session is started by its administrator with
``spark.deltaLifecycle.catalogManaged.maintenance=allow``: Unity Catalog OSS 0.6.0 gives no
maintenance permission of its own (the default, refusing, is tested in
test_unity_catalog.py). One fixture runs every statement in the extension session, one stock
delta-spark subprocess then reads and writes every table through Unity Catalog, and the tests
judge what both saw.
"""

from __future__ import annotations

import json
import os
import textwrap
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional

import pytest
from pyspark.errors import AnalysisException
from pyspark.sql import SparkSession

from spark_errors import condition_of
from stock_session import run_stock_script
from delta_lifecycle.errors import AdministratorSettingError, translate_errors
from unitycatalog.conftest import UcCatalog, stock_uc_conf, uc_session
from unitycatalog.managed_tables import await_backfilled, table_path

MAINTENANCE = "spark.deltaLifecycle.catalogManaged.maintenance"
PAUSE_AT = "spark.deltaLifecycle.test.pauseAtStep"
PAUSE_DIR = "spark.deltaLifecycle.test.pauseDir"
#: Where a drop through the catalog has planned its commit and not yet made it.
BEFORE_CATALOG_COMMIT = "dropFeature.catalogCommit.beforeCommit"
CATALOG_MANAGED = "DELTA_LIFECYCLE_CATALOG_MANAGED_TABLE"


def log_files(path: Path) -> Dict[str, int]:
    """Every file under ``_delta_log`` (staged commits, sidecars too) with its size."""
    log = path / "_delta_log"
    return {str(Path(root, n).relative_to(log)): os.path.getsize(Path(root, n))
            for root, _, names in os.walk(log) for n in names}


def latest_backfilled(log: Path) -> int:
    return max(int(n[:20]) for n in os.listdir(log) if n.endswith(".json") and len(n) == 25
               and n[:20].isdigit())


def commit_actions(log: Path, version: int) -> List[Dict[str, Any]]:
    with open(log / f"{version:020d}.json", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def ratify_without_backfill(
    catalog: UcCatalog, name: str, actions: List[Dict[str, Any]], version: int
) -> Path:
    """Commit ``actions`` as ``version`` the way a writer does that stops after the catalog
    ratified its commit and before it copied it to ``_delta_log/<version>.json``: stage the
    file, then post it to Unity Catalog's commits API. Returns the staged file."""
    info = catalog.server.get_table(name)
    log = table_path(catalog, name) / "_delta_log"
    staged = log / "_staged_commits" / f"{version:020d}.{uuid.uuid4()}.json"
    staged.write_text("".join(json.dumps(a) + "\n" for a in actions), encoding="utf-8")
    timestamp = next(a["commitInfo"]["inCommitTimestamp"] for a in actions if "commitInfo" in a)
    try:
        catalog.server.api("POST", "/delta/preview/commits", {
            "table_id": info["table_id"],
            "table_uri": info["storage_location"],
            "commit_info": {
                "version": version,
                "timestamp": timestamp,
                "file_name": staged.name,
                "file_size": staged.stat().st_size,
                "file_modification_timestamp": int(staged.stat().st_mtime * 1000),
            },
            "latest_backfilled_version": version - 1,
        })
    except json.JSONDecodeError:
        pass  # the server answers a commit with a body that is not JSON; a refusal raises
    return staged


def refusal(spark: SparkSession, statement: str) -> AnalysisException:
    with pytest.raises(AnalysisException) as caught:
        spark.sql(statement).collect()
    return caught.value


def ids(spark: SparkSession, name: str) -> List[int]:
    return sorted(int(r[0]) for r in spark.table(name).select("id").collect())


@dataclass
class Scenario:
    """What the extension session did and saw, table by table."""

    catalog: UcCatalog
    names: Dict[str, str]
    rows: Dict[str, List[int]] = field(default_factory=dict)
    results: Dict[str, List[Dict[str, Any]]] = field(default_factory=dict)
    refusals: Dict[str, AnalysisException] = field(default_factory=dict)
    logs_before: Dict[str, Dict[str, int]] = field(default_factory=dict)
    logs_after: Dict[str, Dict[str, int]] = field(default_factory=dict)
    latest: Dict[str, int] = field(default_factory=dict)
    row_ids: Dict[str, Dict[int, int]] = field(default_factory=dict)
    staged: Optional[Path] = None
    ratified_version: int = -1
    writer_rows: List[int] = field(default_factory=list)
    paused: bool = False
    #: What a streaming read by name of the ``streamed`` table gave: its rows, or its error.
    streamed: Any = None


@pytest.fixture(scope="module")
def cm_spark(tmp_path_factory: pytest.TempPathFactory, uc_catalog: UcCatalog
             ) -> Iterator[SparkSession]:
    yield from uc_session(tmp_path_factory, uc_catalog, start_conf={MAINTENANCE: "allow"},
                          hive=False)


def create(spark: SparkSession, name: str, columns: str = "id BIGINT", props: str = "") -> None:
    spark.sql(f"CREATE TABLE {name} ({columns}) USING delta TBLPROPERTIES "
              f"('delta.feature.catalogManaged' = 'supported'{props})")


def widened_table(spark: SparkSession, name: str) -> None:
    """Files written with a SMALLINT column that is an INT now: dropping typeWidening must
    rewrite them, which delta-spark does with REORG (its OPTIMIZE)."""
    create(spark, name, "id BIGINT, v SMALLINT", ", 'delta.enableTypeWidening' = 'true'")
    spark.sql(f"INSERT INTO {name} VALUES (1, 1), (2, 2)")
    spark.sql(f"ALTER TABLE {name} ALTER COLUMN v TYPE INT")


def row_ids(spark: SparkSession, name: str) -> Dict[int, int]:
    rows = spark.sql(f"SELECT id, _metadata.row_id FROM {name}").collect()
    return {int(r[0]): int(r[1]) for r in rows}


#: ``stream_by_name(spark, name)``: a streaming read by name of the table ``name`` to the end of
#: what the catalog ratified, into a memory sink; its sorted ids, or its error's condition (or
#: class) and message. One source for both sessions: stock delta-spark's runs it in its script.
STREAM_BY_NAME = """
    import tempfile, uuid
    def stream_by_name(spark, name):
        sink = "streamed_" + uuid.uuid4().hex[:8]
        try:
            query = (spark.readStream.table(name).writeStream.format("memory").queryName(sink)
                     .option("checkpointLocation", tempfile.mkdtemp())
                     .trigger(availableNow=True).start())
            query.awaitTermination()
            return sorted(int(r[0]) for r in spark.table(sink).collect())
        except Exception as e:
            condition = getattr(e, "getCondition", lambda: None)()
            return f"{condition or type(e).__name__}: {str(e)[:300]}"
"""


def stream_by_name(spark: SparkSession, name: str) -> Any:
    namespace: Dict[str, Any] = {}
    exec(textwrap.dedent(STREAM_BY_NAME), namespace)
    return namespace["stream_by_name"](spark, name)


def plant_ratified_commit(scenario: Scenario, spark: SparkSession) -> None:
    """A commit the catalog ratified and no writer backfilled: a protocol change that makes
    typeWidening supported, as SET TBLPROPERTIES ('delta.feature.typeWidening' = 'supported')
    would."""
    name = scenario.names["ratified"]
    create(spark, name)
    spark.sql(f"INSERT INTO {name} VALUES (1), (2)")
    await_backfilled(scenario.catalog, name, spark)
    log = table_path(scenario.catalog, name) / "_delta_log"
    previous = latest_backfilled(log)
    commit_info = next(a["commitInfo"] for a in commit_actions(log, previous) if "commitInfo" in a)
    protocol = next(a["protocol"] for a in commit_actions(log, 0) if "protocol" in a)
    widened = {**protocol,
               "readerFeatures": sorted(protocol["readerFeatures"] + ["typeWidening"]),
               "writerFeatures": sorted(protocol["writerFeatures"] + ["typeWidening"])}
    now = int(time.time() * 1000)
    scenario.ratified_version = previous + 1
    scenario.staged = ratify_without_backfill(scenario.catalog, name, [
        {"commitInfo": {"inCommitTimestamp": max(now, commit_info["inCommitTimestamp"] + 1),
                        "timestamp": now, "operation": "SET TBLPROPERTIES",
                        "operationParameters": {}, "readVersion": previous,
                        "isolationLevel": "Serializable", "isBlindAppend": True,
                        "engineInfo": "a writer that stopped before backfill",
                        "txnId": str(uuid.uuid4())}},
        {"protocol": widened},
    ], scenario.ratified_version)
    scenario.results["ratified-history"] = [
        r.asDict() for r in spark.sql(f"DESCRIBE PROTOCOL HISTORY {name}").collect()]
    scenario.results["ratified-files"] = [
        r.asDict() for r in spark.sql(f"DESCRIBE LOG FILES {name}").collect()]
    scenario.results["ratified-compatibility"] = [r.asDict() for r in spark.sql(
        f"DESCRIBE COMPATIBILITY {name} FOR 'delta-spark-3.1'").collect()]
    scenario.results["ratified-clean"] = [r.asDict() for r in spark.sql(
        f"ALTER TABLE {name} CLEAN LOG RETAIN 0 HOURS").collect()]


def drop_with_a_writer_meanwhile(scenario: Scenario, spark: SparkSession, work: Path) -> None:
    """DROP FEATURE rowTracking waits after planning its commit through the catalog, a writer
    commits through the catalog meanwhile, then the drop goes on: its commit loses the race,
    is planned again on the writer's version and lands after it."""
    name = scenario.names["dv"]
    spark.conf.set(PAUSE_AT, BEFORE_CATALOG_COMMIT)
    spark.conf.set(PAUSE_DIR, str(work))
    outcome: Dict[str, Any] = {}

    def drop() -> None:
        try:
            outcome["rows"] = spark.sql(f"ALTER TABLE {name} DROP FEATURE rowTracking").collect()
        except Exception as error:  # judged by the test
            outcome["error"] = error

    dropping = threading.Thread(target=drop)
    dropping.start()
    try:
        paused = work / f"{BEFORE_CATALOG_COMMIT}.paused"
        while not paused.exists() and dropping.is_alive():
            time.sleep(0.2)
        scenario.paused = paused.exists()
        spark.conf.unset(PAUSE_AT)
        scenario.writer_rows = [500, 501]
        spark.sql(f"INSERT INTO {name} VALUES (500), (501)")
    finally:
        (work / f"{BEFORE_CATALOG_COMMIT}.resume").touch()
        dropping.join()
        spark.conf.unset(PAUSE_DIR)
    if "error" in outcome:
        raise outcome["error"]
    scenario.results["rowTracking"] = [r.asDict() for r in outcome["rows"]]


@pytest.fixture(scope="module")
def scenario(cm_spark: SparkSession, uc_catalog: UcCatalog,
             tmp_path_factory: pytest.TempPathFactory) -> Scenario:
    spark = cm_spark
    s = Scenario(uc_catalog, {t: uc_catalog.table(t) for t in
                              ("dv", "widened", "stock_widened", "ratified", "streamed")})
    dv = s.names["dv"]
    create(spark, dv)
    for i in range(3):
        spark.sql(f"INSERT INTO {dv} VALUES ({i}), ({i + 100})")
    spark.sql(f"DELETE FROM {dv} WHERE id = 101")
    await_backfilled(uc_catalog, dv, spark)
    s.logs_before["dv"] = log_files(table_path(uc_catalog, dv))
    elsewhere = tmp_path_factory.mktemp("elsewhere") / "moved"
    for statement in (f"ALTER TABLE {dv} DROP FEATURE deletionVectors DRY RUN",
                      f"ALTER TABLE {dv} DROP FEATURE deletionVectors",
                      f"ALTER TABLE {dv} DROP FEATURES FOR CLIENT 'delta-spark-3.3'",
                      f"ALTER TABLE {dv} SET REDIRECT TO '{elsewhere}'"):
        s.refusals[statement.split(f"{dv} ")[1].split(" TO ")[0]] = refusal(spark, statement)
    s.results["redirect-dry-run"] = [r.asDict(recursive=True) for r in spark.sql(
        f"ALTER TABLE {dv} SET REDIRECT TO '{elsewhere}' DRY RUN").collect()]
    s.logs_after["dv"] = log_files(table_path(uc_catalog, dv))
    drop_with_a_writer_meanwhile(s, spark, tmp_path_factory.mktemp("pause"))
    s.results["compact"] = [r.asDict() for r in spark.sql(f"ALTER TABLE {dv} COMPACT LOG")
                            .collect()]

    widened = s.names["widened"]
    widened_table(spark, widened)
    spark.sql(f"INSERT INTO {widened} VALUES (3, 100000)")
    s.row_ids["before"] = row_ids(spark, widened)
    s.results["typeWidening"] = [r.asDict() for r in spark.sql(
        f"ALTER TABLE {widened} DROP FEATURE typeWidening").collect()]
    s.row_ids["after"] = row_ids(spark, widened)
    s.results["clean"] = [r.asDict() for r in spark.sql(
        f"ALTER TABLE {widened} CLEAN LOG RETAIN 0 HOURS").collect()]
    widened_table(spark, s.names["stock_widened"])

    plant_ratified_commit(s, spark)
    streamed = s.names["streamed"]
    create(spark, streamed)
    spark.sql(f"INSERT INTO {streamed} VALUES (1), (2)")
    spark.sql(f"INSERT INTO {streamed} VALUES (3)")
    s.streamed = stream_by_name(spark, streamed)
    for key, name in s.names.items():
        s.rows[key] = ids(spark, name)
        s.latest[key] = spark.sql(f"DESCRIBE PROTOCOL HISTORY {name}").collect()[-1]["version"]
    return s


STOCK_CHECKS = STREAM_BY_NAME + """
    out = {}
    names = json.loads(sys.argv[1])
    for key, name in names.items():
        seen = {"history": spark.sql(f"DESCRIBE HISTORY {name}").collect()[0]["version"],
                "features": spark.sql(f"DESCRIBE DETAIL {name}").collect()[0]["tableFeatures"],
                "ids": sorted(int(r[0]) for r in spark.table(name).select("id").collect())}
        if key == "streamed":
            seen["stream"] = stream_by_name(spark, name)
        if key == "stock_widened":
            try:
                spark.sql(f"ALTER TABLE {name} DROP FEATURE typeWidening")
                seen["drop"] = "dropped"
            except Exception as e:
                seen["drop"] = getattr(e, "getCondition", lambda: None)() or str(e)[:300]
        values = "(900, 900)" if key.endswith("widened") else "(900)"
        spark.sql(f"INSERT INTO {name} VALUES {values}")
        seen["after_insert"] = sorted(int(r[0]) for r in spark.table(name).select("id").collect())
        seen["history_after_insert"] = [
            (r["version"], r["operation"]) for r in spark.sql(f"DESCRIBE HISTORY {name}").collect()]
        out[key] = seen
    emit(out)
"""


@pytest.fixture(scope="module")
def stock(scenario: Scenario, uc_catalog: UcCatalog) -> Dict[str, Dict[str, Any]]:
    """Stock delta-spark through Unity Catalog, after every statement of the scenario: what it
    reads of each table, then an INSERT of its own."""
    return run_stock_script(
        STOCK_CHECKS, [json.dumps(scenario.names)], conf=stock_uc_conf(uc_catalog)
    )


def test_reads_include_a_ratified_commit_not_yet_backfilled(scenario: Scenario) -> None:
    """A commit the catalog ratified and no writer backfilled is part of the table for
    delta-spark; DESCRIBE PROTOCOL HISTORY, DESCRIBE LOG FILES and DESCRIBE COMPATIBILITY
    include it, and CLEAN LOG leaves it alone."""
    version = scenario.ratified_version
    history = scenario.results["ratified-history"]
    assert history[-1]["version"] == version
    assert "typeWidening" in history[-1]["readerFeatures"]
    commits = {r["version"]: r["file"] for r in scenario.results["ratified-files"]
               if r["kind"] == "commit"}
    assert scenario.staged is not None
    assert commits[version] == f"_staged_commits/{scenario.staged.name}"
    assert "typeWidening" in scenario.results["ratified-compatibility"][0]["readBlockers"]
    assert scenario.staged.exists()
    assert all(r["version"] < version for r in scenario.results["ratified-clean"])


def test_deletion_vectors_stay_as_unity_catalog_requires(scenario: Scenario) -> None:
    """Unity Catalog requires deletionVectors (and catalogManaged, inCommitTimestamp,
    v2Checkpoint, vacuumProtocolCheck) of every managed table and refuses a commit without
    them: the drop says so before it writes anything, DRY RUN too, and so does DROP FEATURES
    FOR CLIENT for a client that would need catalogManaged gone."""
    for statement in ("DROP FEATURE deletionVectors DRY RUN", "DROP FEATURE deletionVectors"):
        error = scenario.refusals[statement]
        assert condition_of(error) == CATALOG_MANAGED, statement
        assert "(Unity Catalog) requires deletionVectors of every table it manages" in str(error)
    client = scenario.refusals["DROP FEATURES FOR CLIENT 'delta-spark-3.3'"]
    assert condition_of(client) == "DELTA_LIFECYCLE_CLIENT_NEEDS_UNDROPPABLE"
    assert "catalogManaged" in str(client)
    assert scenario.logs_after["dv"] == scenario.logs_before["dv"]


def test_a_redirect_keeps_its_refusal_and_dry_run_reports_it(scenario: Scenario) -> None:
    """Moving a catalog-managed table is its catalog's business: SET REDIRECT refuses before
    it writes anything, and its DRY RUN reports the same refusal."""
    error = scenario.refusals["SET REDIRECT"]
    assert condition_of(error) == "DELTA_LIFECYCLE_COORDINATED_TABLE"
    [plan] = scenario.results["redirect-dry-run"]
    assert [r["condition"] for r in plan["refusals"]] == ["DELTA_LIFECYCLE_COORDINATED_TABLE"]
    assert scenario.logs_after["dv"] == scenario.logs_before["dv"]


def test_a_drop_commits_through_the_catalog_while_another_writer_commits(
    scenario: Scenario, stock: Dict[str, Dict[str, Any]]
) -> None:
    """The drop planned its commit, a writer committed through the catalog, the drop's commit
    lost that race, was planned again on the writer's version and landed after it: both
    commits are in the table, which lost no row."""
    assert scenario.paused, "the drop never reached the step before its commit"
    [result] = scenario.results["rowTracking"]
    assert result["status"] == "dropped"
    assert set(scenario.writer_rows) <= set(scenario.rows["dv"])
    assert scenario.rows["dv"] == sorted([0, 1, 2, 100, 102] + scenario.writer_rows)
    seen = stock["dv"]
    assert "rowTracking" not in seen["features"]
    operations = dict(seen["history_after_insert"])
    downgrade = result["commitVersions"][-1]
    assert operations[downgrade] == "DROP FEATURE"
    assert operations[downgrade - 1] == "WRITE", "the writer's commit came first"


def test_compact_log_covers_backfilled_versions(scenario: Scenario) -> None:
    [outcome] = scenario.results["compact"]
    assert outcome["status"] == "written"
    assert outcome["endVersion"] <= scenario.latest["dv"]
    assert outcome["file"].endswith(".compacted.json")


def test_type_widening_drop_finishes_where_stock_refuses(
    scenario: Scenario, stock: Dict[str, Dict[str, Any]]
) -> None:
    """delta-spark's own drop of typeWidening rewrites with REORG, which it refuses on a
    catalog-managed table; this project rewrites the same files with delta-spark's OPTIMIZE
    machinery, committed through the catalog, row IDs kept."""
    [result] = scenario.results["typeWidening"]
    assert result["status"] == "dropped" and result["filesRewritten"] > 0
    assert result["protectedBefore"] is not None and len(result["checkpointVersions"]) == 4
    assert scenario.row_ids["after"] == scenario.row_ids["before"]
    assert "typeWidening" not in stock["widened"]["features"]
    assert stock["stock_widened"]["drop"] == "DELTA_UNSUPPORTED_CATALOG_MANAGED_TABLE_OPERATION"


def test_clean_log_keeps_what_protection_and_the_catalog_need(
    scenario: Scenario, stock: Dict[str, Dict[str, Any]]
) -> None:
    """After the typeWidening drop, a cleanup at its protected boundary removes the history
    before it in one pass (the Checkpoint Protection RFC), and what is left reads as before."""
    [result] = scenario.results["typeWidening"]
    deleted = [e for e in scenario.results["clean"] if e["action"] == "deleted"]
    assert deleted
    assert all(e["version"] < result["protectedBefore"] for e in scenario.results["clean"])
    assert stock["widened"]["ids"] == scenario.rows["widened"] == [1, 2, 3]


def test_stock_delta_spark_reads_and_writes_after_every_statement(
    scenario: Scenario, stock: Dict[str, Dict[str, Any]]
) -> None:
    """Stock delta-spark through Unity Catalog reads the rows the extension reads, its latest
    version is DESCRIBE PROTOCOL HISTORY's, and its INSERT commits the next version."""
    for key in scenario.names:
        seen = stock[key]
        assert seen["ids"] == scenario.rows[key], key
        assert seen["history"] == scenario.latest[key], key
        assert seen["after_insert"] == sorted(scenario.rows[key] + [900]), key
        # (stock's refused drop of typeWidening commits its first step before REORG refuses)
        newest = max(seen["history_after_insert"])
        assert newest[0] > scenario.latest[key] and newest[1] == "WRITE", key
    assert "typeWidening" in stock["ratified"]["features"]


def test_the_maintenance_setting_is_the_administrators(cm_spark: SparkSession) -> None:
    with pytest.raises(AdministratorSettingError) as caught:
        with translate_errors():
            cm_spark.sql(f"SET {MAINTENANCE}=refuse")
    assert MAINTENANCE in caught.value.message


def test_a_stream_reads_a_catalog_managed_table_by_name(
    scenario: Scenario, stock: Dict[str, Dict[str, Any]]
) -> None:
    """``spark.readStream.table`` of a catalog-managed table through the wrapped catalog reads
    every row the catalog ratified, as stock delta-spark's read through UC's connector does."""
    assert scenario.streamed == stock["streamed"]["stream"] == [1, 2, 3]
