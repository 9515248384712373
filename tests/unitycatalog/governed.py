"""A governed Unity Catalog deployment for the tests: the catalog holds the only storage keys
and vends short-lived credentials per table and path, as its privileges allow.

Nothing is mocked:
- **MinIO** (tests/objectstore/server.py) with one bucket, ``gov``, and a MinIO user other than
  root whose policy allows that bucket only. Its keys, and a session MinIO's STS issued to it,
  go to the catalog server and nowhere else.
- **Unity Catalog OSS 0.6.0** (tests/unitycatalog/server.py) with ``server.authorization=enable``
  and, in ``etc/conf/server.properties``, the bucket's per-bucket settings (``s3.bucketPath.0``,
  ``s3.region.0``, ``s3.accessKey.0``, ``s3.secretKey.0``, ``s3.sessionToken.0``: with a session
  token the server vends those keys as they are) and the MinIO user's keys as its master
  credential (``aws.accessKey``, ``aws.secretKey``, ``aws.region``, ``aws.masterRoleArn``).
- **A token issuer** (token_issuer.py) that the server trusts (``server.allowed-issuers``,
  ``server.audiences``), and three principals: the administrator (the server's own service
  token), a SELECT-only **reader** and a MODIFY **writer**, each with a token of the server's.

Why the deployment needs more than the per-bucket keys, from UC 0.6.0's authorization rules
(``AuthorizeExpressions``, ``CatalogService``, ``TemporaryPathCredentialsService``):
- a catalog with a managed storage root on ``s3://`` can only be created over an external
  location that covers the root, by a principal with ``CREATE MANAGED STORAGE`` on it;
- the credentials to create an external table (``PATH_CREATE_TABLE``) go to the metastore's
  owner, or to a principal with ``CREATE EXTERNAL TABLE`` on an external location over the
  path; credentials for a path that is no table (``PATH_READ``/``PATH_READ_WRITE``, as a
  redirect's destination needs) to the owner or to ``READ FILES``/``WRITE FILES`` there;
- an external location needs a storage credential, and for a path under an external location
  the server vends with that credential, not with the per-bucket keys: it calls STS
  ``AssumeRole`` with its master credential and a session policy that allows the one table's or
  path's prefix (``AwsPolicyGenerator``: read-only actions for SELECT, read and write ones for
  MODIFY). MinIO's STS honours session policies. UC's STS client has no endpoint setting of
  its own (``AwsCredentialGenerator`` builds it with a region and keys only), and the AWS SDK it
  ships (sts 2.24.0, core 2.27.12) predates the SDK's ``AWS_ENDPOINT_URL_STS``; so the server
  runs with the AWS SDK bundle that hadoop-aws brings (2.29 or later) ahead of its classpath
  (:func:`aws_sdk_bundle`), and ``AWS_ENDPOINT_URL_STS`` points its STS client at MinIO.
So the tables live under two external locations, ``s3://gov/external`` (external tables and
redirect destinations) and ``s3://gov/managed`` (the catalog's managed storage), and every
credential a principal gets for them is a fresh MinIO STS session narrowed to one prefix. The
per-bucket keys serve what lies under no external location, which only the administrator can
ask for.

Spark sessions (:meth:`GovernedDeployment.spark_conf`) have MinIO's endpoint settings and no
storage keys at all (:data:`STORAGE_KEY_SETTINGS` are taken out), and the catalog through UC's
connector with the principal's token (``.auth.type=static``, ``.auth.token``).
"""

from __future__ import annotations

import logging
import os
import re
import secrets
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

import pytest
from pyspark.sql import SparkSession

from process_jvm import lifecycle_session
from delta_lifecycle import hadoop_aws_package
from objectstore.server import (
    ObjectStore,
    StoredObject,
    StsSession,
    build_mc,
    build_minio,
    start_object_store,
)
from unitycatalog.server import (
    UC_MAVEN_PACKAGES,
    UnityCatalogServer,
    UnityCatalogUnavailable,
    build,
    start_unity_catalog,
)
from unitycatalog.token_issuer import TokenIssuer, start_token_issuer

log = logging.getLogger("delta_lifecycle.unitycatalog")

BUCKET = "gov"
#: The Unity Catalog catalog, and the Spark catalog of the same name (UC's connector asks the
#: server for the catalog its Spark catalog is named after).
CATALOG = "gov"
SCHEMA = "s"
#: Where external tables and redirect destinations go, and the catalog's managed storage root.
EXTERNAL_ROOT = f"s3://{BUCKET}/external"
MANAGED_ROOT = f"s3://{BUCKET}/managed"
#: The MinIO user whose keys only the catalog server holds.
SERVER_USER = "unity-catalog"
READER = "reader@example.com"
WRITER = "writer@example.com"
#: MinIO ignores the role of AssumeRole; UC's storage credential and master role need one.
ROLE_ARN = "arn:aws:iam::000000000000:role/delta-lifecycle-storage"
MASTER_ROLE_ARN = "arn:aws:iam::000000000000:user/unity-catalog"

#: The S3A settings that carry keys: a governed session has none of them, so that every byte
#: it reads or writes goes through credentials the catalog vended.
STORAGE_KEY_SETTINGS = (
    "spark.hadoop.fs.s3a.access.key",
    "spark.hadoop.fs.s3a.secret.key",
    "spark.hadoop.fs.s3a.session.token",
    "spark.hadoop.fs.s3a.aws.credentials.provider",
)

#: What a reader and a writer are granted, by securable (privileges as UC's API spells them).
READER_GRANTS = {"catalog": ["USE CATALOG"], "schema": ["USE SCHEMA"], "table": ["SELECT"]}
WRITER_GRANTS = {
    "catalog": ["USE CATALOG"],
    "schema": ["USE SCHEMA", "CREATE TABLE"],
    "table": ["SELECT", "MODIFY"],
    "external_location": ["CREATE EXTERNAL TABLE", "READ FILES", "WRITE FILES"],
}


class GovernedDeploymentUnavailable(RuntimeError):
    """MinIO, mc or Unity Catalog cannot be built or started here; the message says which."""


@dataclass(frozen=True)
class Principal:
    """A user of the catalog and the access token the catalog issued to it."""

    email: str
    token: str


@dataclass
class GovernedDeployment:
    """MinIO, a Unity Catalog server with authorization on, the token issuer, the catalog
    ``gov`` with schema ``s`` and three principals."""

    store: ObjectStore
    server: UnityCatalogServer
    issuer: TokenIssuer
    #: The MinIO STS session in the server's ``s3.sessionToken.0`` (and keys).
    sts: StsSession
    admin: Principal
    reader: Principal
    writer: Principal
    #: How long each part took to start, in seconds, for the CI budget.
    timings: Dict[str, float]
    bucket: str = BUCKET
    catalog: str = CATALOG
    schema: str = SCHEMA

    def table(self, name: str) -> str:
        """``gov.s.<name>``"""
        return f"{self.catalog}.{self.schema}.{name}"

    def location(self, name: str) -> str:
        """``s3://gov/external/<name>``: under the external location the writer may create
        tables in and write to."""
        return f"{EXTERNAL_ROOT}/{name}"

    def s3_conf(self) -> Dict[str, str]:
        """MinIO's S3A settings (endpoint, region, path-style access, no TLS, few retries)
        without a key of any kind, and S3A as the file system of ``s3://`` too: Unity Catalog
        names S3 locations ``s3://``, which Hadoop maps to no file system by default (UC's
        connector maps it, in the storage properties of the tables it loads, to its
        credential-scoped wrapper of S3A)."""
        conf = {k: v for k, v in self.store.spark_conf().items() if k not in STORAGE_KEY_SETTINGS}
        conf["spark.hadoop.fs.s3.impl"] = "org.apache.hadoop.fs.s3a.S3AFileSystem"
        conf["spark.hadoop.fs.AbstractFileSystem.s3.impl"] = "org.apache.hadoop.fs.s3a.S3A"
        return conf

    def catalog_conf(self, principal: Principal) -> Dict[str, str]:
        """The catalog's settings for ``principal``: UC's connector, the server, its token."""
        return self.server.spark_conf(self.catalog, principal.token)

    def spark_conf(self, principal: Principal) -> Dict[str, str]:
        """A session's settings as ``principal``: :meth:`s3_conf` and :meth:`catalog_conf`.
        The session also needs :data:`PACKAGES`."""
        return {**self.s3_conf(), **self.catalog_conf(principal)}

    def stock_conf(self, principal: Principal) -> Dict[str, str]:
        """Settings for a stock delta-spark script (``stock_session.run_stock_script``) as
        ``principal``: UC's connector, hadoop-aws, no extension and no storage keys."""
        return {**self.spark_conf(principal), "spark.jars.packages": ",".join(packages())}

    def objects(self) -> Dict[str, StoredObject]:
        """Every object of the bucket by key, with size and ETag (listed as MinIO's root)."""
        return self.store.object_listing(self.bucket)

    def grant(self, securable_type: str, full_name: str, principal: Principal,
              privileges: Sequence[str]) -> None:
        self.server.grant(securable_type, full_name, principal.email, privileges)

    def grant_tables(self, *names: str) -> None:
        """Give the reader and the writer their table privileges on ``names`` (short names),
        once the tables exist: UC grants on a table only."""
        for name in names:
            self.grant("table", self.table(name), self.reader, READER_GRANTS["table"])
            self.grant("table", self.table(name), self.writer, WRITER_GRANTS["table"])

    def stop(self) -> None:
        for part in (self.server.stop, self.issuer.stop, self.store.stop):
            try:
                part()
            except Exception as e:  # the others still stop
                log.warning("stopping the governed deployment: %s", e)


def packages() -> Sequence[str]:
    """The packages a governed session needs: UC's client and Hadoop credential classes, and
    hadoop-aws of the Hadoop that pyspark bundles."""
    return (*UC_MAVEN_PACKAGES, hadoop_aws_package())


#: The first AWS SDK for Java 2 release known here to take a client's endpoint from
#: ``AWS_ENDPOINT_URL_<SERVICE>`` (2.27.12, which UC ships, does not; 2.29.52 does).
SDK_WITH_SERVICE_ENDPOINTS = (2, 29, 0)


def _sdk_bundles() -> List[Tuple[Tuple[int, ...], Path]]:
    """AWS SDK bundles (``software.amazon.awssdk:bundle``) of a version that takes service
    endpoints from the environment, in Spark's Ivy directories and coursier's cache."""
    home = Path.home()
    patterns = [(d, "software.amazon.awssdk_bundle-*.jar")
                for d in (home / ".ivy2.5.2" / "jars", home / ".ivy2" / "jars")]
    coursier = Path(os.environ.get("COURSIER_CACHE", home / ".cache" / "coursier" / "v1"))
    patterns.append((coursier / "https" / "repo1.maven.org" / "maven2" / "software" / "amazon"
                     / "awssdk" / "bundle", "*/bundle-*.jar"))
    found = []
    for directory, pattern in patterns:
        for jar in directory.glob(pattern):
            match = re.search(r"bundle-(\d+)\.(\d+)\.(\d+)\.jar$", jar.name)
            if match and tuple(map(int, match.groups())) >= SDK_WITH_SERVICE_ENDPOINTS:
                found.append((tuple(map(int, match.groups())), jar))
    return sorted(found)


def aws_sdk_bundle() -> Path:
    """The newest AWS SDK bundle found that takes ``AWS_ENDPOINT_URL_STS``; when there is none,
    Spark's own package resolution fetches hadoop-aws (which the governed sessions need anyway,
    and which brings the bundle) into its Ivy directory first. Raises
    GovernedDeploymentUnavailable when that fails."""
    found = _sdk_bundles()
    if not found:
        import pyspark

        submit = Path(pyspark.__file__).parent / "bin" / "spark-submit"
        with tempfile.TemporaryDirectory() as scratch:
            script = Path(scratch) / "resolve_only.py"
            script.write_text("")  # the packages are resolved before the script starts
            run = subprocess.run(
                [str(submit), "--master", "local[1]", "--packages", hadoop_aws_package(),
                 str(script)],
                capture_output=True, text=True, timeout=1800,
                env={**os.environ, "PYSPARK_PYTHON": sys.executable},
            )
        found = _sdk_bundles()
        if not found:
            raise GovernedDeploymentUnavailable(
                f"no AWS SDK bundle {'.'.join(map(str, SDK_WITH_SERVICE_ENDPOINTS))} or later "
                f"for the catalog server's STS client (resolving {hadoop_aws_package()}: "
                f"{run.stderr[-2000:]})")
    return found[-1][1]


def _server_properties(store: ObjectStore, sts: StsSession, issuer: TokenIssuer,
                       server_user_secret: str) -> Dict[str, str]:
    return {
        "server.authorization": "enable",
        "server.allowed-issuers": issuer.url,
        "server.audiences": issuer.audience,
        # Per-bucket keys: a session, which the server vends as it is.
        "s3.bucketPath.0": f"s3://{BUCKET}",
        "s3.region.0": store.region,
        "s3.accessKey.0": sts.access_key,
        "s3.secretKey.0": sts.secret_key,
        "s3.sessionToken.0": sts.session_token,
        # The master credential that assumes the storage credential's role for the paths under
        # an external location (MinIO's STS refuses a session as the caller: long-term keys).
        "aws.masterRoleArn": MASTER_ROLE_ARN,
        "aws.accessKey": SERVER_USER,
        "aws.secretKey": server_user_secret,
        "aws.region": store.region,
    }


def _set_up_catalog(server: UnityCatalogServer, reader: str, writer: str) -> None:
    """As the administrator: the storage credential, both external locations, the catalog
    over the managed one, the schema, the users and every grant but the tables'."""
    server.api("POST", "/credentials", {
        "name": "gov_storage", "purpose": "STORAGE", "aws_iam_role": {"role_arn": ROLE_ARN},
    })
    for name, url in (("gov_external", EXTERNAL_ROOT), ("gov_managed", MANAGED_ROOT)):
        server.api("POST", "/external-locations",
                   {"name": name, "url": url, "credential_name": "gov_storage"})
    server.create_catalog(CATALOG, MANAGED_ROOT)
    server.create_schema(CATALOG, SCHEMA)
    for email in (reader, writer):
        server.create_user(email)
    full_names = {"catalog": CATALOG, "schema": f"{CATALOG}.{SCHEMA}",
                  "external_location": "gov_external"}
    for email, grants in ((reader, READER_GRANTS), (writer, WRITER_GRANTS)):
        for securable, privileges in grants.items():
            if securable in full_names:
                server.grant(securable, full_names[securable], email, privileges)


def start_governed_deployment() -> GovernedDeployment:
    """Build what is missing and start everything; raises GovernedDeploymentUnavailable
    when MinIO, mc or Unity Catalog cannot be built."""
    timings: Dict[str, float] = {}
    started = time.monotonic()
    try:
        build_minio()
        build_mc()
    except Exception as e:
        raise GovernedDeploymentUnavailable(
            f"the governed deployment needs MinIO and mc (tests/objectstore/server.py): {e}"
        ) from e
    try:
        build()
    except UnityCatalogUnavailable as e:
        raise GovernedDeploymentUnavailable(str(e)) from e
    sdk = aws_sdk_bundle()
    timings["builds and the AWS SDK bundle (cached)"] = time.monotonic() - started

    mark = time.monotonic()
    store = start_object_store([BUCKET], prefer="minio")
    parts: Dict[str, Any] = {"store": store}
    try:
        if store.kind != "minio":
            raise GovernedDeploymentUnavailable(
                f"the governed deployment needs MinIO (users, STS); {store.kind} stood in")
        secret = secrets.token_hex(16)
        store.add_user(SERVER_USER, secret, [BUCKET])
        sts = store.assume_role(SERVER_USER, secret)
        timings["MinIO, its user and STS session"] = time.monotonic() - mark

        mark = time.monotonic()
        issuer = start_token_issuer()
        parts["issuer"] = issuer
        server = start_unity_catalog(
            _server_properties(store, sts, issuer, secret),
            # The AWS SDK's service-specific endpoint: the server's STS client calls MinIO.
            env={"AWS_ENDPOINT_URL_STS": store.endpoint},
            classpath_first=[sdk],
        )
        parts["server"] = server
        timings["Unity Catalog server"] = time.monotonic() - mark

        mark = time.monotonic()
        _set_up_catalog(server, READER, WRITER)
        assert server.token is not None
        reader = Principal(READER, server.exchange_token(issuer.id_token(READER)))
        writer = Principal(WRITER, server.exchange_token(issuer.id_token(WRITER)))
        timings["catalog, users, grants, tokens"] = time.monotonic() - mark
        return GovernedDeployment(store, server, issuer, sts, Principal("admin", server.token),
                                  reader, writer, timings)
    except BaseException:
        for name in ("server", "issuer", "store"):
            if name in parts:
                parts[name].stop()
        raise


@pytest.fixture(scope="module")
def governed() -> Iterator[GovernedDeployment]:
    """The module's governed deployment: one MinIO and one Unity Catalog server."""
    started = time.monotonic()
    try:
        deployment = start_governed_deployment()
    except GovernedDeploymentUnavailable as e:
        pytest.skip(str(e))
    deployment.timings["total"] = time.monotonic() - started
    log.warning("governed deployment started: %s", deployment.timings)
    try:
        yield deployment
    finally:
        deployment.stop()


#: The administrator's settings of the module's extension session: the catalog gives no
#: maintenance permission of its own (docs/settings.md), so the administrator permits it.
ADMINISTRATOR_CONF = {"spark.deltaLifecycle.catalogManaged.maintenance": "allow"}


@pytest.fixture(scope="module")
def governed_spark(
    tmp_path_factory: pytest.TempPathFactory, governed: GovernedDeployment
) -> Iterator[SparkSession]:
    """The module's session with this extension, as the writer; :func:`session_as` gives
    sessions of the same application as other principals."""
    yield from lifecycle_session(
        tmp_path_factory,
        start_conf={**governed.spark_conf(governed.writer), **ADMINISTRATOR_CONF},
        extra_packages=packages(),
    )


def session_as(spark: SparkSession, deployment: GovernedDeployment,
               principal: Principal) -> SparkSession:
    """A new session of ``spark``'s application whose catalog is reached with
    ``principal``'s token, as a shared server gives each user a session of their own."""
    session = spark.newSession()
    key = f"spark.sql.catalog.{deployment.catalog}.auth.token"
    session.conf.set(key, principal.token)
    return session


def storage_properties(spark: SparkSession, catalog: str, schema: str, name: str
                       ) -> Optional[Dict[str, str]]:
    """The storage properties of the table as the catalog loaded it in ``spark`` (where UC's
    connector puts the credentials it vended), or None when it has no catalog table."""
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    manager = spark._jsparkSession.sessionState().catalogManager()
    gateway = spark.sparkContext._gateway
    assert gateway is not None
    namespace = gateway.new_array(jvm.java.lang.String, 1)
    namespace[0] = schema
    identifier = jvm.org.apache.spark.sql.connector.catalog.Identifier.of(namespace, name)
    table = manager.catalog(catalog).loadTable(identifier)
    if not hasattr(table, "catalogTable") or table.catalogTable().isEmpty():
        return None
    properties = table.catalogTable().get().storage().properties()
    out: Dict[str, str] = {}
    iterator = properties.iterator()
    while iterator.hasNext():
        entry = iterator.next()
        out[str(entry._1())] = str(entry._2())
    return out
