"""`SET REDIRECT`, `UNSET REDIRECT` and `DESCRIBE REDIRECT`: [`RedirectStatus`][delta_lifecycle.results.RedirectStatus];
their `DRY RUN`: [`RedirectPlan`][delta_lifecycle.results.RedirectPlan]."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Optional, Tuple

from delta_lifecycle.results._rows import StatementRow

#: The redirect statements' ``mode``, as SQL spells the two redirect features.
RedirectMode = Literal["READER WRITER", "WRITER ONLY"]
#: How a redirect's copy moves the files: inside an S3-compatible store (no bytes through the
#: executors), through the kernel between local paths, or through Hadoop's streams.
CopyMode = Literal["server-side", "local", "streams"]

#: The columns of ``SET REDIRECT``, ``UNSET REDIRECT`` and ``DESCRIBE REDIRECT``, in order.
REDIRECT_COLUMNS: Tuple[str, ...] = (
    "table", "state", "mode", "type", "destination", "destinationLocation", "noRedirectRules",
    "version", "filesCopied", "bytesCopied", "commitVersions", "steps", "copyMode",
    "copyModeReason", "bytesThroughExecutors",
)

#: The columns of ``SET REDIRECT … DRY RUN`` and ``UNSET REDIRECT DRY RUN``, in order.
REDIRECT_PLAN_COLUMNS: Tuple[str, ...] = (
    "table", "state", "destination", "destinationLocation", "version", "filesToCopy",
    "bytesToCopy", "filesAlreadyThere", "bytesAlreadyThere", "filesReferencedInPlace",
    "filesGone", "logFilesToCopy", "logBytesToCopy", "copyMode", "copyModeReason", "tasks",
    "refusals", "steps",
)


@dataclass(frozen=True)
class RedirectStatus(StatementRow, columns=REDIRECT_COLUMNS, statement="… REDIRECT"):
    """A table's redirect, as `SET REDIRECT`, `UNSET REDIRECT` or `DESCRIBE REDIRECT`
    reports it.

    Attributes
    ----------
    table:
        The table as the statement named it.
    state:
        `"NORMAL"` (no redirect), `"ENABLE-REDIRECT-IN-PROGRESS"`, `"READY"` or
        `"DROP-REDIRECT-IN-PROGRESS"`.
    mode:
        `"READER WRITER"` or `"WRITER ONLY"`; `None` when NORMAL.
    type:
        `"Object Store"` (a location) or `"Session Catalog"` (a catalog table).
    destination:
        The location or table name the redirect points to.
    destination_location:
        Where the destination's files are.
    no_redirect_rules:
        One `"<app>: <operations>"` line per NoRedirectRules entry.
    version:
        The table's latest version after the statement.
    files_copied, bytes_copied:
        What the statement copied (0 for DESCRIBE; smaller on a resumed run).
    commit_versions:
        Versions the statement committed on the table.
    steps:
        One line per step, in order.
    copy_mode:
        How the statement copied the files (`CopyMode`); `None` when it copied
        nothing (`DESCRIBE`, a cancel).
    copy_mode_reason:
        Why the copy was not server-side, or why some files went through streams after the
        store refused to copy them itself; `None` otherwise.
    bytes_through_executors:
        Data bytes the executors read and wrote themselves: 0 when the store copied every
        file.

    Examples
    --------
    >>> status = LifecycleTable.for_path(spark, "/data/events").set_redirect("/new/events")
    >>> status.state, status.destination, status.commit_versions
    ('READY', 'file:/new/events', (6, 7))
    """

    table: str
    state: str
    mode: Optional[RedirectMode]
    type: Optional[str]
    destination: Optional[str]
    destination_location: Optional[str]
    no_redirect_rules: Tuple[str, ...]
    version: int
    files_copied: int
    bytes_copied: int
    commit_versions: Tuple[int, ...]
    steps: Tuple[str, ...]
    copy_mode: Optional[CopyMode]
    copy_mode_reason: Optional[str]
    bytes_through_executors: int

    @property
    def redirected(self) -> bool:
        """Whether the table has a redirect in any state."""
        return self.state != "NORMAL"


@dataclass(frozen=True)
class RedirectRefusal:
    """A check that would refuse a redirect statement: the error it would raise.

    Attributes
    ----------
    condition:
        The error condition, e.g. `"DELTA_LIFECYCLE_REDIRECT_LOCATION_NOT_ALLOWED"`; the
        statement would raise the [`delta_lifecycle.errors`][delta_lifecycle.errors] class of that condition.
    message:
        The error's message, which ends with the fix.
    """

    condition: str
    message: str


@dataclass(frozen=True)
class RedirectPlan(StatementRow, columns=REDIRECT_PLAN_COLUMNS, statement="… REDIRECT … DRY RUN"):
    """What `SET REDIRECT` or `UNSET REDIRECT` would do: the row of its `DRY RUN`,
    which writes nothing in either location.

    Attributes
    ----------
    table:
        The table as the statement named it.
    state:
        Its redirect state now (`"NORMAL"` when it has none).
    destination, destination_location:
        The redirect's destination (as given, and where its files are).
    version:
        The table's latest version now.
    files_to_copy, bytes_to_copy:
        Data files (and their bytes) the statement would copy: to the destination for
        `SET`, back to the source for `UNSET`.
    files_already_there, bytes_already_there:
        Data files already at the target with the source's size (an earlier run cut
        short): they would not be copied again.
    files_referenced_in_place:
        Files the log names outside the table's root: not copied, read where they are.
    files_gone:
        Files only older versions name that no longer exist (vacuumed): nothing to copy.
    log_files_to_copy, log_bytes_to_copy:
        Log files `SET REDIRECT` would copy (0 for `UNSET`, which replays commits).
    copy_mode:
        How the files would be copied (`CopyMode`); `None` when nothing would be.
    copy_mode_reason:
        Why the copy would not be server-side, when it would not.
    tasks:
        The number of Spark tasks the copy would run in.
    refusals:
        The checks that would refuse the statement (empty when it would run).
    steps:
        What the statement would do, in order.

    Examples
    --------
    >>> plan = LifecycleTable.for_path(spark, "/data/events").set_redirect(
    ...     "/new/events", dry_run=True)
    >>> plan.files_to_copy, plan.copy_mode, plan.refusals
    (5, 'local', ())

    Between two buckets of an S3-compatible store, the store copies the files itself:

    >>> s3 = LifecycleTable.for_path(spark, "s3a://sales/events")
    >>> # Needs an S3 store: skipped by tests/test_docstring_examples.py.
    >>> plan = s3.set_redirect("s3a://archive/events", dry_run=True)  # doctest: +SKIP
    >>> plan.copy_mode, plan.copy_mode_reason, plan.refusals  # doctest: +SKIP
    ('server-side', None, ())
    """

    table: str
    state: str
    destination: Optional[str]
    destination_location: Optional[str]
    version: int
    files_to_copy: int
    bytes_to_copy: int
    files_already_there: int
    bytes_already_there: int
    files_referenced_in_place: int
    files_gone: int
    log_files_to_copy: int
    log_bytes_to_copy: int
    copy_mode: Optional[CopyMode]
    copy_mode_reason: Optional[str]
    tasks: int
    refusals: Tuple[RedirectRefusal, ...]
    steps: Tuple[str, ...]

    @property
    def would_run(self) -> bool:
        """Whether no check would refuse the statement."""
        return not self.refusals
