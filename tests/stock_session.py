"""Stock delta-spark sessions (no delta-lifecycle) in subprocesses that the test process keeps.

A stock session is the reference reader of the suites: a session without this extension, in a
JVM without its jar. Starting one costs a JVM, delta-spark's package resolution and a cold Delta,
tens of CPU seconds, so each test process keeps one per set of launch settings (those a JVM
or its context takes at its start) and runs every stock script of its tests in it, one after
another. Each script runs as a fresh one would:
- with its own ``sys.argv`` (the script's arguments, then the settings as JSON, as a script
  started on its own gets them), namespace and ``emit``;
- with ``spark``, a new session of the process's context, the active one, so that what one
  script sets (settings, temporary views) does not reach the next;
- with ``refusal(error)`` (:data:`REFUSAL_SOURCE`), which says why a read or write was refused
  in words that do not depend on what earlier scripts did;
- with the settings that a session takes (:func:`per_session`: the Spark catalogs besides
  ``spark_catalog``, such as each Unity Catalog module's catalog) set on that session, so that
  scripts that differ only in those share a process;
- after delta-spark's cache of table logs is cleared, so that it reads every table from its
  files as a newly started stock session does.

A script reports with ``emit(result)``; a script that raises fails the caller's test with its
traceback; a session whose process died is started again for the next script. Tests run their
scripts with :func:`run_stock_script` (:data:`SESSION_CONF` and settings of their own), or read
tables' ids with :func:`stock_read_ids`.
"""

from __future__ import annotations

import atexit
import json
import os
import queue
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from dataclasses import dataclass
from typing import IO, Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from spark_sessions import SESSION_CONF, SessionSpec, preamble

#: ``refusal(error, limit=400)``, defined before every stock script's body (and in scripts that
#: run the same bodies on their own): ``"refused: <error type>: <message>"``, the message cut to
#: ``limit`` characters, as the JVM gave it. Py4J's first line ("An error occurred while calling
#: o<N>.load.") is left out: N counts the objects the process has made, so it grows from script
#: to script in a kept session and would push the end of a cut message out of it.
REFUSAL_SOURCE = textwrap.dedent(
    """
    def refusal(error, limit=400):
        java = getattr(error, "java_exception", None)
        message = str(java.toString()) if java is not None else str(error)
        return "refused: " + type(error).__name__ + ": " + message[:limit]
    """
)

#: What the subprocess runs: the session from the launch settings in its last argument (the
#: ``spark.jars.packages`` among them go to delta-spark's helper as its extra packages), then one
#: request per stdin line: ``{"body": ..., "argv": [...], "settings": <JSON of every setting>,
#: "session_settings": {...}}``, answered on stdout by the ``RESULT <json>`` lines the body emits
#: and one ``END ok`` or ``END error`` line.
SERVER = preamble(
    SessionSpec(extension=False, master="local[1]"), conf="json.loads(sys.argv[-1])"
) + textwrap.dedent(
    """
    import traceback
    jvm = spark.sparkContext._jvm
    delta_logs = jvm.org.apache.spark.sql.delta.DeltaLog

    def emit(result):
        result["extensions"] = spark.conf.get("spark.sql.extensions")
        result["jars"] = spark.conf.get("spark.jars", "")
        print("RESULT " + json.dumps(result), flush=True)

    print("READY", flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        sys.argv = ["stock_script.py", *request["argv"], request["settings"]]
        delta_logs.clearCache()
        # A session of its own: what a script sets (spark.conf.set, temporary views) must not
        # reach the next script, as it would not reach a newly started session. It is the
        # active one, as a script's own session is: Delta finds a catalog's settings there.
        session = spark.newSession()
        for k, v in request["session_settings"].items():
            session.conf.set(k, v)
        jvm.org.apache.spark.sql.SparkSession.setActiveSession(session._jsparkSession)
        # Scripts written to run alone end with spark.stop(); the process outlives them.
        session.stop = lambda: None
        namespace = {"__name__": "__main__", "spark": session, "emit": emit, "json": json,
                     "sys": sys}
        try:
            exec(compile(request["body"], "stock_script.py", "exec"), namespace)
            print("END ok", flush=True)
        except BaseException:
            traceback.print_exc()
            sys.stderr.flush()
            print("END error", flush=True)
    """
)

#: A session start (JVM, package resolution) and a script may take this long on a busy 2-core
#: machine; beyond it the session is taken for hung.
TIMEOUT_SECONDS = 900


def _forward_lines(stream: IO[str], lines: "queue.Queue[Optional[str]]") -> None:
    """Every line of ``stream`` into ``lines``, then None at its end."""
    for line in stream:
        lines.put(line)
    lines.put(None)


def per_session(key: str) -> bool:
    """Whether a session takes the setting ``key`` when it is set on it, rather than the JVM
    or its context at their start: a Spark catalog's settings (a catalog is loaded from the
    session's settings when first named), but for ``spark_catalog``, which delta-spark's own
    catalog replaces at the start."""
    return key.startswith("spark.sql.catalog.") and not key.startswith(
        "spark.sql.catalog.spark_catalog"
    )


class StockSession:
    """One stock session in a subprocess with launch ``settings``, started on first use."""

    def __init__(self, settings: Dict[str, str]):
        self.settings = settings
        self.process: Optional[subprocess.Popen[str]] = None
        self.lines: "queue.Queue[Optional[str]]" = queue.Queue()
        self.stderr = tempfile.NamedTemporaryFile(
            "w+", prefix="stock-session-", suffix=".log", delete=False
        )

    def _start(self) -> subprocess.Popen[str]:
        process = subprocess.Popen(
            [sys.executable, "-u", "-c", SERVER, json.dumps(self.settings)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr, text=True,
            bufsize=1,
        )
        self.process = process
        # A thread reads stdout into a queue, so that waiting has a deadline. (Waiting on the
        # pipe's descriptor would miss lines that the reader's buffer already holds.)
        self.lines = queue.Queue()  # a fresh one per process: the old one may hold its end
        threading.Thread(
            target=_forward_lines, args=(process.stdout, self.lines), daemon=True
        ).start()
        self._read_until(("READY",), "starting")
        return process

    def _stderr_tail(self) -> str:
        self.stderr.flush()
        with open(self.stderr.name, errors="replace") as f:
            return f.read()[-6000:]

    def _read_until(self, ends: Sequence[str], what: str) -> List[str]:
        """The stdout lines up to (and with) the first that starts with one of ``ends``."""
        assert self.process is not None
        lines: List[str] = []
        deadline = time.monotonic() + TIMEOUT_SECONDS
        while True:
            try:
                line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                self.close()
                raise AssertionError(
                    f"the stock session hung while {what}:\n{self._stderr_tail()}"
                ) from None
            if line is None:
                code = self.process.wait()
                self.process = None
                raise AssertionError(
                    f"the stock session exited ({code}) while {what}:\n{self._stderr_tail()}"
                )
            lines.append(line.rstrip("\n"))
            if line.startswith(tuple(ends)):
                return lines

    def run(
        self, body: str, args: Sequence[str], session_settings: Optional[Dict[str, str]] = None
    ) -> Dict[str, Any]:
        """Run ``body`` with ``args`` in a session with ``session_settings`` set and return the
        last result it emitted."""
        process = self.process if self.process and self.process.poll() is None else self._start()
        assert process.stdin is not None
        offset = os.path.getsize(self.stderr.name)
        request = {
            "body": REFUSAL_SOURCE + textwrap.dedent(body),
            "argv": list(args),
            "settings": json.dumps({**self.settings, **(session_settings or {})}),
            "session_settings": session_settings or {},
        }
        process.stdin.write(json.dumps(request) + "\n")
        process.stdin.flush()
        lines = self._read_until(("END ",), "running a script")
        if lines[-1] != "END ok":
            with open(self.stderr.name, errors="replace") as f:
                f.seek(offset)
                raise AssertionError(f"the stock script failed:\n{f.read()[-6000:]}")
        results = [line for line in lines if line.startswith("RESULT ")]
        assert results, f"the stock script emitted nothing: {lines[-20:]}"
        result: Dict[str, Any] = json.loads(results[-1][len("RESULT "):])
        assert "DeltaLifecycle" not in result["extensions"], result["extensions"]
        jar_names = [jar.rsplit("/", 1)[-1] for jar in result["jars"].split(",")]
        assert not [n for n in jar_names if "delta-lifecycle_" in n], result["jars"]
        return result

    def close(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self.process = None


#: The sessions a test process keeps, the most recently used last. Modules with launch settings
#: of their own (Unity Catalog's packages, an object store) each need one, and every kept session
#: is a JVM, so only the last few stay.
_SESSIONS: Dict[str, StockSession] = {}
KEPT_SESSIONS = 2


@dataclass(frozen=True)
class StockScripts:
    """Where scripts with a given set of settings run: a kept stock session and the settings
    each script's session gets on top of its launch settings."""

    session: StockSession
    session_settings: Dict[str, str]

    def run(self, body: str, args: Sequence[str]) -> Dict[str, Any]:
        """Run ``body`` with ``args`` and return the last result it emitted."""
        return self.session.run(body, args, self.session_settings)


def stock_session(settings: Dict[str, str]) -> StockScripts:
    """Where scripts with ``settings`` run: the process's stock session with their launch
    settings (started on its first script)."""
    launch = {k: v for k, v in settings.items() if not per_session(k)}
    key = json.dumps(launch, sort_keys=True)
    session = _SESSIONS.pop(key, None) or StockSession(launch)
    _SESSIONS[key] = session
    while len(_SESSIONS) > KEPT_SESSIONS:
        _SESSIONS.pop(next(iter(_SESSIONS))).close()
    return StockScripts(session, {k: v for k, v in settings.items() if per_session(k)})


@atexit.register
def _close_all() -> None:
    for session in _SESSIONS.values():
        session.close()


def run_stock_script(
    body: str, args: Sequence[str], conf: Optional[Dict[str, str]] = None
) -> Dict[str, Any]:
    """Run the script ``body`` with ``args`` in a stock delta-spark session (no extension; the
    process's own, :func:`stock_session`) with :data:`SESSION_CONF` and ``conf``, and return
    what it emitted. The script has ``spark`` and ``emit(result)``, and its settings as JSON in
    ``sys.argv[-1]``."""
    return stock_session({**SESSION_CONF, **(conf or {})}).run(body, args)


#: A stock-reader script body: the sorted ``id`` column of each ``name -> (path, version
#: or None)`` in its first argument, or ``"refused: <error type>: <message>"``.
STOCK_READ_IDS_BODY = """
    out = {}
    for name, (path, version) in json.loads(sys.argv[1]).items():
        reader = spark.read.format("delta")
        if version is not None:
            reader = reader.option("versionAsOf", version)
        try:
            out[name] = sorted(int(r[0]) for r in reader.load(path).select("id").collect())
        except Exception as e:
            out[name] = refusal(e)
    emit(out)
"""

#: What :func:`stock_read_ids` reads of a table: its ids, or why stock delta-spark refused it.
StockRead = Union[List[int], str]


def stock_read_ids(
    tables: Mapping[str, Tuple[str, Optional[int]]], conf: Optional[Dict[str, str]] = None
) -> Dict[str, StockRead]:
    """Read the ``id`` column of each ``name -> (path, version or None)`` with stock
    delta-spark in one subprocess (:data:`STOCK_READ_IDS_BODY`), with ``conf`` as
    :func:`run_stock_script` takes it."""
    return run_stock_script(STOCK_READ_IDS_BODY, [json.dumps(dict(tables))], conf)
