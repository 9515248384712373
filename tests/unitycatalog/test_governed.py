"""This project's statements on tables that a governed Unity Catalog serves: the catalog holds
the only storage keys, and a session reads and writes only with what the catalog vends it, as
its principal's privileges allow (tests/unitycatalog/governed.py: MinIO, Unity Catalog OSS
0.6.0 with authorization on, a token issuer, a SELECT-only reader and a MODIFY writer).

One scenario per principal runs every statement once, in a fixture, and records what each
gave; the tests judge the records one statement at a time, so that a run says which statements
work and which do not:
- stock delta-spark through UC's connector, as the administrator, creates an external table
  (10 rows) and a catalog-managed one (20 rows) and reads them back;
- the reader, in a session with this extension: every reading statement and DRY RUN works,
  every writing one is refused with ``DELTA_LIFECYCLE_CATALOG_PERMISSION_DENIED`` naming the
  privilege it lacks, and no object of the bucket changes;
- the writer, in a session of the same application: every statement does what it does on a
  table whose keys the session holds (or refuses as the catalog-managed table requires);
- stock delta-spark then reads each table with the same rows.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

import boto3
import pytest
from botocore.exceptions import ClientError
from pyspark.sql import SparkSession

from environment import behind_switch
from spark_errors import condition_of
from stock_session import run_stock_script
from objectstore.server import StoredObject
from unitycatalog.governed import (  # noqa: F401  (governed, governed_spark: fixtures)
    STORAGE_KEY_SETTINGS,
    GovernedDeployment,
    governed,
    governed_spark,
    session_as,
    storage_properties,
)
from unitycatalog.server import UnityCatalogError

# It builds MinIO and mc besides Unity Catalog and takes minutes: CI leaves it to its target.
pytestmark = behind_switch("DELTA_LIFECYCLE_GOVERNANCE", "make governance-test")

PERMISSION_DENIED = "DELTA_LIFECYCLE_CATALOG_PERMISSION_DENIED"
COORDINATED_TABLE = "DELTA_LIFECYCLE_COORDINATED_TABLE"
CLIENT_NEEDS_UNDROPPABLE = "DELTA_LIFECYCLE_CLIENT_NEEDS_UNDROPPABLE"
EXT, MANAGED = "ext", "managed"
TABLES = (EXT, MANAGED)
ROWS = {EXT: list(range(10)), MANAGED: list(range(100, 120))}
#: A client that cannot read either table as created: on the external table DROP FEATURES FOR
#: CLIENT has work to do (deletionVectors, typeWidening); on the catalog-managed one it needs
#: features the catalog requires gone (catalogManaged, ...), which it refuses.
CLIENT = "deltalake-0.25"
#: Environment variables the AWS SDK's and S3A's default credential chains read keys from.
CREDENTIAL_VARIABLES = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SECRET_KEY",
                        "AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_WEB_IDENTITY_TOKEN_FILE",
                        "AWS_CONTAINER_CREDENTIALS_FULL_URI",
                        "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI")

STOCK_CREATE = """
    ext, managed, location = sys.argv[1:4]
    spark.sql(f"CREATE TABLE {ext} (id BIGINT) USING delta LOCATION '{location}' TBLPROPERTIES ("
              "'delta.enableDeletionVectors' = 'true', 'delta.enableTypeWidening' = 'true', "
              "'delta.checkpointInterval' = '3')")
    for i in range(5):
        spark.sql(f"INSERT INTO {ext} SELECT id FROM range({2 * i}, {2 * i + 2})")
    spark.sql(f"CREATE TABLE {managed} (id BIGINT) USING delta TBLPROPERTIES ("
              "'delta.feature.catalogManaged' = 'supported', 'delta.enableTypeWidening' = 'true', "
              "'delta.checkpointInterval' = '3')")
    # Five commits after the create: a checkpoint at version 3 and two commits after it, which
    # COMPACT LOG compacts.
    for i in range(5):
        spark.sql(f"INSERT INTO {managed} SELECT id FROM range({100 + 4 * i}, {104 + 4 * i})")
    out = {}
    for name in (ext, managed):
        detail = spark.sql(f"DESCRIBE DETAIL {name}").collect()[0]
        out[name] = {"ids": sorted(int(r[0]) for r in spark.table(name).select("id").collect()),
                     "location": detail["location"], "features": list(detail["tableFeatures"])}
    emit(out)
"""

STOCK_READ = """
    out = {}
    for name in json.loads(sys.argv[1]):
        try:
            detail = spark.sql(f"DESCRIBE DETAIL {name}").collect()[0]
            out[name] = {
                "ids": sorted(int(r[0]) for r in spark.table(name).select("id").collect()),
                "location": detail["location"], "features": list(detail["tableFeatures"])}
        except Exception as e:
            out[name] = {"refused": refusal(e, 1500)}
    emit(out)
"""


@dataclass(frozen=True)
class Outcome:
    """What one statement gave: its rows, or its error's condition and message; and the
    objects of the bucket that it added, removed or changed."""

    statement: str
    rows: Optional[List[Dict[str, Any]]] = None
    condition: Optional[str] = None
    error: Optional[str] = None
    changed: Tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return self.error is None

    def explain(self) -> str:
        return f"{self.statement}\n  -> {self.condition}: {self.error}"


def changed_objects(before: Dict[str, StoredObject], after: Dict[str, StoredObject]
                    ) -> Tuple[str, ...]:
    """Keys added, removed or rewritten (another size or ETag) between two listings."""
    return tuple(sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k)))


def run(spark: SparkSession, deployment: GovernedDeployment, statement: str) -> Outcome:
    before = deployment.objects()
    try:
        rows = [r.asDict(recursive=True) for r in spark.sql(statement).collect()]
        outcome = Outcome(statement, rows=rows)
    except Exception as error:  # recorded: the tests judge it
        java = getattr(error, "java_exception", None)
        message = str(java.toString()) if java is not None else str(error)
        try:
            condition = condition_of(error)
        except Exception:
            condition = None
        outcome = Outcome(statement, condition=condition or type(error).__name__,
                          error=message[:3000])
    changed = changed_objects(before, deployment.objects())
    return Outcome(outcome.statement, outcome.rows, outcome.condition, outcome.error, changed)


@dataclass
class Scenario:
    """A principal's outcomes, by table and statement key."""

    outcomes: Dict[str, Dict[str, Outcome]] = field(default_factory=dict)
    #: The rows of each table as this session read them at the end, or the read's error.
    rows: Dict[str, Any] = field(default_factory=dict)
    #: The reader's UNSET REDIRECT (and its DRY RUN) while the writer's redirect is READY.
    reader_while_redirected: Dict[str, Outcome] = field(default_factory=dict)

    def record(self, table: str, key: str, outcome: Outcome) -> Outcome:
        self.outcomes.setdefault(table, {})[key] = outcome
        return outcome


def statements(deployment: GovernedDeployment, table: str) -> Dict[str, str]:
    """Every statement of the scenarios on ``table``, by key. Redirect destinations are under
    the external location the writer may write to."""
    t = deployment.table(table)
    moved, copy = deployment.location(f"{table}_moved"), deployment.location(f"{table}_copy")
    return {
        "DESCRIBE PROTOCOL HISTORY": f"DESCRIBE PROTOCOL HISTORY {t}",
        "DESCRIBE LOG FILES": f"DESCRIBE LOG FILES {t}",
        "DESCRIBE COMPATIBILITY": f"DESCRIBE COMPATIBILITY {t}",
        "COMPACT LOG": f"ALTER TABLE {t} COMPACT LOG",
        "CLEAN LOG DRY RUN": f"ALTER TABLE {t} CLEAN LOG RETAIN 0 HOURS DRY RUN",
        "CLEAN LOG": f"ALTER TABLE {t} CLEAN LOG RETAIN 0 HOURS",
        "DROP FEATURE DRY RUN": f"ALTER TABLE {t} DROP FEATURE typeWidening DRY RUN",
        "DROP FEATURE": f"ALTER TABLE {t} DROP FEATURE typeWidening",
        "DROP FEATURES FOR CLIENT DRY RUN":
            f"ALTER TABLE {t} DROP FEATURES FOR CLIENT '{CLIENT}' DRY RUN",
        "DROP FEATURES FOR CLIENT": f"ALTER TABLE {t} DROP FEATURES FOR CLIENT '{CLIENT}'",
        "SET REDIRECT DRY RUN": f"ALTER TABLE {t} SET REDIRECT TO '{moved}' DRY RUN",
        "SET REDIRECT": f"ALTER TABLE {t} SET REDIRECT TO '{moved}'",
        "UNSET REDIRECT DRY RUN": f"ALTER TABLE {t} UNSET REDIRECT DRY RUN",
        "UNSET REDIRECT": f"ALTER TABLE {t} UNSET REDIRECT",
        "SET REDIRECT TO TABLE DRY RUN": (f"ALTER TABLE {t} SET REDIRECT TO TABLE "
                                          f"{deployment.table(table + '_copy')} "
                                          f"LOCATION '{copy}' DRY RUN"),
        "SET REDIRECT TO TABLE": (f"ALTER TABLE {t} SET REDIRECT TO TABLE "
                                  f"{deployment.table(table + '_copy')} LOCATION '{copy}'"),
    }


#: What the reader may run: reading statements and every DRY RUN.
READING = ("DESCRIBE PROTOCOL HISTORY", "DESCRIBE LOG FILES", "DESCRIBE COMPATIBILITY",
           "CLEAN LOG DRY RUN", "DROP FEATURE DRY RUN", "DROP FEATURES FOR CLIENT DRY RUN",
           "SET REDIRECT DRY RUN", "SET REDIRECT TO TABLE DRY RUN")
#: What the reader is refused, and the privilege the refusal names.
WRITING = {"COMPACT LOG": "MODIFY", "CLEAN LOG": "MODIFY", "DROP FEATURE": "MODIFY",
           "DROP FEATURES FOR CLIENT": "MODIFY", "SET REDIRECT": "MODIFY",
           "SET REDIRECT TO TABLE": "CREATE[ _]TABLE"}
#: The writer's statements in the order it runs them (the reader's UNSET REDIRECT runs while
#: the writer's redirect is READY: see writer_scenario).
WRITER_ORDER = ("DESCRIBE PROTOCOL HISTORY", "DESCRIBE LOG FILES", "DESCRIBE COMPATIBILITY",
                "COMPACT LOG", "CLEAN LOG DRY RUN", "CLEAN LOG", "DROP FEATURE DRY RUN",
                "DROP FEATURE", "DROP FEATURES FOR CLIENT DRY RUN", "DROP FEATURES FOR CLIENT",
                "SET REDIRECT DRY RUN", "SET REDIRECT", "UNSET REDIRECT DRY RUN",
                "UNSET REDIRECT", "SET REDIRECT TO TABLE DRY RUN", "SET REDIRECT TO TABLE",
                "UNSET REDIRECT AFTER TO TABLE")
#: Statements the catalog-managed table refuses whoever runs them, with the condition: its
#: catalog moves it, if anyone does, and it requires catalogManaged, which no drop removes
#: (docs/drop-feature.md, "Catalog-managed tables"; test_uc_routing.py,
#: test_catalog_managed.py).
TABLE_REFUSES = {
    (MANAGED, "SET REDIRECT"): COORDINATED_TABLE,
    (MANAGED, "SET REDIRECT TO TABLE"): COORDINATED_TABLE,
    (MANAGED, "DROP FEATURES FOR CLIENT DRY RUN"): CLIENT_NEEDS_UNDROPPABLE,
    (MANAGED, "DROP FEATURES FOR CLIENT"): CLIENT_NEEDS_UNDROPPABLE,
}
#: DRY RUNs that report the refusal of the statement they plan (their ``refusals`` column),
#: for the writer.
PLANNED_REFUSALS = {
    (EXT, "SET REDIRECT DRY RUN"): [],
    (EXT, "SET REDIRECT TO TABLE DRY RUN"): [],
    (MANAGED, "SET REDIRECT DRY RUN"): [COORDINATED_TABLE],
    (MANAGED, "SET REDIRECT TO TABLE DRY RUN"): [COORDINATED_TABLE],
}


def planned_refusals(outcome: Outcome) -> List[str]:
    assert outcome.rows, outcome.explain()
    return [r["condition"] for r in outcome.rows[0]["refusals"]]


def read_ids(spark: SparkSession, name: str) -> Any:
    try:
        return sorted(int(r[0]) for r in spark.table(name).select("id").collect())
    except Exception as error:
        return f"refused: {condition_of(error)}: {str(error)[:1500]}"


@pytest.fixture(scope="module")
def tables(governed: GovernedDeployment) -> Dict[str, Any]:
    """Stock delta-spark through UC's connector, as the administrator, creates both tables and
    reads them back; then the administrator grants the table privileges (UC grants on tables
    that exist). The writer does not own them: what it may do is what it was granted."""
    names = [governed.table(t) for t in TABLES]
    seen = run_stock_script(STOCK_CREATE, [*names, governed.location(EXT)],
                            conf=governed.stock_conf(governed.admin))
    governed.grant_tables(*TABLES)
    return {t: seen[governed.table(t)] for t in TABLES}


@pytest.fixture(scope="module")
def reader_scenario(governed: GovernedDeployment, governed_spark: SparkSession,
                    tables: Dict[str, Any]) -> Scenario:
    """The reader runs every statement but UNSET REDIRECT on both tables, in a session of its
    own (no table is redirected yet: its UNSET runs in writer_scenario, while one is)."""
    spark = session_as(governed_spark, governed, governed.reader)
    scenario = Scenario()
    for table in TABLES:
        text = statements(governed, table)
        for key in (*READING, *WRITING):
            scenario.record(table, key, run(spark, governed, text[key]))
        scenario.rows[table] = read_ids(spark, governed.table(table))
    return scenario


@pytest.fixture(scope="module")
def writer_scenario(governed: GovernedDeployment, governed_spark: SparkSession,
                    reader_scenario: Scenario) -> Scenario:
    """After the reader's scenario (which it takes for that), the writer runs every statement
    on both tables in the order of WRITER_ORDER; while its redirect of the external table is
    READY, the reader tries to UNSET it."""
    spark = session_as(governed_spark, governed, governed.writer)
    reader = session_as(governed_spark, governed, governed.reader)
    scenario = Scenario()
    for table in TABLES:
        text = statements(governed, table)
        text["UNSET REDIRECT AFTER TO TABLE"] = text["UNSET REDIRECT"]
        for key in WRITER_ORDER:
            if table == MANAGED and key.startswith("UNSET REDIRECT"):
                continue  # a catalog-managed table is never redirected
            scenario.record(table, key, run(spark, governed, text[key]))
            if key == "SET REDIRECT" and table == EXT:
                scenario.rows[f"{table} redirected"] = read_ids(spark, governed.table(table))
                for reader_key in ("UNSET REDIRECT DRY RUN", "UNSET REDIRECT"):
                    scenario.reader_while_redirected[reader_key] = run(
                        reader, governed, text[reader_key])
        scenario.rows[table] = read_ids(spark, governed.table(table))
    return scenario


@pytest.fixture(scope="module")
def stock_after(governed: GovernedDeployment, writer_scenario: Scenario) -> Dict[str, Any]:
    """Stock delta-spark through UC's connector, as the reader, after every statement."""
    names = [governed.table(t) for t in TABLES]
    seen = run_stock_script(STOCK_READ, [json.dumps(names)],
                            conf=governed.stock_conf(governed.reader))
    return {t: seen[governed.table(t)] for t in TABLES}


# ---- the deployment -------------------------------------------------------------------


def test_sessions_hold_no_storage_keys(
    governed: GovernedDeployment, governed_spark: SparkSession
) -> None:
    """Neither the session's settings (``spark.hadoop.*`` included) nor its Hadoop
    configuration nor the environment of the test process holds a storage key."""
    settings = dict(governed_spark.sparkContext.getConf().getAll())
    assert not [k for k in settings if k in STORAGE_KEY_SETTINGS or "access.key" in k
                or "secret.key" in k or "session.token" in k]
    hadoop = governed_spark.sparkContext._jsc.hadoopConfiguration()
    for key in ("fs.s3a.access.key", "fs.s3a.secret.key", "fs.s3a.session.token"):
        assert hadoop.get(key) is None, key
    assert not [k for k in CREDENTIAL_VARIABLES if k in os.environ]
    assert settings["spark.hadoop.fs.s3a.endpoint"] == governed.store.endpoint


def test_tokens_come_from_the_exchange_and_grants_decide(governed: GovernedDeployment) -> None:
    """Each principal's token is the server's own, from a token exchange of the issuer's id
    token; the server refuses an id token of a user it does not know, and of an issuer it does
    not list; and what a token may do is what the principal was granted."""
    server, issuer = governed.server, governed.issuer
    for principal in (governed.reader, governed.writer):
        catalogs = server.api("GET", "/catalogs", token=principal.token)["catalogs"]
        assert [c["name"] for c in catalogs] == [governed.catalog]
    with pytest.raises(UnityCatalogError) as unknown:
        server.exchange_token(issuer.id_token("stranger@example.com"))
    assert "User not allowed: stranger@example.com" in unknown.value.body
    with pytest.raises(UnityCatalogError) as foreign:
        server.exchange_token(issuer.id_token(governed.reader.email,
                                              issuer="http://127.0.0.1:9/elsewhere"))
    assert "Invalid issuer" in foreign.value.body
    with pytest.raises(UnityCatalogError) as denied:
        server.api("POST", "/catalogs", {"name": "not_yours"}, token=governed.writer.token)
    assert denied.value.status == 403


def test_stock_delta_spark_creates_and_reads_both_tables(
    governed: GovernedDeployment, tables: Dict[str, Any]
) -> None:
    assert {t: tables[t]["ids"] for t in TABLES} == ROWS
    assert tables[EXT]["location"].rstrip("/") == governed.location(EXT)
    assert "catalogManaged" in tables[MANAGED]["features"]
    info = governed.server.get_table(governed.table(MANAGED))
    assert info["table_type"] == "MANAGED"
    assert info["storage_location"].startswith(f"s3://{governed.bucket}/managed/")
    keys = governed.objects()
    assert any(k.startswith("external/ext/_delta_log/") for k in keys)
    assert any(k.startswith("managed/") and "/_delta_log/" in k for k in keys)


def s3_client(deployment: GovernedDeployment, vended: Dict[str, str]) -> Any:
    """A boto3 S3 client on MinIO with credentials the catalog vended."""
    return boto3.client("s3", endpoint_url=deployment.store.endpoint,
                        region_name=deployment.store.region,
                        aws_access_key_id=vended["access_key_id"],
                        aws_secret_access_key=vended["secret_access_key"],
                        aws_session_token=vended["session_token"])


def test_vended_credentials_are_scoped_to_the_table_and_privilege(
    governed: GovernedDeployment, tables: Dict[str, Any]
) -> None:
    """The catalog vends the reader a MinIO STS session for the external table that reads its
    prefix and nothing else, and refuses it read-write credentials."""
    server = governed.server
    table_id = server.get_table(governed.table(EXT))["table_id"]
    with pytest.raises(UnityCatalogError) as refused:
        server.api("POST", "/temporary-table-credentials",
                   {"table_id": table_id, "operation": "READ_WRITE"}, token=governed.reader.token)
    assert refused.value.status == 403
    vended = server.api("POST", "/temporary-table-credentials",
                        {"table_id": table_id, "operation": "READ"},
                        token=governed.reader.token)["aws_temp_credentials"]
    assert vended["access_key_id"] not in (governed.sts.access_key, governed.store.access_key)
    s3 = s3_client(governed, vended)
    log = s3.list_objects_v2(Bucket=governed.bucket, Prefix="external/ext/_delta_log/")
    first = log["Contents"][0]["Key"]
    assert s3.get_object(Bucket=governed.bucket, Key=first)["Body"].read()
    with pytest.raises(ClientError) as write:
        s3.put_object(Bucket=governed.bucket, Key="external/ext/x", Body=b"x")
    with pytest.raises(ClientError) as elsewhere:
        s3.list_objects_v2(Bucket=governed.bucket, Prefix="managed/")
    for caught in (write, elsewhere):
        assert caught.value.response["Error"]["Code"] == "AccessDenied"


def test_the_writers_credentials_write_the_table_and_nothing_else(
    governed: GovernedDeployment, tables: Dict[str, Any]
) -> None:
    """The writer's read-write credentials for the external table write under its prefix and
    nowhere else in the bucket."""
    table_id = governed.server.get_table(governed.table(EXT))["table_id"]
    vended = governed.server.api("POST", "/temporary-table-credentials",
                                 {"table_id": table_id, "operation": "READ_WRITE"},
                                 token=governed.writer.token)["aws_temp_credentials"]
    s3 = s3_client(governed, vended)
    probe = "external/ext/_governed_probe"
    s3.put_object(Bucket=governed.bucket, Key=probe, Body=b"x")
    s3.delete_object(Bucket=governed.bucket, Key=probe)
    with pytest.raises(ClientError) as elsewhere:
        s3.put_object(Bucket=governed.bucket, Key="external/elsewhere/x", Body=b"x")
    assert elsewhere.value.response["Error"]["Code"] == "AccessDenied"


def test_the_per_bucket_keys_serve_only_the_administrator(
    governed: GovernedDeployment,
) -> None:
    """Under no external location the server vends the per-bucket keys of its
    server.properties as they are (a session token makes them static), and only to the
    metastore's owner: the writer is refused path credentials there."""
    request = {"url": f"s3://{governed.bucket}/elsewhere/x", "operation": "PATH_READ_WRITE"}
    vended = governed.server.api("POST", "/temporary-path-credentials",
                                 request)["aws_temp_credentials"]
    assert (vended["access_key_id"], vended["session_token"]) == (
        governed.sts.access_key, governed.sts.session_token)
    with pytest.raises(UnityCatalogError) as refused:
        governed.server.api("POST", "/temporary-path-credentials", request,
                            token=governed.writer.token)
    assert refused.value.status == 403


def test_the_connector_hands_the_table_vended_credentials_only(
    governed: GovernedDeployment, governed_spark: SparkSession, tables: Dict[str, Any]
) -> None:
    """UC's connector puts the credentials it vended into the storage properties of the table
    it loads (a credential-scoped file system that renews them from the catalog), never the
    catalog's own keys."""
    spark = session_as(governed_spark, governed, governed.writer)
    properties = storage_properties(spark, governed.catalog, governed.schema, EXT)
    assert properties is not None
    print("storage properties of", governed.table(EXT), {
        k: (v if "key" not in k and "token" not in k else f"<{len(v)} characters>")
        for k, v in sorted(properties.items())})
    catalog_keys = {governed.sts.access_key, governed.sts.secret_key, governed.store.access_key,
                    governed.store.secret_key}
    assert not catalog_keys & set(properties.values())
    assert properties["fs.s3a.aws.credentials.provider"] == (
        "io.unitycatalog.hadoop.internal.auth.AwsVendedTokenProvider")
    assert properties["fs.unitycatalog.uri"] == governed.server.uri
    assert "fs.s3a.init.access.key" in properties
    assert "fs.s3a.access.key" not in properties


# ---- the reader ----------------------------------------------------------------------


@pytest.mark.parametrize("table", TABLES)
@pytest.mark.parametrize("key", READING)
def test_the_reader_runs_every_reading_statement(
    reader_scenario: Scenario, table: str, key: str
) -> None:
    """Reading statements and DRY RUNs work with SELECT alone, and change nothing; a DRY RUN
    of a redirect reports the permission its statement would lack among its refusals."""
    outcome = reader_scenario.outcomes[table][key]
    assert outcome.changed == (), outcome.explain()
    refused_anyway = TABLE_REFUSES.get((table, key))
    if refused_anyway and outcome.condition == refused_anyway:
        return
    assert outcome.ok, outcome.explain()
    if (table, key) in PLANNED_REFUSALS:
        refusals = set(planned_refusals(outcome))
        acceptable = {PERMISSION_DENIED, *PLANNED_REFUSALS[(table, key)]}
        assert refusals and refusals <= acceptable, outcome.rows


def assert_refused_for_lack_of(outcome: Outcome, privilege: str,
                               or_else: Optional[str] = None) -> None:
    """Refused with the project's condition and a message that names ``privilege`` (a
    pattern), before any object changed; or with ``or_else``, the refusal the statement meets
    whoever runs it."""
    assert outcome.changed == (), outcome.explain()
    assert not outcome.ok, f"{outcome.statement} was not refused: {outcome.rows}"
    if or_else is not None and outcome.condition == or_else:
        return
    assert outcome.condition == PERMISSION_DENIED, outcome.explain()
    assert re.search(privilege, outcome.error or ""), outcome.explain()


@pytest.mark.parametrize("table", TABLES)
@pytest.mark.parametrize("key", WRITING)
def test_the_reader_is_refused_every_writing_statement_and_nothing_changes(
    reader_scenario: Scenario, table: str, key: str
) -> None:
    """Refused naming the privilege the reader lacks (MODIFY on the table; for a new table,
    CREATE TABLE on its schema) before any object changed. Where the statement is refused
    whoever runs it (the catalog-managed table's), that refusal is right too."""
    assert_refused_for_lack_of(reader_scenario.outcomes[table][key], WRITING[key],
                               TABLE_REFUSES.get((table, key)))


def test_the_reader_cannot_unset_the_writers_redirect(writer_scenario: Scenario) -> None:
    """While the writer's redirect of the external table is READY, the reader's UNSET
    REDIRECT DRY RUN works and reports the missing permission; its UNSET is refused."""
    dry_run = writer_scenario.reader_while_redirected["UNSET REDIRECT DRY RUN"]
    assert dry_run.ok and dry_run.changed == (), dry_run.explain()
    assert PERMISSION_DENIED in planned_refusals(dry_run)
    assert_refused_for_lack_of(writer_scenario.reader_while_redirected["UNSET REDIRECT"],
                               "MODIFY")


@pytest.mark.parametrize("table", TABLES)
def test_the_reader_reads_every_row(reader_scenario: Scenario, table: str) -> None:
    assert reader_scenario.rows[table] == ROWS[table]


# ---- the writer ----------------------------------------------------------------------


@pytest.mark.parametrize("table", TABLES)
@pytest.mark.parametrize("key", WRITER_ORDER)
def test_the_writer_runs_every_statement(
    writer_scenario: Scenario, table: str, key: str
) -> None:
    """Every statement does what it does where the session holds keys, with the credentials
    the catalog vends the writer; the catalog-managed table refuses what it refuses anyone."""
    if key not in writer_scenario.outcomes[table]:
        pytest.skip("a catalog-managed table is never redirected")
    outcome = writer_scenario.outcomes[table][key]
    if (table, key) in TABLE_REFUSES:
        assert outcome.condition == TABLE_REFUSES[(table, key)], outcome.explain()
        assert outcome.changed == ()
        return
    assert outcome.ok, outcome.explain()
    rows = outcome.rows or []
    if key.endswith("DRY RUN") or key.startswith("DESCRIBE"):
        assert outcome.changed == (), outcome.explain()
    if (table, key) in PLANNED_REFUSALS:
        assert planned_refusals(outcome) == PLANNED_REFUSALS[(table, key)], rows
    elif key.startswith("DESCRIBE"):
        assert rows, outcome.statement
    elif key == "COMPACT LOG":
        assert [r["status"] for r in rows] == ["written"], rows
    elif key == "DROP FEATURE":
        assert [(r["feature"], r["status"]) for r in rows] == [("typeWidening", "dropped")]
    elif key == "DROP FEATURES FOR CLIENT":
        assert [(r["feature"], r["status"]) for r in rows] == [("deletionVectors", "dropped")]
    elif key in ("SET REDIRECT", "SET REDIRECT TO TABLE"):
        assert [r["state"] for r in rows] == ["READY"], rows
    elif key in ("UNSET REDIRECT", "UNSET REDIRECT AFTER TO TABLE"):
        assert [r["state"] for r in rows] == ["NORMAL"], rows


def test_the_writers_redirect_lands_in_the_bucket_and_registers_the_new_table(
    governed: GovernedDeployment, writer_scenario: Scenario
) -> None:
    outcomes = writer_scenario.outcomes[EXT]
    assert outcomes["SET REDIRECT"].ok, outcomes["SET REDIRECT"].explain()
    assert any(k.startswith("external/ext_moved/_delta_log/")
               for k in outcomes["SET REDIRECT"].changed)
    assert writer_scenario.rows["ext redirected"] == ROWS[EXT]
    assert outcomes["SET REDIRECT TO TABLE"].ok, outcomes["SET REDIRECT TO TABLE"].explain()
    registered = governed.server.get_table(governed.table("ext_copy"))
    assert registered["table_type"] == "EXTERNAL"
    assert registered["storage_location"].rstrip("/") == governed.location("ext_copy")


@pytest.mark.parametrize("table", TABLES)
def test_the_writer_reads_every_row_afterwards(writer_scenario: Scenario, table: str) -> None:
    assert writer_scenario.rows[table] == ROWS[table]


# ---- after both ----------------------------------------------------------------------


@pytest.mark.parametrize("table", TABLES)
def test_stock_delta_spark_reads_the_same_rows_afterwards(
    stock_after: Dict[str, Any], table: str
) -> None:
    assert stock_after[table].get("ids") == ROWS[table], stock_after[table]


# ---- streams -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def streamed(governed: GovernedDeployment, governed_spark: SparkSession,
             stock_after: Dict[str, Any], tmp_path_factory: pytest.TempPathFactory
             ) -> Dict[str, Any]:
    """After every statement and stock delta-spark's read, the writer streams each table by name to the end (AvailableNow),
    and appends three rows to the external table with a stream by name; then reads it again."""
    spark = session_as(governed_spark, governed, governed.writer)
    work = tmp_path_factory.mktemp("streams")
    seen: Dict[str, Any] = {}
    for table in TABLES:
        name = governed.table(table)
        try:
            query = (spark.readStream.table(name).writeStream.format("memory")
                     .queryName(f"governed_{table}").trigger(availableNow=True)
                     .option("checkpointLocation", str(work / f"read-{table}")).start())
            query.awaitTermination(300)
            seen[table] = sorted(int(r[0]) for r in spark.table(f"governed_{table}").collect())
        except Exception as error:
            seen[table] = f"refused: {condition_of(error)}: {str(error)[:1500]}"
    try:
        source = spark.createDataFrame([(i,) for i in range(1000, 1003)], "id BIGINT")
        source.write.format("parquet").save(str(work / "more"))
        query = (spark.readStream.schema("id BIGINT").parquet(str(work / "more")).writeStream
                 .format("delta").trigger(availableNow=True)
                 .option("checkpointLocation", str(work / "append")).toTable(governed.table(EXT)))
        query.awaitTermination(300)
        seen["appended"] = read_ids(spark, governed.table(EXT))
    except Exception as error:
        seen["appended"] = f"refused: {condition_of(error)}: {str(error)[:1500]}"
    return seen


@pytest.mark.parametrize("table", TABLES)
def test_a_stream_by_name_reads_every_row_with_vended_credentials(
    streamed: Dict[str, Any], table: str
) -> None:
    assert streamed[table] == ROWS[table]


def test_a_stream_by_name_writes_with_vended_credentials(streamed: Dict[str, Any]) -> None:
    assert streamed["appended"] == ROWS[EXT] + [1000, 1001, 1002]
