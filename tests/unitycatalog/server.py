"""A real Unity Catalog OSS server for the tests and for trying things by hand.

No Unity Catalog server is published in a package registry, so this module builds one from
its source release once and caches it outside the repository, in
``${XDG_CACHE_HOME:-~/.cache}/delta-lifecycle/unitycatalog/<version>-spark<spark>-delta<delta>/``
(``DELTA_LIFECYCLE_UC_CACHE`` overrides the directory). The source archive is, first found
first taken:

1. ``DELTA_LIFECYCLE_UC_SOURCE``, a path to ``unitycatalog-<version>-src.tar.gz`` (or to the
   GitHub archive of tag ``v<version>``);
2. ``../shared/vendor/unitycatalog-<version>-src.tar.gz`` next to the checkout;
3. the release's source archive on GitHub, where the network allows.

The build (``build/sbt server/package spark/package`` against the primary line's Spark and
delta-spark, from ``versions.properties``) takes 3 to 8 minutes on 2 cores; every later start
takes 10 to 20 seconds. Where no source can be found, :class:`UnityCatalogUnavailable` says
how to provide one, and the tests skip with that reason.

A server runs on 127.0.0.1 with a fresh H2 database in a temporary work directory (it reads
``etc/conf/`` from its working directory), without authorization. Spark reaches it with UC's
connector (built here), ``io.unitycatalog:unitycatalog-client`` and ``-hadoop`` from Maven
Central, and ``spark.sql.catalog.<name>=io.unitycatalog.spark.UCSingleCatalog`` with ``.uri``
and ``.token``: :meth:`UnityCatalogServer.spark_conf`.

``start_unity_catalog(properties=...)`` starts one with settings of its own in
``etc/conf/server.properties`` instead, such as ``server.authorization=enable`` and the
per-bucket S3 keys (``s3.bucketPath.0``, ...): tests/unitycatalog/governed.py. With
authorization on, the server writes its administrator's token to ``etc/conf/token.txt`` at
start, which :attr:`UnityCatalogServer.token` then holds and every REST call here sends; other
principals are users the administrator creates (:meth:`UnityCatalogServer.create_user`), with
tokens of their own from a token exchange (:meth:`UnityCatalogServer.exchange_token`).

Usage::

    python tests/unitycatalog/server.py build             # build (if absent), print the jars
    python tests/unitycatalog/server.py start [--catalog lake]   # until Ctrl-C

This file imports nothing from the test suite, so it also runs as a plain script.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import logging
import os
import shutil
import signal
import socket
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence

log = logging.getLogger("delta_lifecycle.unitycatalog")

REPO_ROOT = Path(__file__).resolve().parents[2]

#: The Unity Catalog OSS release the project tests against.
UC_VERSION = "0.6.0"
#: Where GitHub serves the release's source (tried when no local archive is found).
UC_SOURCE_URL = f"https://github.com/unitycatalog/unitycatalog/archive/refs/tags/v{UC_VERSION}.tar.gz"
#: The connector's own dependencies that Maven Central serves (the connector itself is not).
UC_MAVEN_PACKAGES = (
    f"io.unitycatalog:unitycatalog-client:{UC_VERSION}",
    f"io.unitycatalog:unitycatalog-hadoop:{UC_VERSION}",
)
#: A cold build on 2 cores took 3 to 8 minutes; beyond this something is wrong.
BUILD_TIMEOUT_SECONDS = 40 * 60
STARTUP_TIMEOUT_SECONDS = 180.0
API = "/api/2.1/unity-catalog"
#: The control API: users (SCIM 2) and token exchange.
CONTROL_API = "/api/1.0/unity-control"
#: RFC 8693 token exchange, the only grant Unity Catalog's token endpoint takes.
TOKEN_EXCHANGE_GRANT = "urn:ietf:params:oauth:grant-type:token-exchange"
ACCESS_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:access_token"
ID_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:id_token"


class UnityCatalogUnavailable(RuntimeError):
    """No Unity Catalog server can be built here; the message says how to provide one."""


def _versions() -> Dict[str, str]:
    props: Dict[str, str] = {}
    for line in (REPO_ROOT / "versions.properties").read_text().splitlines():
        if "=" in line and not line.lstrip().startswith("#"):
            key, value = line.split("=", 1)
            props[key.strip()] = value.strip()
    return props


def _spark_and_delta() -> tuple[str, str]:
    props = _versions()
    return props["spark"], props["delta"]


def cache_dir() -> Path:
    """The directory holding the built server and connector of this version and line."""
    override = os.environ.get("DELTA_LIFECYCLE_UC_CACHE")
    if override:
        return Path(override)
    base = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    spark, delta = _spark_and_delta()
    return base / "delta-lifecycle" / "unitycatalog" / f"{UC_VERSION}-spark{spark}-delta{delta}"


def source_dir() -> Path:
    return cache_dir() / f"unitycatalog-{UC_VERSION}"


def _built_marker() -> Path:
    return cache_dir() / "built"


def _spark_line_and_scala() -> tuple[str, str]:
    props = _versions()
    spark = props["spark"]
    scala = props["scala"]
    return ".".join(spark.split(".")[:2]), ".".join(scala.split(".")[:2])


def connector_jar() -> Path:
    line, scala = _spark_line_and_scala()
    return (source_dir() / "connectors" / "spark" / "target" / f"scala-{scala}"
            / f"unitycatalog-spark_{line}_{scala}-{UC_VERSION}.jar")


def server_jar() -> Path:
    return source_dir() / "server" / "target" / f"unitycatalog-server-{UC_VERSION}.jar"


def is_built() -> bool:
    return _built_marker().is_file() and connector_jar().is_file() and server_jar().is_file()


def _local_archives() -> List[Path]:
    candidates = []
    explicit = os.environ.get("DELTA_LIFECYCLE_UC_SOURCE")
    if explicit:
        candidates.append(Path(explicit))
    candidates.append(REPO_ROOT.parent / "shared" / "vendor" / f"unitycatalog-{UC_VERSION}-src.tar.gz")
    return candidates


def how_to_provide() -> str:
    return (
        f"Unity Catalog OSS {UC_VERSION} is built from its source: put "
        f"unitycatalog-{UC_VERSION}-src.tar.gz in ../shared/vendor/ next to the checkout, or set "
        f"DELTA_LIFECYCLE_UC_SOURCE=<path to the archive of tag v{UC_VERSION}>, or allow "
        f"downloads from {UC_SOURCE_URL}"
    )


def _fetch_archive(into: Path) -> Path:
    for archive in _local_archives():
        if archive.is_file():
            return archive
    target = into / f"unitycatalog-{UC_VERSION}.tar.gz"
    try:
        with urllib.request.urlopen(UC_SOURCE_URL, timeout=60) as response, open(target, "wb") as out:
            shutil.copyfileobj(response, out)
    except (urllib.error.URLError, OSError) as e:
        raise UnityCatalogUnavailable(f"{how_to_provide()} (the download failed: {e})") from e
    return target


def _extract(archive: Path, into: Path) -> None:
    """Extract the archive so that its top folder is ``unitycatalog-<version>``, whatever the
    archive names it (GitHub's is ``unitycatalog-<version>`` too; a vendored one may differ)."""
    staging = into / "extracting"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    with tarfile.open(archive) as tar:
        tar.extractall(staging, filter="data")
    tops = [p for p in staging.iterdir() if p.is_dir()]
    if len(tops) != 1 or not (tops[0] / "build" / "sbt").is_file():
        raise UnityCatalogUnavailable(f"{archive} is not a Unity Catalog source archive")
    shutil.rmtree(source_dir(), ignore_errors=True)
    tops[0].rename(source_dir())
    shutil.rmtree(staging)


def build(timeout: Optional[float] = BUILD_TIMEOUT_SECONDS, niced: bool = False) -> Path:
    """Build the server and the Spark connector into the cache (once; concurrent callers wait
    for the first) and return the source directory. Raises UnityCatalogUnavailable when there
    is no source to build."""
    if is_built():
        return source_dir()
    cache = cache_dir()
    cache.mkdir(parents=True, exist_ok=True)
    with open(cache / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if is_built():
            return source_dir()
        _extract(_fetch_archive(cache), cache)
        spark, delta = _spark_and_delta()
        command = [
            "build/sbt", f"-DsparkVersion={spark}", f"-DdeltaVersion={delta}",
            "server/package", "spark/package",
        ]
        if niced:
            command = ["nice", "-n", "19", *command]
        log_file = cache / "build.log"
        log.warning("Building Unity Catalog %s (log: %s)", UC_VERSION, log_file)
        with open(log_file, "wb") as out:
            result = subprocess.run(command, cwd=source_dir(), stdout=out,
                                    stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    timeout=timeout)
        if result.returncode != 0 or not (connector_jar().is_file() and server_jar().is_file()):
            tail = log_file.read_text(errors="replace")[-3000:]
            raise RuntimeError(f"The Unity Catalog build failed ({result.returncode}):\n{tail}")
        _built_marker().write_text(f"{UC_VERSION}\n")
    return source_dir()


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class UnityCatalogError(RuntimeError):
    """The server answered a REST call with an error."""

    def __init__(self, status: int, body: str):
        super().__init__(f"HTTP {status}: {body}")
        self.status = status
        self.body = body


@dataclass
class UnityCatalogServer:
    """A running Unity Catalog server on 127.0.0.1 and how Spark reaches it."""

    uri: str
    process: "subprocess.Popen[bytes]"
    #: Holds the server's etc/ (configuration and H2 database) and log; deleted by stop().
    workdir: Path
    log_file: Path
    catalogs: List[str] = field(default_factory=list)
    #: With authorization on: the administrator's token, which every call here sends unless
    #: it names another. None without authorization.
    token: Optional[str] = None

    @property
    def authorization(self) -> bool:
        return self.token is not None

    def api(self, method: str, path: str, body: Optional[Dict[str, Any]] = None,
            token: Optional[str] = None) -> Any:
        """Call the REST API (``path`` after ``/api/2.1/unity-catalog``) as the administrator,
        or as the principal whose access ``token`` is given; the JSON answer."""
        data = json.dumps(body).encode() if body is not None else None
        return self._call(f"{API}{path}", method, data, "application/json", token)

    def control_api(self, method: str, path: str, body: Optional[Dict[str, Any]] = None,
                    token: Optional[str] = None) -> Any:
        """Call the control API (``path`` after ``/api/1.0/unity-control``), as :meth:`api`.
        Its SCIM endpoints take and give ``application/scim+json``."""
        data = json.dumps(body).encode() if body is not None else None
        content_type = "application/scim+json" if path.startswith("/scim2/") else "application/json"
        return self._call(f"{CONTROL_API}{path}", method, data, content_type, token)

    def _call(self, path: str, method: str, data: Optional[bytes], content_type: str,
              token: Optional[str], authorize: bool = True) -> Any:
        headers = {"Content-Type": content_type}
        bearer = token or self.token
        if bearer and authorize:
            headers["Authorization"] = f"Bearer {bearer}"
        request = urllib.request.Request(f"{self.uri}{path}", data=data, method=method,
                                         headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                text = response.read().decode()
        except urllib.error.HTTPError as e:
            raise UnityCatalogError(e.code, e.read().decode(errors="replace")) from e
        return json.loads(text) if text else None

    def create_user(self, email: str, name: Optional[str] = None) -> Dict[str, Any]:
        """Create the enabled user ``email`` (SCIM 2, as the administrator): the principal a
        token exchange for ``email`` then issues a token to, and grants name."""
        user: Dict[str, Any] = self.control_api("POST", "/scim2/Users", {
            "schemas": ["urn:ietf:params:scim:schemas:core:2.0:User"],
            "userName": email,
            "displayName": name or email.split("@", 1)[0],
            "emails": [{"value": email, "primary": True}],
            "active": True,
        })
        return user

    def grant(self, securable_type: str, full_name: str, principal: str,
              privileges: Sequence[str]) -> Dict[str, Any]:
        """Grant ``privileges`` (as the API spells them: ``"USE CATALOG"``, ``"SELECT"``,
        ``"CREATE TABLE"``, ...) on a securable (``catalog``, ``schema``, ``table``,
        ``external_location``, ``metastore``, ...) to the user ``principal`` (an email)."""
        answer: Dict[str, Any] = self.api(
            "PATCH", f"/permissions/{securable_type}/{full_name}",
            {"changes": [{"principal": principal, "add": list(privileges), "remove": []}]},
        )
        return answer

    def exchange_token(self, id_token: str) -> str:
        """Unity Catalog's access token for the principal of ``id_token``, an id token of an
        issuer the server's ``server.allowed-issuers`` lists (its token exchange; see
        tests/unitycatalog/token_issuer.py for what the server checks)."""
        form = urllib.parse.urlencode({
            "grant_type": TOKEN_EXCHANGE_GRANT,
            "requested_token_type": ACCESS_TOKEN_TYPE,
            "subject_token_type": ID_TOKEN_TYPE,
            "subject_token": id_token,
        }).encode()
        answer = self._call(f"{CONTROL_API}/auth/tokens", "POST", form,
                            "application/x-www-form-urlencoded", None, authorize=False)
        access_token: str = answer["access_token"]
        return access_token

    def create_catalog(self, name: str, storage_root: Optional[str] = None) -> Dict[str, Any]:
        """Create catalog ``name``, with managed storage under ``storage_root`` (a ``file:``
        or, with an external location over it, ``s3://`` URI) when given."""
        body: Dict[str, Any] = {"name": name}
        if storage_root:
            body["storage_root"] = storage_root
        catalog: Dict[str, Any] = self.api("POST", "/catalogs", body)
        self.catalogs.append(name)
        return catalog

    def create_schema(self, catalog: str, name: str) -> Dict[str, Any]:
        schema: Dict[str, Any] = self.api("POST", "/schemas", {"name": name, "catalog_name": catalog})
        return schema

    def get_table(self, full_name: str) -> Dict[str, Any]:
        table: Dict[str, Any] = self.api("GET", f"/tables/{full_name}")
        return table

    def spark_conf(self, catalog: str, token: Optional[str] = None) -> Dict[str, str]:
        """The settings that make ``catalog`` a Spark catalog served by this server through
        UC's connector, as the principal whose access ``token`` is given (the way UC's
        connector documents now: ``.auth.type=static`` and ``.auth.token``; it refuses a
        legacy ``.token`` beside them), else without a token. The session also needs
        :data:`UC_MAVEN_PACKAGES` in ``spark.jars.packages``
        (``configure_spark(builder, extra_packages=...)``)."""
        conf = {
            "spark.jars": str(connector_jar()),
            f"spark.sql.catalog.{catalog}": "io.unitycatalog.spark.UCSingleCatalog",
            f"spark.sql.catalog.{catalog}.uri": self.uri,
        }
        if token is None:
            conf[f"spark.sql.catalog.{catalog}.token"] = ""
        else:
            conf[f"spark.sql.catalog.{catalog}.auth.type"] = "static"
            conf[f"spark.sql.catalog.{catalog}.auth.token"] = token
        return conf

    def describe(self) -> str:
        lines = [
            f"Unity Catalog {UC_VERSION} server (pid {self.process.pid})",
            f"  uri         {self.uri}",
            f"  catalogs    {', '.join(self.catalogs) or '(none)'}",
            f"  work dir    {self.workdir}",
            f"  server log  {self.log_file}",
            "",
            "Spark settings for a catalog named lake:",
        ]
        lines += [f"  {k}={v}" for k, v in self.spark_conf("lake").items()]
        lines += [f"  spark.jars.packages += {','.join(UC_MAVEN_PACKAGES)}"]
        return "\n".join(lines)

    def stop(self) -> None:
        """Stop the server and delete its database and log."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=20)
        shutil.rmtree(self.workdir, ignore_errors=True)

    def log_tail(self) -> str:
        try:
            return self.log_file.read_text(errors="replace")[-3000:]
        except OSError:
            return "(no log)"


def _wait_until_serving(server: UnityCatalogServer, authorized: bool) -> None:
    deadline = time.monotonic() + STARTUP_TIMEOUT_SECONDS
    last_error = "no answer yet"
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            tail = server.log_tail()
            server.stop()
            raise RuntimeError(f"Unity Catalog exited with {server.process.returncode}:\n{tail}")
        try:
            if authorized and server.token is None:
                # Written at start, before the server serves; readable once it is whole.
                token_file = server.workdir / "etc" / "conf" / "token.txt"
                server.token = token_file.read_text().strip() or None
            server.api("GET", "/catalogs")
            return
        except (UnityCatalogError, urllib.error.URLError, OSError) as e:
            last_error = str(e)
        time.sleep(0.5)
    tail = server.log_tail()
    server.stop()
    raise RuntimeError(f"Unity Catalog did not start in {STARTUP_TIMEOUT_SECONDS:.0f} s: "
                       f"{last_error}\n{tail}")


def _write_properties(path: Path, settings: Mapping[str, str]) -> None:
    """Set ``settings`` in the properties file ``path``: a key's line is replaced where the
    file has one (the release's file lists every key, most of them empty), else appended.
    Backslashes are escaped, the one character of a value that Java's properties format reads
    as more than itself after the key."""
    lines, left = [], {k: v.replace("\\", "\\\\") for k, v in settings.items()}
    for line in path.read_text().splitlines():
        key = line.split("=", 1)[0].strip()
        if "=" in line and not line.lstrip().startswith("#") and key in left:
            line = f"{key}={left.pop(key)}"
        lines.append(line)
    lines += [f"{key}={value}" for key, value in left.items()]
    path.write_text("\n".join(lines) + "\n")


def start_unity_catalog(
    properties: Optional[Mapping[str, str]] = None,
    env: Optional[Mapping[str, str]] = None,
    classpath_first: Sequence[Path] = (),
) -> UnityCatalogServer:
    """Build (if needed) and start a server on a free 127.0.0.1 port with an empty database.

    ``properties`` are set in its ``etc/conf/server.properties`` (the release's file, where
    authorization is off and no storage has keys, is used as it is without them); ``env`` is
    added to the server's environment; ``classpath_first`` goes ahead of the server's own
    classpath. With ``server.authorization=enable`` the returned server's
    :attr:`UnityCatalogServer.token` is the administrator's."""
    source = build()
    workdir = Path(tempfile.mkdtemp(prefix="delta-lifecycle-uc-"))
    shutil.copytree(source / "etc" / "conf", workdir / "etc" / "conf")
    if properties:
        _write_properties(workdir / "etc" / "conf" / "server.properties", properties)
    authorized = (properties or {}).get("server.authorization", "disable") in ("enable", "true")
    (workdir / "etc" / "db").mkdir()
    port = _free_port()
    log_file = workdir / "server.log"
    classpath = ":".join([*(str(p) for p in classpath_first), str(server_jar()),
                          (source / "server" / "target" / "classpath").read_text().strip()])
    with open(log_file, "wb") as out:
        process = subprocess.Popen(
            ["java", "-Xmx512m", "-cp", classpath, "io.unitycatalog.server.UnityCatalogServer",
             "-p", str(port)],
            cwd=workdir, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            start_new_session=True, env={**os.environ, **(env or {})},
        )
    server = UnityCatalogServer(f"http://127.0.0.1:{port}", process, workdir, log_file)
    _wait_until_serving(server, authorized)
    log.warning("Unity Catalog at %s (work dir %s)", server.uri, workdir)
    return server


@contextlib.contextmanager
def running_unity_catalog() -> Iterator[UnityCatalogServer]:
    server = start_unity_catalog()
    try:
        yield server
    finally:
        server.stop()


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("build", help="build the server and connector (if absent), print them")
    start = commands.add_parser("start", help="start a server and print its settings")
    start.add_argument("--catalog", default="lake", help="catalog to create (default: lake)")
    start.add_argument("--storage-root", default=None,
                       help="the catalog's managed storage (default: a temporary folder)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    try:
        if args.command == "build":
            build()
            print(f"server:    {server_jar()}\nconnector: {connector_jar()}")
            return 0
        with running_unity_catalog() as server:
            root = args.storage_root or tempfile.mkdtemp(prefix="delta-lifecycle-uc-storage-")
            server.create_catalog(args.catalog, Path(root).resolve().as_uri())
            server.create_schema(args.catalog, "default")
            print(server.describe(), flush=True)
            stop_signals = {signal.SIGINT, signal.SIGTERM}
            signal.pthread_sigmask(signal.SIG_BLOCK, stop_signals)
            signal.sigwait(stop_signals)
        return 0
    except UnityCatalogUnavailable as e:
        print(e, file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
