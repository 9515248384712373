"""The settings that give delta-spark a put-if-absent on local files that holds across processes
(tests/jvm/LinkingLocalLogStore.java), for tests whose writers run in several processes.

delta-spark's default store for local files checks and renames under a lock of its own JVM, so
a commit by another process between its check and its rename is lost without an error. The
Delta protocol asks the storage for an atomic put-if-absent; on a local disk shared by
several processes this store is how a JVM gets one (delta-rs already links).
"""

from __future__ import annotations

import fcntl
import functools
import glob
import hashlib
import os
import subprocess
import tempfile
import urllib.request
import zipfile
from importlib.metadata import version
from pathlib import Path
from typing import Dict

import pyspark

SOURCE = Path(__file__).with_name("jvm") / "LinkingLocalLogStore.java"
CLASS = "io.github.deltalifecycle.tests.LinkingLocalLogStore"
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "delta-lifecycle" / "test-jars"
MAVEN_CENTRAL = "https://repo1.maven.org/maven2"


@functools.lru_cache(maxsize=None)
def linking_log_store_conf() -> Dict[str, str]:
    """Session settings, given when the session's JVM starts, that put the store on the classpath
    and make it the store of ``file:`` tables."""
    return {"spark.jars": str(_jar()), "spark.delta.logStore.file.impl": CLASS}


def _delta_storage_jar(delta: str) -> Path:
    """delta-storage's jar of the installed delta-spark: from sbt's or Spark's download cache, or
    Maven Central."""
    home = Path.home()
    cached = glob.glob(str(home / f".cache/coursier/v1/https/*/maven2/io/delta/delta-storage/{delta}/*.jar"))
    cached += glob.glob(str(home / f".ivy2*/jars/io.delta_delta-storage-{delta}.jar"))
    if cached:
        return Path(sorted(cached)[0])
    target = CACHE / f"delta-storage-{delta}.jar"
    if not target.exists():
        url = f"{MAVEN_CENTRAL}/io/delta/delta-storage/{delta}/delta-storage-{delta}.jar"
        with urllib.request.urlopen(url, timeout=120) as response:
            data = response.read()
        partial = target.with_suffix(f".{os.getpid()}.part")
        partial.write_bytes(data)
        os.replace(partial, target)
    return target


def _jar() -> Path:
    delta = version("delta-spark")
    key = hashlib.sha256(SOURCE.read_bytes() + delta.encode() + pyspark.__version__.encode()).hexdigest()[:12]
    CACHE.mkdir(parents=True, exist_ok=True)
    jar = CACHE / f"linking-log-store-{key}.jar"
    with open(CACHE / "linking-log-store.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if jar.exists():
            return jar
        hadoop = glob.glob(str(Path(pyspark.__file__).parent / "jars" / "hadoop-client-api-*.jar"))
        classpath = os.pathsep.join([str(_delta_storage_jar(delta)), *hadoop])
        with tempfile.TemporaryDirectory() as classes:
            subprocess.run(["javac", "--release", "8", "-nowarn", "-cp", classpath, "-d", classes, str(SOURCE)],
                           check=True, capture_output=True, text=True)
            partial = jar.with_suffix(".part")
            with zipfile.ZipFile(partial, "w") as out:
                for compiled in Path(classes).rglob("*.class"):
                    out.write(compiled, compiled.relative_to(classes).as_posix())
            os.replace(partial, jar)
    return jar
