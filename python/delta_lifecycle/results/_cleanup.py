"""`ALTER TABLE … CLEAN LOG`: [`CleanupResult`][delta_lifecycle.results.CleanupResult], one [`CleanedLogFile`][delta_lifecycle.results.CleanedLogFile] a file."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Optional, Tuple

from pyspark.sql import Row

from delta_lifecycle.results._rows import StatementRow

#: The columns of ``ALTER TABLE … CLEAN LOG``, in order.
CLEANUP_COLUMNS: Tuple[str, ...] = (
    "path", "kind", "version", "sizeInBytes", "action", "reason", "table",
)


@dataclass(frozen=True)
class CleanedLogFile(StatementRow, columns=CLEANUP_COLUMNS, statement="ALTER TABLE … CLEAN LOG"):
    """One expired log file that `ALTER TABLE … CLEAN LOG` deleted, would delete, or kept.

    Attributes
    ----------
    path:
        The file.
    kind:
        `"commit"`, `"checksum"`, `"compaction"`, `"checkpoint"` or `"sidecar"`
        (a V2 checkpoint's sidecar file that no remaining checkpoint names).
    version:
        Its version (a compaction's start version; for a sidecar, the expired checkpoint
        naming it, or the cut-off checkpoint when none does).
    size_in_bytes:
        Its size.
    action:
        `"deleted"`, `"to delete"` (dry run) or `"kept"`.
    reason:
        Why the file was kept (checkpoint protection), else `None`.
    table:
        The table the statement acted on: for a redirected table, its destination.

    Examples
    --------
    >>> plan = LifecycleTable.for_path(spark, "/data/events").clean_log(24, dry_run=True)
    >>> [(f.kind, f.version, f.action) for f in plan.files][:3]
    [('commit', 0, 'to delete'), ('commit', 1, 'to delete'), ('commit', 2, 'to delete')]
    """

    path: str
    kind: str
    version: int
    size_in_bytes: int
    action: str
    reason: Optional[str]
    table: str

    @property
    def deleted(self) -> bool:
        """Whether the cleanup deletes the file (or, in a dry run, would)."""
        return self.action != "kept"


@dataclass(frozen=True)
class CleanupResult:
    """What `ALTER TABLE … CLEAN LOG` did, or (`dry_run`) would do.

    Attributes
    ----------
    dry_run:
        `True` when nothing was deleted and `files` is the plan.
    files:
        Every expired log file, in deletion order (commits, checksums, compactions,
        checkpoints), including those checkpoint protection keeps.

    Examples
    --------
    >>> plan = LifecycleTable.for_path(spark, "/data/events").clean_log(168, dry_run=True)
    >>> print(len(plan.deleted), "files,", plan.bytes_deleted, "bytes; kept:", plan.kept)
    6 files, ... bytes; kept: ()
    """

    dry_run: bool
    files: Tuple[CleanedLogFile, ...]

    @property
    def deleted(self) -> Tuple[CleanedLogFile, ...]:
        """The files deleted (in a dry run: the files that would be deleted)."""
        return tuple(f for f in self.files if f.deleted)

    @property
    def kept(self) -> Tuple[CleanedLogFile, ...]:
        """Expired files kept, each with its `reason`."""
        return tuple(f for f in self.files if not f.deleted)

    @property
    def bytes_deleted(self) -> int:
        """Total size of `deleted`."""
        return sum(f.size_in_bytes for f in self.deleted)

    @classmethod
    def from_rows(cls, rows: Iterable[Row], dry_run: bool) -> "CleanupResult":
        """Build a [`CleanupResult`][delta_lifecycle.results.CleanupResult] from the rows `CLEAN LOG` returns.

        `dry_run` says whether the statement had `DRY RUN`; the rows alone cannot tell
        when there are none.

        Examples
        --------
        >>> sql = "ALTER TABLE delta.`/data/events` CLEAN LOG RETAIN 24 HOURS DRY RUN"
        >>> CleanupResult.from_rows(spark.sql(sql).collect(), dry_run=True).dry_run
        True
        """
        return cls(dry_run=dry_run, files=tuple(CleanedLogFile.from_row(r) for r in rows))
