"""A local S3-compatible server for the object-store tests and for trying things by hand.

MinIO is the server: it is built from its Go module with ``go install`` on first use and
the binary is cached outside the repository, in
``${XDG_CACHE_HOME:-~/.cache}/delta-lifecycle/minio/<version>/minio``
(``DELTA_LIFECYCLE_MINIO_CACHE`` overrides the directory). The first build takes 4 to 10
minutes on a 2-core machine; every later start takes a second or two. If Go is missing or
the build fails, moto's server mode (``moto[server]``, a test dependency) stands in, and
both the log and :attr:`ObjectStore.kind` say so: moto is an emulator, MinIO is a real
S3 implementation, so a pass on moto is weaker evidence.

MinIO's client ``mc`` (the reference copy of the redirect benchmark, ``mc cp --recursive``,
and the tests' way to add users) is built and cached the same way, from its own Go module, into
``.../delta-lifecycle/mc/<version>/mc``.

A MinIO user other than root (:meth:`ObjectStore.add_user`, with ``mc admin``) can take
temporary sessions from MinIO's STS (:meth:`ObjectStore.assume_role`): the governed Unity
Catalog deployment (``tests/unitycatalog/governed.py``) gives its catalog server only such keys,
and its Spark sessions none.

The server serves its Prometheus metrics without authentication (it listens on 127.0.0.1 only),
so :meth:`ObjectStore.request_counts` can count the S3 requests it served, by API.

Usage::

    python tests/objectstore/server.py start [--bucket NAME ...]   # until Ctrl-C
    python tests/objectstore/server.py build                       # build MinIO only
    python tests/objectstore/server.py build-mc                    # build mc only

``start`` prints the endpoint, the credentials, the Spark settings for S3A and the
delta-rs ``storage_options``. The tests use :func:`start_object_store`.

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
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Dict, Iterator, List, Optional, Sequence

if TYPE_CHECKING:
    from pyarrow.fs import S3FileSystem

log = logging.getLogger("delta_lifecycle.objectstore")

@dataclass(frozen=True)
class GoTool:
    """A binary built with ``go install <module>@<version>`` and cached per version."""

    name: str
    module: str
    version: str


#: The MinIO release the project tests against, as a Go module version.
MINIO = GoTool("minio", "github.com/minio/minio", "v0.0.0-20260212201848-7aac2a2c5b7c")
#: MinIO's client; the Go proxy's newest version of its module.
MC = GoTool("mc", "github.com/minio/mc", "v0.0.0-20250313080218-cf909e1063a9")
MINIO_MODULE = MINIO.module
MINIO_VERSION = MINIO.version
#: ``go install`` on 2 cores at normal priority: 4 to 10 minutes seen; beyond this
#: something is wrong.
MINIO_BUILD_TIMEOUT_SECONDS = 30 * 60

#: Credentials of the local server only; MinIO wants a secret of 8 characters or more.
ACCESS_KEY = "deltalifecycle"
SECRET_KEY = "deltalifecycle-secret"
REGION = "us-east-1"

#: S3A's credentials provider for a fixed access key and secret.
SIMPLE_CREDENTIALS_PROVIDER = "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider"

STARTUP_TIMEOUT_SECONDS = 60.0


def tool_cache_dir(tool: GoTool = MINIO) -> Path:
    """Where the binary of ``tool`` (MinIO by default) is kept between runs."""
    override = os.environ.get("DELTA_LIFECYCLE_MINIO_CACHE")
    if override:
        base = Path(override) if tool == MINIO else Path(override) / tool.name
        return base / tool.version
    cache_home = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache_home) / "delta-lifecycle" / tool.name / tool.version


def minio_cache_dir() -> Path:
    """Where the MinIO binary of :data:`MINIO_VERSION` is kept between runs."""
    return tool_cache_dir(MINIO)


def minio_binary() -> Path:
    return minio_cache_dir() / "minio"


def mc_binary() -> Path:
    return tool_cache_dir(MC) / "mc"


#: The running ``go install``, if any, so that a niced build can be hurried or stopped.
_build_process: Optional["subprocess.Popen[str]"] = None
#: Set by :func:`hurry_build`: a build that has not started yet is not niced either.
_hurry_requested = False


def build_minio(niced: bool = False, timeout: Optional[float] = MINIO_BUILD_TIMEOUT_SECONDS) -> Path:
    """Return the cached MinIO binary, building it with ``go install`` if it is absent
    (at the lowest CPU priority if ``niced``, to build beside other work; see
    :func:`hurry_build`). See :func:`build_tool`."""
    return build_tool(MINIO, niced, timeout)


def build_mc(niced: bool = False, timeout: Optional[float] = MINIO_BUILD_TIMEOUT_SECONDS) -> Path:
    """Return the cached ``mc`` binary, building it as :func:`build_minio` builds MinIO."""
    return build_tool(MC, niced, timeout)


def build_tool(
    tool: GoTool, niced: bool = False, timeout: Optional[float] = MINIO_BUILD_TIMEOUT_SECONDS
) -> Path:
    """Return the cached binary of ``tool``, building it with ``go install`` if it is absent.

    A lock file serializes concurrent builds (two test runs on one machine); the binary is
    installed into a scratch directory and renamed into place, so an interrupted build never
    leaves a truncated binary that a later run would trust. Raises ``RuntimeError`` when Go
    is missing or the build fails or takes longer than ``timeout`` seconds.
    """
    global _build_process
    cache = tool_cache_dir(tool)
    binary = cache / tool.name
    if binary.is_file():
        return binary
    go = shutil.which("go")
    if go is None:
        raise RuntimeError(f"`go` is not on PATH, so {tool.name} cannot be built")
    cache.mkdir(parents=True, exist_ok=True)
    with open(cache / "build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if binary.is_file():  # another run built it while this one waited
            return binary
        scratch = Path(tempfile.mkdtemp(prefix="gobin-", dir=cache))
        try:
            log.warning(
                "Building %s %s with `go install` into %s; this takes minutes the first "
                "time and is cached afterwards.", tool.name, tool.version, cache
            )
            started = time.monotonic()
            # GOPATH and GOCACHE keep their defaults, so the module and build caches are
            # shared with any other Go work on the machine.
            env = {**os.environ, "GOBIN": str(scratch)}
            command = [go, "install", f"{tool.module}@{tool.version}"]
            if niced and not _hurry_requested and shutil.which("nice"):
                command = ["nice", "-n", "19", *command]
            # Its own process group: the compilers go starts can be reniced or stopped with it.
            process = subprocess.Popen(
                command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                start_new_session=True,
            )
            _build_process = process
            try:
                output, _ = process.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
                raise RuntimeError(
                    f"`go install` of {tool.name} took over {timeout:.0f} s; stopped it"
                )
            finally:
                _build_process = None
            if process.returncode != 0 or not (scratch / tool.name).is_file():
                raise RuntimeError(f"`go install` of {tool.name} failed:\n{output[-4000:]}")
            os.replace(scratch / tool.name, binary)
            log.warning("Built %s in %.0f s: %s", tool.name, time.monotonic() - started, binary)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    return binary


def hurry_build() -> None:
    """Raise a niced build that is still running to normal priority: something now waits
    for it. Lowering a niceness needs privileges; without them the build stays niced."""
    global _hurry_requested
    _hurry_requested = True
    process = _build_process
    if process is not None and process.poll() is None:
        try:
            os.setpriority(os.PRIO_PGRP, process.pid, 0)
            log.warning("Raised the running MinIO build to normal priority")
        except OSError as e:
            log.warning("The MinIO build stays niced (%s)", e)


def stop_build() -> None:
    """Stop a build that is still running (this process started it, in its own group)."""
    process = _build_process
    if process is not None and process.poll() is None:
        os.killpg(process.pid, signal.SIGKILL)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@dataclass(frozen=True)
class StsSession:
    """Temporary credentials from an STS: what AWS's ``AssumeRole`` returns."""

    access_key: str
    secret_key: str
    session_token: str
    #: When they expire, in seconds since the epoch.
    expires_at: float


@dataclass(frozen=True)
class StoredObject:
    """One object of a bucket listing."""

    size: int
    etag: str


@dataclass
class ObjectStore:
    """A running S3-compatible server on localhost and how each client reaches it."""

    #: ``"minio"`` or ``"moto"`` (the fallback).
    kind: str
    endpoint: str
    process: subprocess.Popen[bytes]
    #: Holds the server's data directory and log; deleted by :meth:`stop`.
    workdir: Path
    log_file: Path
    access_key: str = ACCESS_KEY
    secret_key: str = SECRET_KEY
    region: str = REGION
    buckets: List[str] = field(default_factory=list)

    def spark_conf(self) -> Dict[str, str]:
        """The S3A settings (``spark.hadoop.fs.s3a.*``) for this server. The session also
        needs hadoop-aws on its classpath: ``delta_lifecycle.hadoop_aws_package()``."""
        return {
            "spark.hadoop.fs.s3a.endpoint": self.endpoint,
            "spark.hadoop.fs.s3a.endpoint.region": self.region,
            "spark.hadoop.fs.s3a.path.style.access": "true",
            "spark.hadoop.fs.s3a.connection.ssl.enabled": "false",
            "spark.hadoop.fs.s3a.access.key": self.access_key,
            "spark.hadoop.fs.s3a.secret.key": self.secret_key,
            "spark.hadoop.fs.s3a.aws.credentials.provider": SIMPLE_CREDENTIALS_PROVIDER,
            # A refused connection (the server gone) should fail a test, not retry for minutes.
            "spark.hadoop.fs.s3a.attempts.maximum": "3",
            "spark.hadoop.fs.s3a.retry.limit": "3",
        }

    def storage_options(self) -> Dict[str, str]:
        """delta-rs (``deltalake``) ``storage_options`` for this server.

        delta-rs refuses to commit to S3 without a way to make the commit atomic. MinIO
        honours ``If-Match`` conditional puts, which delta-rs uses with
        ``aws_conditional_put=etag``; moto does not reliably, so there delta-rs is told
        to accept unsafe renames (fine for one writer at a time, as in these tests).
        """
        options = {
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_ACCESS_KEY_ID": self.access_key,
            "AWS_SECRET_ACCESS_KEY": self.secret_key,
            "AWS_REGION": self.region,
            "AWS_ALLOW_HTTP": "true",
            "AWS_FORCE_PATH_STYLE": "true",
        }
        if self.kind == "minio":
            options["aws_conditional_put"] = "etag"
        else:
            options["AWS_S3_ALLOW_UNSAFE_RENAME"] = "true"
        return options

    def filesystem(self) -> "S3FileSystem":
        """A ``pyarrow.fs.S3FileSystem`` on this server: an S3 client independent of
        Hadoop and delta-rs, for creating buckets and listing what the tests wrote."""
        from pyarrow import fs

        host = self.endpoint.split("://", 1)[1]
        return fs.S3FileSystem(
            access_key=self.access_key,
            secret_key=self.secret_key,
            region=self.region,
            endpoint_override=host,
            scheme="http",
            allow_bucket_creation=True,
            allow_bucket_deletion=True,
        )

    def create_bucket(self, name: str) -> str:
        """Create bucket ``name`` (if absent) and return its ``s3a://`` URI."""
        self.filesystem().create_dir(name)
        if name not in self.buckets:
            self.buckets.append(name)
        return f"s3a://{name}"

    def list_prefix(self, uri: str) -> List[str]:
        """Every object key under ``uri`` (``s3a://bucket/prefix``), relative to the prefix,
        sorted; empty if there is none."""
        from pyarrow import fs

        path = uri.split("://", 1)[1].rstrip("/")
        selector = fs.FileSelector(path, recursive=True, allow_not_found=True)
        infos = self.filesystem().get_file_info(selector)
        return sorted(
            i.path[len(path) + 1:] for i in infos if i.type == fs.FileType.File
        )

    def request_counts(self) -> Dict[str, int]:
        """See :func:`request_counts`. MinIO only."""
        if self.kind != "minio":
            raise RuntimeError(f"{self.kind} does not report request counts")
        return request_counts(self.endpoint)

    def mc(self, *args: str, timeout: float = 3600) -> "subprocess.CompletedProcess[str]":
        """Run MinIO's client (built by :func:`build_mc`) against this server, whose alias is
        ``local`` (``mc cp --recursive local/a/t local/b/t``); its configuration lives in the
        server's work directory. Raises ``CalledProcessError`` when ``mc`` fails."""
        host = self.endpoint.replace("://", f"://{self.access_key}:{self.secret_key}@", 1)
        env = {**os.environ, "MC_HOST_local": host}
        command = [str(build_mc()), "--config-dir", str(self.workdir / "mc"), "--quiet", *args]
        return subprocess.run(command, env=env, capture_output=True, text=True, check=True,
                              timeout=timeout)

    def add_user(self, user: str, secret: str, buckets: Sequence[str]) -> str:
        """Create the MinIO user ``user`` (not the root user) that may read and write every
        object of ``buckets`` and nothing else, through ``mc admin``; return the name of the
        policy attached to it. MinIO only: moto has no users."""
        if self.kind != "minio":
            raise RuntimeError(f"{self.kind} has no users of its own; MinIO has")
        policy_name = f"{user}-rw"
        resources = [arn for b in buckets for arn in (f"arn:aws:s3:::{b}", f"arn:aws:s3:::{b}/*")]
        document = {"Version": "2012-10-17", "Statement": [
            {"Effect": "Allow", "Action": ["s3:*"], "Resource": resources},
        ]}
        policy_file = self.workdir / f"{policy_name}.json"
        policy_file.write_text(json.dumps(document))
        self.mc("admin", "user", "add", "local", user, secret, timeout=60)
        self.mc("admin", "policy", "create", "local", policy_name, str(policy_file), timeout=60)
        self.mc("admin", "policy", "attach", "local", policy_name, "--user", user, timeout=60)
        return policy_name

    def assume_role(
        self, access_key: str, secret_key: str, duration_seconds: int = 12 * 3600,
        policy: Optional[str] = None,
    ) -> "StsSession":
        """A temporary session from MinIO's STS ``AssumeRole``, called as the user of
        ``access_key`` (a user :meth:`add_user` made: MinIO refuses temporary credentials and
        service accounts as callers). The session has that user's rights, narrowed by
        ``policy`` (an IAM policy document as JSON) when given. boto3 (a dependency of moto)
        signs the call."""
        import boto3

        sts = boto3.client(
            "sts", endpoint_url=self.endpoint, region_name=self.region,
            aws_access_key_id=access_key, aws_secret_access_key=secret_key,
        )
        request: Dict[str, object] = {
            # MinIO ignores both; AWS's API requires them.
            "RoleArn": "arn:aws:iam::000000000000:role/delta-lifecycle-tests",
            "RoleSessionName": "delta-lifecycle-tests",
            "DurationSeconds": duration_seconds,
        }
        if policy is not None:
            request["Policy"] = policy
        credentials = sts.assume_role(**request)["Credentials"]
        return StsSession(
            credentials["AccessKeyId"], credentials["SecretAccessKey"],
            credentials["SessionToken"], credentials["Expiration"].timestamp(),
        )

    def object_listing(self, bucket: str) -> Dict[str, "StoredObject"]:
        """Every object of ``bucket`` by key, with its size and ETag, as the root user sees it
        (a listing through boto3: pyarrow's does not give ETags)."""
        import boto3

        s3 = boto3.client(
            "s3", endpoint_url=self.endpoint, region_name=self.region,
            aws_access_key_id=self.access_key, aws_secret_access_key=self.secret_key,
        )
        listing: Dict[str, StoredObject] = {}
        for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket):
            for entry in page.get("Contents", []):
                listing[entry["Key"]] = StoredObject(int(entry["Size"]), entry["ETag"].strip('"'))
        return listing

    def describe(self) -> str:
        """Everything a person needs to point Spark or delta-rs at this server."""
        conf = self.spark_conf()
        lines = [
            f"S3-compatible server: {self.kind} (pid {self.process.pid})",
            f"  endpoint    {self.endpoint}",
            f"  access key  {self.access_key}",
            f"  secret key  {self.secret_key}",
            f"  region      {self.region}",
            f"  buckets     {', '.join(self.buckets) or '(none)'}",
            f"  data dir    {self.workdir / 'data'}",
            f"  server log  {self.log_file}",
            "",
            "Spark (S3A) settings; also put hadoop-aws on the classpath, e.g.",
            "  configure_spark(builder, extra_packages=[delta_lifecycle.hadoop_aws_package()])",
        ]
        lines += [f"  {key}={value}" for key, value in conf.items()]
        lines += ["", "spark-submit:"]
        lines += ["  " + " ".join(f"--conf {k}={v}" for k, v in conf.items())]
        lines += ["", "delta-rs storage_options (deltalake.DeltaTable(uri, storage_options=...)):"]
        lines += ["  " + json.dumps(self.storage_options(), indent=2).replace("\n", "\n  ")]
        return "\n".join(lines)

    def stop(self) -> None:
        """Stop the server and delete its data and log."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=20)
        shutil.rmtree(self.workdir, ignore_errors=True)

    def log_tail(self) -> str:
        try:
            return self.log_file.read_text(errors="replace")[-3000:]
        except OSError:
            return "(no log)"


def request_counts(endpoint: str) -> Dict[str, int]:
    """The S3 requests the MinIO server at ``endpoint`` has served since it started, by API as
    MinIO names them (``CopyObject``, ``CopyObjectPart`` for UploadPartCopy, ``GetObject``,
    ``PutObject``, ``HeadObject``, ...), and the bytes it has received from and sent to its
    clients (``traffic_received_bytes``, ``traffic_sent_bytes``), from its Prometheus metrics
    (v3: the v2 cluster metrics are cached for seconds)."""
    url = f"{endpoint}/minio/metrics/v3/api/requests"
    with urllib.request.urlopen(url, timeout=10) as response:
        text = response.read().decode()
    counts: Dict[str, int] = {}
    for line in text.splitlines():
        if line.startswith("#") or 'type="s3"' not in line:
            continue
        metric, value = line.rsplit(" ", 1)
        name = metric.split("{", 1)[0]
        if name == "minio_api_requests_total":
            key = metric.split('name="', 1)[1].split('"', 1)[0]
        elif name.startswith("minio_api_requests_traffic_"):
            key = name[len("minio_api_requests_"):]
        else:
            continue
        counts[key] = counts.get(key, 0) + int(float(value))
    return counts


def _wait_until_serving(store: ObjectStore, health_path: str) -> None:
    deadline = time.monotonic() + STARTUP_TIMEOUT_SECONDS
    last_error = "no answer yet"
    while time.monotonic() < deadline:
        if store.process.poll() is not None:
            tail = store.log_tail()
            store.stop()
            raise RuntimeError(
                f"{store.kind} exited with {store.process.returncode} while starting:\n{tail}"
            )
        try:
            with urllib.request.urlopen(store.endpoint + health_path, timeout=2) as response:
                if response.status == 200:
                    return
                last_error = f"HTTP {response.status}"
        except (urllib.error.URLError, OSError) as e:
            last_error = str(e)
        time.sleep(0.2)
    tail = store.log_tail()
    store.stop()
    raise RuntimeError(
        f"{store.kind} did not start in {STARTUP_TIMEOUT_SECONDS:.0f} s: {last_error}\n{tail}"
    )


def _start_minio(binary: Path) -> ObjectStore:
    workdir = Path(tempfile.mkdtemp(prefix="delta-lifecycle-s3-"))
    port, console_port = _free_port(), _free_port()
    data_dir = workdir / "data"
    data_dir.mkdir()
    log_file = workdir / "minio.log"
    env = {
        **os.environ,
        "MINIO_ROOT_USER": ACCESS_KEY,
        "MINIO_ROOT_PASSWORD": SECRET_KEY,
        "MINIO_REGION": REGION,
        # No update checks, usage reports or browser console work on a test server.
        "MINIO_UPDATE": "off",
        "MINIO_BROWSER": "off",
        "MINIO_CALLHOME_ENABLE": "off",
        # The request counts of request_counts(); the server listens on 127.0.0.1 only.
        "MINIO_PROMETHEUS_AUTH_TYPE": "public",
    }
    with open(log_file, "wb") as out:
        process = subprocess.Popen(
            [
                str(binary), "server", str(data_dir),
                "--address", f"127.0.0.1:{port}",
                "--console-address", f"127.0.0.1:{console_port}",
                "--quiet",
            ],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # Ctrl-C on `make objectstore` reaches us, not it
        )
    store = ObjectStore("minio", f"http://127.0.0.1:{port}", process, workdir, log_file)
    _wait_until_serving(store, "/minio/health/live")
    return store


def _start_moto() -> ObjectStore:
    workdir = Path(tempfile.mkdtemp(prefix="delta-lifecycle-s3-"))
    port = _free_port()
    log_file = workdir / "moto.log"
    with open(log_file, "wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    store = ObjectStore("moto", f"http://127.0.0.1:{port}", process, workdir, log_file)
    _wait_until_serving(store, "/moto-api/")
    return store


def start_object_store(buckets: Sequence[str] = (), prefer: Optional[str] = None) -> ObjectStore:
    """Start a server on a free localhost port with a fresh data directory and create
    ``buckets``. MinIO unless it cannot be built or started (or ``prefer="moto"``, or the
    environment variable ``DELTA_LIFECYCLE_OBJECTSTORE_SERVER=moto``); then moto, with a
    banner in the log saying so."""
    prefer = prefer or os.environ.get("DELTA_LIFECYCLE_OBJECTSTORE_SERVER", "minio")
    store: Optional[ObjectStore] = None
    if prefer == "minio":
        problem: Optional[BaseException] = None
        try:
            binary = build_minio()
            # A free port can be taken by someone else before MinIO binds it: try again
            # before calling MinIO unusable.
            for _ in range(3):
                try:
                    store = _start_minio(binary)
                    break
                except RuntimeError as e:
                    problem = e
        except (RuntimeError, subprocess.TimeoutExpired) as e:
            problem = e
        if store is None:
            log.error(
                "\n%s\nMinIO is NOT available (%s).\nFALLING BACK TO MOTO, an S3 emulator; "
                "results are weaker evidence than on MinIO.\n%s", "!" * 78, problem, "!" * 78
            )
    if store is None:
        store = _start_moto()
    log.warning("Object store: %s at %s (files in %s)", store.kind, store.endpoint, store.workdir)
    try:
        for name in buckets:
            store.create_bucket(name)
    except Exception:
        store.stop()
        raise
    return store


@contextlib.contextmanager
def running_object_store(buckets: Sequence[str] = ()) -> Iterator[ObjectStore]:
    store = start_object_store(buckets)
    try:
        yield store
    finally:
        store.stop()


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    start = commands.add_parser("start", help="start a server and print its settings")
    start.add_argument("--bucket", action="append", default=None,
                       help="bucket to create (repeatable; default: delta-lifecycle)")
    start.add_argument("--json", action="store_true",
                       help="print the settings as one JSON object instead of text")
    commands.add_parser("build", help="build MinIO into the cache (if absent) and print its path")
    commands.add_parser("build-mc", help="build mc into the cache (if absent) and print its path")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")

    if args.command == "build":
        print(build_minio())
        return 0
    if args.command == "build-mc":
        print(build_mc())
        return 0

    with running_object_store(args.bucket or ["delta-lifecycle"]) as store:
        if args.json:
            print(json.dumps({
                "kind": store.kind,
                "endpoint": store.endpoint,
                "buckets": store.buckets,
                "spark_conf": store.spark_conf(),
                "storage_options": store.storage_options(),
            }), flush=True)
        else:
            print(store.describe(), flush=True)
            print("\nRunning until Ctrl-C (or SIGTERM).", flush=True)
        stop = False

        def request_stop(signum: int, frame: object) -> None:
            nonlocal stop
            stop = True

        signal.signal(signal.SIGTERM, request_stop)
        signal.signal(signal.SIGINT, request_stop)
        while not stop and store.process.poll() is None:
            time.sleep(0.5)
        if store.process.poll() is not None and not stop:
            print(f"{store.kind} exited with {store.process.returncode}; log: {store.log_file}",
                  file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
