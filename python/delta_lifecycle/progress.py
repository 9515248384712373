"""Progress of long statements (copies, rewrites, checkpoints, cleanups) seen from Python.

While a [`LifecycleTable`][delta_lifecycle.LifecycleTable] method runs one of this project's
statements, a background thread asks the driver every `interval` seconds which Spark jobs
the statement is running and how many of their tasks finished, and hands each change to a
callback: by default [`log_progress`][delta_lifecycle.progress.log_progress], which logs it at INFO on the
`delta_lifecycle.progress` logger.

Reports need the driver's JVM, so they come from classic sessions only; on Spark Connect the
statement runs without them (the Spark UI still shows each job's step).

Examples
--------
>>> import logging, sys
>>> logging.basicConfig(stream=sys.stdout)
>>> logging.getLogger("delta_lifecycle.progress").setLevel(logging.INFO)
>>> table = LifecycleTable.for_path(spark, "/data/events")
>>> status = table.set_redirect("/new/events")
INFO:delta_lifecycle.progress:...SET REDIRECT on delta.`/data/events`: copy 5 data files ...
...

Or hand the updates to a function of your own:

>>> updates = []
>>> other = LifecycleTable.for_name(spark, "sales.events")
>>> status = other.set_redirect("/new/sales-events", on_progress=updates.append)
>>> [u.description for u in updates if "data files" in u.description][-1]
'SET REDIRECT on sales.events: copy 5 data files (...) in ... tasks, local'
"""

from __future__ import annotations

import logging
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterator, List, Optional

from delta_lifecycle._typing import AnySparkSession

__all__ = ["OperationProgress", "ProgressCallback", "log_progress"]

_logger = logging.getLogger("delta_lifecycle.progress")


@dataclass(frozen=True)
class OperationProgress:
    """One running Spark job of a delta-lifecycle statement.

    Attributes
    ----------
    job_id:
        the Spark job's id, as the Spark UI shows it.
    description:
        the step the job belongs to, e.g. `"UNSET REDIRECT t: step 3 of 6: copy back the
        data written at the destination"`, or the copy's own description.
    tasks_done:
        tasks of the job's stages finished so far.
    tasks_total:
        tasks of the job's stages known so far (later stages may add more).
    """

    job_id: int
    description: str
    tasks_done: int
    tasks_total: int


#: What receives each change of a statement's progress.
ProgressCallback = Callable[[OperationProgress], None]


def log_progress(update: OperationProgress) -> None:
    """The default callback: logs `update` at INFO on the `delta_lifecycle.progress`
    logger."""
    _logger.info("%s: %d of %d tasks", update.description, update.tasks_done, update.tasks_total)


def running_jobs(spark: AnySparkSession) -> Optional[List[OperationProgress]]:
    """The delta-lifecycle jobs running now on `spark`'s driver, oldest first, or `None`
    for a session with no JVM at hand (Spark Connect)."""
    jvm: Any = getattr(spark, "_jvm", None)
    jsession: Any = getattr(spark, "_jsparkSession", None)
    if jvm is None or jsession is None:
        return None
    lines = jvm.io.github.deltalifecycle.sql.observation.OperationJobs.running(jsession)
    jobs = []
    for line in lines:
        job_id, done, total, description = str(line).split("\t", 3)
        jobs.append(OperationProgress(int(job_id), description, int(done), int(total)))
    return jobs


@contextmanager
def reporting_progress(
    spark: AnySparkSession, callback: Optional[ProgressCallback], interval: float = 1.0
) -> Iterator[None]:
    """Reports the progress of the statement run inside the `with` block to `callback`
    ([`log_progress`][delta_lifecycle.progress.log_progress] when `None`), from a daemon thread polling every `interval`
    seconds; each job is reported when it first shows and whenever its finished tasks change."""
    report = callback or log_progress
    if running_jobs(spark) is None:
        yield
        return
    stop = threading.Event()
    last: Dict[int, OperationProgress] = {}

    def poll() -> None:
        while not stop.wait(interval):
            try:
                jobs = running_jobs(spark) or []
            except Exception:  # the session stopped meanwhile: nothing left to report
                return
            for job in jobs:
                if last.get(job.job_id) != job:
                    last[job.job_id] = job
                    report(job)

    thread = threading.Thread(target=poll, name="delta-lifecycle-progress", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
