"""A Spark standalone cluster on 127.0.0.1, started from pyspark's own ``bin/spark-class``.

A master and N workers, each its own JVM, each worker with one core and about 1 GB: the
executors of an application are then other JVMs than its driver, with their own class path
and no SparkSession, as on any real cluster. Nothing is downloaded. Used by the cluster test
module (tests/cluster/), the cluster benchmark (bench/cluster.py) and by hand::

    python tests/cluster/standalone.py start     # prints the master URL, runs until Ctrl-C

The application's REST API (``/api/v1/applications/<id>/...`` on the driver's UI port) tells
which executors ran which tasks; :meth:`StandaloneCluster.executor_pids` and
:meth:`StandaloneCluster.kill_executor` find and SIGKILL executor JVMs.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional

import pyspark

SPARK_HOME = Path(pyspark.__file__).resolve().parent
MASTER_CLASS = "org.apache.spark.deploy.master.Master"
WORKER_CLASS = "org.apache.spark.deploy.worker.Worker"
EXECUTOR_CLASS = "org.apache.spark.executor.CoarseGrainedExecutorBackend"
STARTUP_TIMEOUT_S = 180


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def get_json(url: str, timeout: float = 10) -> Any:
    with urllib.request.urlopen(url, timeout=timeout) as response:
        return json.loads(response.read().decode("utf-8"))


@dataclass
class Daemon:
    """One master or worker JVM, in a process group of its own."""

    name: str
    process: "subprocess.Popen[bytes]"
    log: Path

    def tail(self, chars: int = 4000) -> str:
        return self.log.read_text(errors="replace")[-chars:] if self.log.exists() else ""

    def kill(self, sig: int = signal.SIGKILL) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, sig)
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=30)


@dataclass
class StandaloneCluster:
    """A running master and its workers; :meth:`start` makes one, :meth:`stop` ends it."""

    work: Path
    master_port: int
    master_ui_port: int
    worker_memory: str
    spark_home: Path = SPARK_HOME
    master: Optional[Daemon] = None
    workers: List[Daemon] = field(default_factory=list)
    #: Workers a test killed on purpose: their exit is no start-up failure.
    killed: List[str] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"spark://127.0.0.1:{self.master_port}"

    @classmethod
    def start(
        cls,
        work: Optional[Path] = None,
        workers: int = 2,
        worker_memory: str = "1g",
        spark_home: Path = SPARK_HOME,
    ) -> "StandaloneCluster":
        """Start a master and ``workers`` workers of one core each, from ``spark_home``
        (another line's pyspark for that line's applications); return once every worker has
        registered with the master."""
        work = Path(work or tempfile.mkdtemp(prefix="spark-standalone-"))
        work.mkdir(parents=True, exist_ok=True)
        cluster = cls(work, free_port(), free_port(), worker_memory, spark_home)
        try:
            cluster.master = cluster._spawn(
                "master",
                [MASTER_CLASS, "--host", "127.0.0.1", "--port", str(cluster.master_port),
                 "--webui-port", str(cluster.master_ui_port)],
            )
            cluster._wait(lambda: cluster.master_state() is not None, "the master to listen")
            for i in range(workers):
                cluster.add_worker(wait=False, index=i)
            cluster._wait(lambda: cluster.alive_workers() >= workers, f"{workers} workers")
        except BaseException:
            cluster.stop()
            raise
        return cluster

    def add_worker(self, wait: bool = True, index: Optional[int] = None) -> Daemon:
        """Start one more worker (one core); with ``wait``, return once it has registered."""
        index = len(self.workers) if index is None else index
        before = self.alive_workers()
        worker_dir = self.work / f"worker-{index}-{int(time.time() * 1000)}"
        worker = self._spawn(
            f"worker-{index}",
            [WORKER_CLASS, "--host", "127.0.0.1", "--cores", "1", "--memory",
             self.worker_memory, "--webui-port", str(free_port()), "--work-dir",
             str(worker_dir), self.url],
        )
        self.workers.append(worker)
        if wait:
            self._wait(lambda: self.alive_workers() > before, "the new worker")
        return worker

    def _spawn(self, name: str, args: List[str]) -> Daemon:
        log = self.work / f"{name}.log"
        env = dict(os.environ)
        env["SPARK_HOME"] = str(self.spark_home)
        # Executors run the Python of this process, should a job need a Python worker.
        env.setdefault("PYSPARK_PYTHON", sys.executable)
        env["SPARK_LOCAL_IP"] = "127.0.0.1"
        with open(log, "ab") as out:
            process = subprocess.Popen(
                [str(self.spark_home / "bin" / "spark-class"), *args], stdout=out, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL, env=env, start_new_session=True,
            )
        return Daemon(name, process, log)

    def _wait(self, ready: Any, what: str) -> None:
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while time.monotonic() < deadline:
            for daemon in [self.master, *self.workers]:
                if (daemon is not None and daemon.name not in self.killed
                        and daemon.process.poll() is not None):
                    raise RuntimeError(f"{daemon.name} exited while waiting for {what}:\n"
                                       f"{daemon.tail()}")
            try:
                if ready():
                    return
            except OSError:
                pass
            time.sleep(0.5)
        logs = "\n".join(d.tail(1500) for d in [self.master, *self.workers] if d)
        raise RuntimeError(f"timed out after {STARTUP_TIMEOUT_S}s waiting for {what}:\n{logs}")

    def master_state(self) -> Optional[Dict[str, Any]]:
        """The master's JSON status page, or None while it is not up."""
        try:
            state: Dict[str, Any] = get_json(f"http://127.0.0.1:{self.master_ui_port}/json/")
            return state
        except OSError:
            return None

    def alive_workers(self) -> int:
        state = self.master_state() or {}
        return sum(1 for w in state.get("workers", []) if w.get("state") == "ALIVE")

    def executor_pids(self, app_id: Optional[str] = None) -> List[int]:
        """The pids of the executor JVMs this cluster's workers run (of ``app_id`` only, if
        given), found by the worker URL on their command line."""
        workers = {f"spark://Worker@{w['host']}:{w['port']}"
                   for w in (self.master_state() or {}).get("workers", [])}
        out = subprocess.run(["ps", "-ww", "-eo", "pid=,args="], capture_output=True, text=True).stdout
        pids = []
        for line in out.splitlines():
            pid, _, args = line.strip().partition(" ")
            words = args.split()
            if EXECUTOR_CLASS not in words or "--worker-url" not in words:
                continue
            worker = words[words.index("--worker-url") + 1]
            if worker in workers and (app_id is None or f"--app-id {app_id}" in args):
                pids.append(int(pid))
        return sorted(pids)

    def kill_executor(self, app_id: Optional[str] = None) -> int:
        """SIGKILL one executor JVM (of ``app_id``, if given) and return its pid."""
        pids = self.executor_pids(app_id)
        if not pids:
            raise RuntimeError(f"no executor JVM is running (app {app_id})")
        os.kill(pids[0], signal.SIGKILL)
        return pids[0]

    def kill_worker(self, index: int = 0) -> None:
        """SIGKILL one worker JVM; its executors go with it (they watch their worker)."""
        self.killed.append(self.workers[index].name)
        self.workers[index].kill(signal.SIGKILL)

    def stop(self) -> None:
        """Stop every worker, then the master; executors exit with their worker."""
        for daemon in [*self.workers, self.master]:
            if daemon is not None:
                daemon.kill(signal.SIGTERM)
        for pid in self.executor_pids():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def main() -> None:
    if sys.argv[1:2] != ["start"]:
        sys.exit("usage: python tests/cluster/standalone.py start [workers]")
    workers = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    cluster = StandaloneCluster.start(workers=workers)
    print(f"master {cluster.url} (UI http://127.0.0.1:{cluster.master_ui_port}), "
          f"{workers} workers; logs in {cluster.work}; Ctrl-C stops it", flush=True)
    try:
        signal.pause()
    except KeyboardInterrupt:
        pass
    finally:
        cluster.stop()


if __name__ == "__main__":
    main()
