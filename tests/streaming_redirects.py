"""A streaming query that keeps running while the tables it reads and writes are redirected.

Tests (local and on the standalone cluster) build a :class:`StreamUnderRedirects`: a feeder thread
appends numbered rows to the source table in SQL commits, a real query with a ProcessingTime
trigger copies the source into the sink, and the test redirects either table and brings it back
while both run. A query that stops with one of this project's typed streaming errors is restarted
from its checkpoint, as a scheduler would; any other failure fails the test. At the end the sink
must hold every fed row exactly once.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, List, Optional, Tuple

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.streaming import StreamingQuery

#: The conditions a query may stop with when a redirect changes under it: a restart from the
#: checkpoint continues exactly once (docs/redirection.md, "Streaming").
RESTARTABLE = (
    "DELTA_LIFECYCLE_STREAM_REDIRECT_CHANGED",
    "DELTA_LIFECYCLE_STREAM_REDIRECT_WAIT",
    "DELTA_LIFECYCLE_STREAM_BATCH_RACED_REDIRECT",
)

#: Why a batch INSERT commits nothing while a redirect changes: it is refused while the redirect is
#: IN-PROGRESS, or it raced a state commit and failed delta-spark's conflict check (which names the
#: redirect feature the winning commit added). The feeder then writes the same rows again.
NOT_COMMITTED = (
    "DELTA_LIFECYCLE_REDIRECT_WRITE_REFUSED",
    "DELTA_UNSUPPORTED_FEATURES_FOR_WRITE",
    "DELTA_PROTOCOL_CHANGED",
    "DELTA_METADATA_CHANGED",
)


@dataclass(frozen=True)
class TableRef:
    """A table as a test names it: ``db.t``, or a path (as ``delta.`/path` `` in SQL)."""

    name: Optional[str] = None
    path: Optional[str] = None

    @property
    def sql(self) -> str:
        return self.name if self.name else f"delta.`{self.path}`"

    def read_stream(self, spark: SparkSession) -> DataFrame:
        if self.name:
            return spark.readStream.table(self.name)
        return spark.readStream.format("delta").load(self.path)


@dataclass
class StreamUnderRedirects:
    """The feeder, the query and the moves of one test."""

    spark: SparkSession
    source: TableRef
    sink: TableRef
    checkpoint: str
    rows_per_commit: int = 10
    #: Instead of writing the sink, run this on each batch (``foreachBatch``).
    foreach_batch: Optional[Callable[[DataFrame, int], None]] = None
    fed: int = 0
    restarts: List[str] = field(default_factory=list)
    timings: List[Tuple[str, float]] = field(default_factory=list)
    query: Optional[StreamingQuery] = None
    _stop: threading.Event = field(default_factory=threading.Event)
    _feeder: Optional[threading.Thread] = None
    _feeder_error: List[BaseException] = field(default_factory=list)

    def start(self) -> None:
        self._feeder = threading.Thread(target=self._feed, daemon=True)
        self._feeder.start()
        self.query = self._start_query()

    def _start_query(self) -> StreamingQuery:
        writer = (
            self.source.read_stream(self.spark)
            .writeStream.option("checkpointLocation", self.checkpoint)
            .trigger(processingTime="1 second")
        )
        if self.foreach_batch:
            return writer.foreachBatch(self.foreach_batch).start()
        writer = writer.format("delta")
        return writer.toTable(self.sink.name) if self.sink.name else writer.start(self.sink.path)

    def _feed(self) -> None:
        while not self._stop.is_set():
            low, high = self.fed, self.fed + self.rows_per_commit
            try:
                self.spark.sql(
                    f"INSERT INTO {self.source.sql} SELECT id FROM range({low}, {high})"
                )
                self.fed = high
            except Exception as e:
                if not any(reason in str(e) for reason in NOT_COMMITTED):
                    self._feeder_error.append(e)
                    return
                time.sleep(0.2)
            time.sleep(0.8)

    def check_running(self) -> None:
        """Restarts the query if it stopped with a restartable typed error; fails otherwise."""
        assert not self._feeder_error, f"feeder failed: {self._feeder_error[0]}"
        assert self.query is not None
        if self.query.isActive:
            return
        error = str(self.query.exception())
        assert any(c in error for c in RESTARTABLE), f"the query failed: {error[:6000]}"
        self.restarts.append(error.split("]")[0])
        self.query = self._start_query()

    def run_for(self, seconds: float) -> None:
        """Lets the feeder and the query run, restarting the query as a scheduler would."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            self.check_running()
            time.sleep(0.5)

    def move(self, statement: str) -> None:
        """Runs a redirect statement while both keep running, then lets a few batches pass."""
        self.check_running()
        started = time.monotonic()
        self.spark.sql(statement).collect()
        self.timings.append((statement.split(" TO ")[0], round(time.monotonic() - started, 1)))
        self.run_for(3)

    def finish(self) -> List[int]:
        """Stops the feeder, lets the query catch up, stops it; the sink's ids."""
        self._stop.set()
        assert self._feeder is not None
        self._feeder.join()
        self.check_running()
        assert self.query is not None
        self.query.processAllAvailable()
        self.check_running()
        self.query.stop()
        return sorted(int(r[0]) for r in self.spark.sql(f"SELECT id FROM {self.sink.sql}").collect())


def run_through_moves(
    stream: StreamUnderRedirects, moves: List[str], before: float = 5
) -> List[int]:
    """Starts `stream`, runs each move while it runs, finishes; the sink's ids."""
    stream.start()
    stream.run_for(before)
    for statement in moves:
        stream.move(statement)
    return stream.finish()


def difference(ids: List[int], fed: int) -> str:
    """How `ids` differ from each fed id once, for an assertion's message."""
    missing = sorted(set(range(fed)) - set(ids))
    extra = sorted(set(ids) - set(range(fed)))
    duplicated = len(ids) - len(set(ids))
    return f"missing {missing[:20]}, unexpected {extra[:20]}, {duplicated} duplicates"


def stream_between_paths(
    spark: SparkSession, root: Path
) -> Tuple[Path, Path, StreamUnderRedirects]:
    """Two empty Delta tables by path under ``root``, ``feed`` and ``orders``, and a stream from
    the first into the second (its checkpoint in ``root/ck``), not started yet."""
    feed, orders = root / "feed", root / "orders"
    for table in (feed, orders):
        spark.sql(f"CREATE TABLE delta.`{table}` (id BIGINT) USING delta")
    stream = StreamUnderRedirects(
        spark, TableRef(path=str(feed)), TableRef(path=str(orders)), str(root / "ck")
    )
    return feed, orders, stream


def moves_by_path(first: Path, second: Path) -> List[str]:
    """SET REDIRECT of ``first``, then of ``second`` (each to ``<path>-moved``), then UNSET
    REDIRECT of each in the same order."""
    return [f"ALTER TABLE delta.`{t}` SET REDIRECT TO '{t}-moved'" for t in (first, second)] + [
        f"ALTER TABLE delta.`{t}` UNSET REDIRECT" for t in (first, second)
    ]
