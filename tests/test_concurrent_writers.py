"""Writers in other processes keep appending while this project's multi-commit operations
run: DROP FEATURE (fast, and TRUNCATE HISTORY with the full matrix), SET REDIRECT, UNSET
REDIRECT, and the post-commit policy with COMPACT LOG.

Each writer (tests/concurrent_appender.py; delta-rs, or stock delta-spark without this
extension) records every attempt. Afterwards:

- every append either returned and its rows are in the table exactly once, or failed with
  a typed error (a ``deltalake`` ``DeltaError``, a Spark error with an error condition, or
  one of delta-spark's conflict exceptions) and none of its rows is anywhere;
- the table's rows are exactly the rows before plus every committed batch, for this
  extension, stock delta-spark and delta-rs;
- every checkpoint and compaction in the log holds a state its commits made
  (``deltalog.assert_maintenance_files_describe_real_states``).

The Delta protocol asks the storage for an atomic put-if-absent of commit files. On a local
disk delta-spark's default store has one only within its own JVM, so every delta-spark
session here (this module's and the stock writers') commits through
tests/jvm/LinkingLocalLogStore.java, which links as delta-rs does (tests/linking_log_store.py).

CI runs each operation with two delta-rs writers (plus one stock delta-spark writer during
DROP FEATURE); ``DELTA_LIFECYCLE_FULL_MATRIX=1`` runs four delta-rs and two delta-spark
writers, and the TRUNCATE HISTORY flow too.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

import pytest
from pyspark.sql import SparkSession

from concurrent_appender import batch_ids
from environment import FULL_MATRIX
from process_jvm import lifecycle_session
from spark_sessions import SESSION_CONF
from stock_session import stock_read_ids
from table_helpers import age_log, deletion_vector_table, delta_rs_ids, ids, latest_version
from deltalog import assert_maintenance_files_describe_real_states
from delta_lifecycle import LifecycleTable
from delta_lifecycle.errors import ConcurrentCommitError, DropFeatureWaitError, FeatureTracesRemainError
from linking_log_store import linking_log_store_conf

APPENDER = Path(__file__).with_name("concurrent_appender.py")
DELTA_RS_WRITERS = 4 if FULL_MATRIX else 2
DELTA_SPARK_WRITERS = 2 if FULL_MATRIX else 1
#: Errors a lifecycle operation may lose a race with; it is then simply run again.
RETRYABLE = (ConcurrentCommitError, FeatureTracesRemainError)


@pytest.fixture(scope="module")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SparkSession]:
    """Every delta-spark session of this module commits with a put-if-absent that holds across
    processes."""
    yield from lifecycle_session(tmp_path_factory, start_conf=linking_log_store_conf())


@dataclass
class Writers:
    """Appender processes on one table, and what they recorded."""

    path: Path
    workdir: Path
    clients: Sequence[str]
    #: Writer numbers are first_writer, first_writer + 1, ...: unique across the module.
    first_writer: int
    processes: List[subprocess.Popen[bytes]] = field(default_factory=list)

    def out_file(self, writer: int) -> Path:
        return self.workdir / f"writer-{writer}.jsonl"

    @property
    def stop_file(self) -> Path:
        return self.workdir / "stop"

    def start(self) -> None:
        for i, client in enumerate(self.clients):
            writer = self.first_writer + i
            pause = "1.0"
            self.processes.append(
                subprocess.Popen(
                    [sys.executable, str(APPENDER), client, str(self.path), str(writer), str(self.stop_file),
                     str(self.out_file(writer)), pause, json.dumps({**SESSION_CONF, **linking_log_store_conf()})],
                    stdout=subprocess.DEVNULL,
                    stderr=(self.workdir / f"writer-{writer}.stderr").open("wb"),
                )
            )

    def attempts(self) -> List[Dict[str, Any]]:
        records = []
        for i in range(len(self.clients)):
            out = self.out_file(self.first_writer + i)
            if out.exists():
                records += [json.loads(line) for line in out.read_text().splitlines() if line.strip()]
        return records

    def wait_until(self, done: Callable[[List[Dict[str, Any]]], bool], what: str, timeout: float = 240) -> None:
        deadline = time.time() + timeout
        while not done(self.attempts()):
            for i, p in enumerate(self.processes):
                if p.poll() is not None:
                    stderr = (self.workdir / f"writer-{self.first_writer + i}.stderr").read_text()[-3000:]
                    pytest.fail(f"writer {self.first_writer + i} exited early: {stderr}")
            if time.time() > deadline:
                pytest.fail(f"timed out waiting for {what}: {self.attempts()[-5:]}")
            time.sleep(0.2)

    def wait_for_attempts_after(self, moment: float) -> None:
        """Until every writer has started (and finished) an attempt after ``moment``."""
        writers = {self.first_writer + i for i in range(len(self.clients))}
        self.wait_until(lambda rs: writers <= {r["writer"] for r in rs if r["start"] > moment},
                        "an attempt by every writer after the operation")

    def stop(self) -> List[Dict[str, Any]]:
        self.stop_file.touch()
        for p in self.processes:
            p.wait(timeout=120)
        return self.attempts()


@dataclass(frozen=True)
class Outcome:
    """One operation under concurrent appends: where its rows end up and what they must be."""

    read_path: Path
    expected: List[int]
    attempts: List[Dict[str, Any]]
    operation_runs: int
    #: The version to read, where later writes (by a later operation) must not count.
    version: Optional[int] = None


def run_with_writers(
    path: Path, workdir: Path, clients: Sequence[str], first_writer: int, operation: Callable[[], Any]
) -> Tuple[List[Dict[str, Any]], int]:
    """Start the writers, wait until each has committed once, run ``operation`` (again, if it
    lost a race with a typed conflict error), let every writer try once more, stop them."""
    workdir.mkdir(parents=True, exist_ok=True)
    writers = Writers(path, workdir, clients, first_writer)
    writers.start()
    try:
        everyone = set(range(first_writer, first_writer + len(clients)))
        writers.wait_until(lambda rs: everyone <= {r["writer"] for r in rs if r["ok"]}, "a first commit by every writer")
        runs = 0
        while True:
            runs += 1
            try:
                operation()
                break
            except RETRYABLE:
                if runs >= 5:
                    raise
        writers.wait_for_attempts_after(time.time())
    finally:
        attempts = writers.stop()
    return attempts, runs


def committed_ids(attempts: Sequence[Dict[str, Any]]) -> List[int]:
    return [i for a in attempts if a["ok"] for i in batch_ids(a["writer"], a["batch"])]


def clients(delta_rs: int, delta_spark: int) -> List[str]:
    return ["delta-rs"] * delta_rs + ["delta-spark"] * delta_spark


def drop_feature_fast(spark: SparkSession, root: Path) -> Outcome:
    path = root / "drop"
    deletion_vector_table(spark, path)
    before = ids(spark, path)
    table = LifecycleTable.for_path(spark, str(path))
    attempts, runs = run_with_writers(path, root / "drop-writers", clients(DELTA_RS_WRITERS, DELTA_SPARK_WRITERS),
                                      1, lambda: table.drop_feature("deletionVectors"))
    assert "deletionVectors" not in (spark.sql(f"DESCRIBE DETAIL delta.`{path}`").first()["tableFeatures"] or [])
    return Outcome(path, sorted(before + committed_ids(attempts)), attempts, runs)


def drop_feature_truncate_history(spark: SparkSession, root: Path) -> Outcome:
    path = root / "truncate"
    deletion_vector_table(spark, path)
    table = LifecycleTable.for_path(spark, str(path))
    with pytest.raises(DropFeatureWaitError):
        table.drop_feature("deletionVectors", truncate_history=True)
    age_log(path, through=latest_version(path), hours=48)
    before = ids(spark, path)
    attempts, runs = run_with_writers(path, root / "truncate-writers", clients(DELTA_RS_WRITERS, DELTA_SPARK_WRITERS),
                                      11, lambda: table.drop_feature("deletionVectors", truncate_history=True))
    return Outcome(path, sorted(before + committed_ids(attempts)), attempts, runs)


def set_and_unset_redirect(spark: SparkSession, root: Path) -> Tuple[Outcome, Outcome]:
    source, destination = root / "source", root / "destination"
    spark.sql(f"CREATE TABLE delta.`{source}` (id BIGINT) USING delta")
    for i in range(5):
        spark.sql(f"INSERT INTO delta.`{source}` VALUES ({i})")
    table = LifecycleTable.for_path(spark, str(source))
    set_attempts, set_runs = run_with_writers(source, root / "set-writers", clients(DELTA_RS_WRITERS, 0), 21,
                                              lambda: table.set_redirect(str(destination)))
    at_destination = sorted(list(range(5)) + committed_ids(set_attempts))
    set_version = latest_version(destination)
    unset_attempts, unset_runs = run_with_writers(destination, root / "unset-writers",
                                                  clients(DELTA_RS_WRITERS, 0), 31, table.unset_redirect)
    back_at_source = sorted(at_destination + committed_ids(unset_attempts))
    return (Outcome(destination, at_destination, set_attempts, set_runs, set_version),
            Outcome(source, back_at_source, unset_attempts, unset_runs))


def policy_and_compact_log(spark: SparkSession, root: Path) -> Outcome:
    """This session commits (each commit runs the post-commit policy: compactions every three
    commits, a checkpoint after a large one) while the writers append; then COMPACT LOG."""
    path = root / "policy"
    spark.sql(
        f"CREATE TABLE delta.`{path}` (id BIGINT) USING delta TBLPROPERTIES ("
        "'deltaLifecycle.logCompaction.interval' = '3', 'delta.checkpointInterval' = '50', "
        "'deltaLifecycle.logCompaction.largeCommitBytes' = '8000')"
    )
    own: List[int] = []

    def commit_and_compact() -> None:
        for i in range(12):
            rows = list(range(i * 100, i * 100 + (60 if i == 6 else 1)))
            frame = spark.createDataFrame([(r,) for r in rows], "id BIGINT")
            # The large commit: sixty one-row files.
            frame.repartition(len(rows)).write.format("delta").mode("append").save(str(path))
            own.extend(rows)
        jvm = spark._jvm  # type: ignore[attr-defined]
        assert jvm.io.github.deltalifecycle.features.compaction.LogMaintenance.awaitIdle(120_000)
        # A range containing every compaction the policy wrote (a partial overlap is refused).
        assert LifecycleTable.for_path(spark, str(path)).compact_log(0, latest_version(path)).status == "written"

    attempts, runs = run_with_writers(path, root / "policy-writers", clients(DELTA_RS_WRITERS, 0), 41,
                                      commit_and_compact)
    log = sorted(n for n in (path / "_delta_log").iterdir() if ".compacted." in n.name or ".checkpoint." in n.name)
    assert any(".compacted." in n.name for n in log) and any(".checkpoint." in n.name for n in log), log
    return Outcome(path, sorted(own + committed_ids(attempts)), attempts, runs)


@pytest.fixture(scope="module")
def outcomes(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Dict[str, Outcome]:
    root = tmp_path_factory.mktemp("concurrent")
    result = {"DROP FEATURE": drop_feature_fast(spark, root)}
    result["SET REDIRECT"], result["UNSET REDIRECT"] = set_and_unset_redirect(spark, root)
    result["policy + COMPACT LOG"] = policy_and_compact_log(spark, root)
    if FULL_MATRIX:
        result["DROP FEATURE TRUNCATE HISTORY"] = drop_feature_truncate_history(spark, root)
    return result


@pytest.fixture(scope="module")
def stock(outcomes: Dict[str, Outcome]) -> Dict[str, Any]:
    return stock_read_ids({name: (str(o.read_path), o.version) for name, o in outcomes.items()})


def is_typed(attempt: Dict[str, Any]) -> bool:
    if attempt["client"] == "delta-rs":
        return attempt["error"].endswith("Error") and attempt["error"] != "Exception" and (
            attempt["error_module"].startswith(("deltalake", "_internal")))
    # delta-spark's conflict exceptions (MetadataChangedException, ConcurrentAppendException,
    # ...) reach Python as delta.exceptions classes, whose condition is in the message only.
    if attempt["error_module"].startswith("delta.exceptions"):
        return attempt["message"].startswith("[DELTA_")
    return attempt["condition"] is not None and attempt["condition"] != "INTERNAL_ERROR"


def test_every_writer_committed_while_the_operations_ran(outcomes: Dict[str, Outcome]) -> None:
    for name, outcome in outcomes.items():
        writers = {a["writer"] for a in outcome.attempts}
        assert writers == {a["writer"] for a in outcome.attempts if a["ok"]}, name
        print(f"{name}: {len(writers)} writers, {len(outcome.attempts)} appends, "
              f"{sum(a['ok'] for a in outcome.attempts)} committed, operation runs {outcome.operation_runs}")


def test_every_failed_append_failed_with_a_typed_error(outcomes: Dict[str, Outcome]) -> None:
    for name, outcome in outcomes.items():
        untyped = [a for a in outcome.attempts if not a["ok"] and not is_typed(a)]
        assert not untyped, (name, untyped[:3])


def test_every_committed_append_is_in_the_table_exactly_once_for_every_client(
    spark: SparkSession, outcomes: Dict[str, Outcome], stock: Dict[str, Any]
) -> None:
    for name, outcome in outcomes.items():
        assert len(set(outcome.expected)) == len(outcome.expected), name
        assert ids(spark, outcome.read_path, outcome.version) == outcome.expected, name
        assert stock[name] == outcome.expected, name
        assert delta_rs_ids(outcome.read_path, outcome.version) == outcome.expected, name


def test_no_checkpoint_or_compaction_describes_a_state_that_never_existed(outcomes: Dict[str, Outcome]) -> None:
    checked = {name: assert_maintenance_files_describe_real_states(o.read_path) for name, o in outcomes.items()}
    assert checked["DROP FEATURE"] >= 4 and checked["policy + COMPACT LOG"] >= 3, checked


def test_redirect_writes_after_the_switch_were_refused(outcomes: Dict[str, Outcome]) -> None:
    for name in ("SET REDIRECT", "UNSET REDIRECT"):
        refused = [a for a in outcomes[name].attempts if not a["ok"]]
        assert refused, name
        assert all("redirect" in a["message"].lower() or "protocol" in a["message"].lower()
                   or "feature" in a["message"].lower() for a in refused), (name, refused[:3])
