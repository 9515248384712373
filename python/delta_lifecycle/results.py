"""Result types of the delta-lifecycle statements, as frozen dataclasses.

Each type mirrors the rows its SQL statement returns, with Python names and immutable
containers (tuples instead of lists), so results can be compared, hashed and stored.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Dict, Iterable, Literal, Optional, Tuple, cast, get_args

from pyspark.sql import Row

__all__ = [
    "Access",
    "CLEANUP_COLUMNS",
    "COMPATIBILITY_COLUMNS",
    "ClientCompatibility",
    "Evidence",
    "COMPACTION_COLUMNS",
    "PROTOCOL_HISTORY_COLUMNS",
    "CleanedLogFile",
    "CleanupResult",
    "CompactionResult",
    "CompactionStatus",
    "DROP_FEATURE_COLUMNS",
    "DropFeatureResult",
    "DropMode",
    "DropStatus",
    "ProtocolVersion",
    "REDIRECT_COLUMNS",
    "REDIRECT_PLAN_COLUMNS",
    "CopyMode",
    "RedirectMode",
    "RedirectPlan",
    "RedirectRefusal",
    "RedirectStatus",
]

#: ``COMPACT LOG``'s ``status``: it wrote the file; a compaction of exactly the range was
#: already there; a wider compaction already covers the range; or nothing to compact.
CompactionStatus = Literal["written", "exists", "covered", "nothing-to-compact"]
#: ``DESCRIBE COMPATIBILITY``'s ``canRead`` / ``canWrite``: ``"unknown"`` when no source says
#: whether the client handles one of the table's features.
Access = Literal["yes", "no", "unknown"]
#: Where a capability entry comes from: a test here runs the client, or only public sources.
Evidence = Literal["verified", "documented"]
#: ``DROP FEATURE``'s ``mode``: under checkpoint protection, or by truncating history.
DropMode = Literal["fast", "truncate-history"]
#: ``DROP FEATURE``'s ``status``: a ``DRY RUN`` plan, or the drop done.
DropStatus = Literal["planned", "dropped"]
#: The redirect statements' ``mode``, as SQL spells the two redirect features.
RedirectMode = Literal["READER WRITER", "WRITER ONLY"]
#: How a redirect's copy moves the files: inside an S3-compatible store (no bytes through the
#: executors), through the kernel between local paths, or through Hadoop's streams.
CopyMode = Literal["server-side", "local", "streams"]

#: The columns of ``DESCRIBE PROTOCOL HISTORY``, in order.
PROTOCOL_HISTORY_COLUMNS: Tuple[str, ...] = (
    "version",
    "timestamp",
    "operation",
    "minReaderVersion",
    "minWriterVersion",
    "readerFeatures",
    "writerFeatures",
    "checkpoint",
    "compactions",
    "requireCheckpointProtectionBeforeVersion",
    "table",
)


#: The columns of ``ALTER TABLE … COMPACT LOG``, in order.
COMPACTION_COLUMNS: Tuple[str, ...] = (
    "startVersion",
    "endVersion",
    "status",
    "file",
    "commits",
    "actions",
    "bytesWritten",
    "inputBytes",
    "table",
)

#: The columns of ``ALTER TABLE … DROP FEATURE``, in order.
DROP_FEATURE_COLUMNS: Tuple[str, ...] = (
    "feature",
    "mode",
    "status",
    "filesRewritten",
    "bytesRewritten",
    "commitVersions",
    "checkpointVersions",
    "protectedBefore",
    "readableWithoutFeatureFrom",
    "historyTruncatedBefore",
    "steps",
    "clientsGainingAccess",
    "clientsBlockedByProtection",
    "table",
)

#: The columns of ``SET REDIRECT``, ``UNSET REDIRECT`` and ``DESCRIBE REDIRECT``, in order.
REDIRECT_COLUMNS: Tuple[str, ...] = (
    "table",
    "state",
    "mode",
    "type",
    "destination",
    "destinationLocation",
    "noRedirectRules",
    "version",
    "filesCopied",
    "bytesCopied",
    "commitVersions",
    "steps",
    "copyMode",
    "copyModeReason",
    "bytesThroughExecutors",
)

#: The columns of ``SET REDIRECT … DRY RUN`` and ``UNSET REDIRECT DRY RUN``, in order.
REDIRECT_PLAN_COLUMNS: Tuple[str, ...] = (
    "table",
    "state",
    "destination",
    "destinationLocation",
    "version",
    "filesToCopy",
    "bytesToCopy",
    "filesAlreadyThere",
    "bytesAlreadyThere",
    "filesReferencedInPlace",
    "filesGone",
    "logFilesToCopy",
    "logBytesToCopy",
    "copyMode",
    "copyModeReason",
    "tasks",
    "refusals",
    "steps",
)

#: The columns of ``ALTER TABLE … CLEAN LOG``, in order.
CLEANUP_COLUMNS: Tuple[str, ...] = (
    "path",
    "kind",
    "version",
    "sizeInBytes",
    "action",
    "reason",
    "table",
)


def _fields(row: Row, columns: Tuple[str, ...], statement: str) -> Dict[str, Any]:
    fields = row.asDict(recursive=False)
    missing = [c for c in columns if c not in fields]
    if missing:
        raise ValueError(
            f"The row has no column {', '.join(missing)}; it is not a row of {statement}, "
            "or the delta-lifecycle jar on the cluster does not match this Python package. "
            f"Columns: {sorted(fields)}"
        )
    return fields


def _one_of(value: Any, allowed: Any, column: str, statement: str) -> str:
    """``value`` as a string, checked against the values of the ``Literal`` type ``allowed``."""
    names: Tuple[str, ...] = get_args(allowed)
    text = str(value)
    if text not in names:
        raise ValueError(
            f"{statement} returned {column} {text!r}, which is not one of "
            f"{', '.join(repr(n) for n in names)}; the delta-lifecycle jar on the cluster "
            "does not match this Python package."
        )
    return text


def _optional_int(value: Any) -> Optional[int]:
    return None if value is None else int(value)


def _optional_str(value: Any) -> Optional[str]:
    return None if value is None else str(value)


def _optional_names(value: Any) -> Optional[Tuple[str, ...]]:
    return None if value is None else tuple(str(v) for v in value)


@dataclass(frozen=True)
class ProtocolVersion:
    """The protocol in force at one version of a Delta table: one row of
    ``DESCRIBE PROTOCOL HISTORY``.

    Attributes
    ----------
    version:
        The table version.
    timestamp:
        When the version was committed: the in-commit timestamp when the table records
        one, otherwise the commit file's modification time. A naive ``datetime`` in local
        time, as PySpark returns ``TIMESTAMP`` values.
    operation:
        The ``commitInfo`` operation (``"WRITE"``, ``"SET TBLPROPERTIES"``, ...), or
        ``None`` when the commit has no ``commitInfo``.
    min_reader_version, min_writer_version:
        The protocol versions.
    reader_features, writer_features:
        The table features the protocol lists, or ``None`` when the protocol has no such
        list (reader version below 3, writer version below 7).
    checkpoint:
        ``None`` when no checkpoint exists at this version, otherwise its kind:
        ``"classic"``, ``"multi-part"`` or ``"v2"``.
    compactions:
        File names of the ``<x>.<y>.compacted.json`` log compactions that cover this
        version (empty when there are none).
    require_checkpoint_protection_before_version:
        The table property ``delta.requireCheckpointProtectionBeforeVersion`` at this
        version, or ``None`` when it is not set.
    table:
        The table the statement acted on: for a redirected table, its destination
        (``delta.`<location>` `` or the destination table's name), else the table as named.

    Examples
    --------
    >>> history = LifecycleTable.for_path(spark, "/data/events").protocol_history()
    >>> [(v.version, v.min_reader_version, v.min_writer_version) for v in history]
    [(0, 1, 2), (1, 1, 2), (2, 3, 7)]
    >>> history[-1].reader_features
    ('deletionVectors',)
    """

    version: int
    timestamp: Optional[datetime]
    operation: Optional[str]
    min_reader_version: int
    min_writer_version: int
    reader_features: Optional[Tuple[str, ...]]
    writer_features: Optional[Tuple[str, ...]]
    checkpoint: Optional[str]
    compactions: Tuple[str, ...]
    require_checkpoint_protection_before_version: Optional[int]
    table: str

    @classmethod
    def from_row(cls, row: Row) -> "ProtocolVersion":
        """Build a :class:`ProtocolVersion` from one row of ``DESCRIBE PROTOCOL HISTORY``.

        Raises ``ValueError`` when the row lacks one of the statement's columns, which
        means the jar on the JVM does not match this Python package.

        Examples
        --------
        >>> rows = spark.sql("DESCRIBE PROTOCOL HISTORY delta.`/data/events`").collect()
        >>> ProtocolVersion.from_row(rows[0]).version
        0
        """
        fields = _fields(row, PROTOCOL_HISTORY_COLUMNS, "DESCRIBE PROTOCOL HISTORY")
        timestamp = fields["timestamp"]
        if timestamp is not None and not isinstance(timestamp, datetime):
            raise ValueError(f"timestamp is a {type(timestamp).__name__}, expected datetime")
        return cls(
            version=int(fields["version"]),
            timestamp=timestamp,
            operation=_optional_str(fields["operation"]),
            min_reader_version=int(fields["minReaderVersion"]),
            min_writer_version=int(fields["minWriterVersion"]),
            reader_features=_optional_names(fields["readerFeatures"]),
            writer_features=_optional_names(fields["writerFeatures"]),
            checkpoint=_optional_str(fields["checkpoint"]),
            compactions=_optional_names(fields["compactions"]) or (),
            require_checkpoint_protection_before_version=_optional_int(
                fields["requireCheckpointProtectionBeforeVersion"]
            ),
            table=str(fields["table"]),
        )


@dataclass(frozen=True)
class CompactionResult:
    """What ``ALTER TABLE … COMPACT LOG`` did: its one result row.

    Attributes
    ----------
    start_version, end_version:
        The range of commits compacted (or considered, when nothing was written).
    status:
        ``"written"``: this call wrote the file; ``"exists"``: a complete compaction of
        exactly this range was already there (another compactor won); ``"covered"``: a
        complete compaction of a wider range already stands in for this one, and nothing
        was written; ``"nothing-to-compact"``: fewer than two commits to compact, or commits
        that change no table state.
    file:
        The ``<x>.<y>.compacted.json`` file (for ``"covered"``, the wider one), or ``None``
        when there is none.
    commits:
        Commits in the range.
    actions:
        Actions written (0 unless ``status`` is ``"written"``).
    bytes_written:
        Size of the file written (0 unless ``status`` is ``"written"``).
    input_bytes:
        Total size of the commit files the compaction stands in for.
    table:
        The table the statement acted on: for a redirected table, its destination
        (``delta.`<location>` `` or the destination table's name), else the table as named.

    Examples
    --------
    >>> result = LifecycleTable.for_path(spark, "/data/events").compact_log()
    >>> result.status, result.start_version, result.end_version
    ('written', 101, 110)
    """

    start_version: int
    end_version: int
    status: CompactionStatus
    file: Optional[str]
    commits: int
    actions: int
    bytes_written: int
    input_bytes: int
    table: str

    @property
    def written(self) -> bool:
        """Whether this call wrote the compaction file."""
        return self.status == "written"

    @classmethod
    def from_row(cls, row: Row) -> "CompactionResult":
        """Build a :class:`CompactionResult` from the row ``COMPACT LOG`` returns.

        Raises ``ValueError`` when the row lacks one of the statement's columns or has a
        ``status`` outside :data:`CompactionStatus`, which means the jar on the JVM does not
        match this Python package.

        Examples
        --------
        >>> rows = spark.sql("ALTER TABLE delta.`/data/events` COMPACT LOG").collect()
        >>> CompactionResult.from_row(rows[0]).status
        'written'
        """
        statement = "ALTER TABLE … COMPACT LOG"
        fields = _fields(row, COMPACTION_COLUMNS, statement)
        status = _one_of(fields["status"], CompactionStatus, "status", statement)
        return cls(
            start_version=int(fields["startVersion"]),
            end_version=int(fields["endVersion"]),
            status=cast(CompactionStatus, status),
            file=_optional_str(fields["file"]),
            commits=int(fields["commits"]),
            actions=int(fields["actions"]),
            bytes_written=int(fields["bytesWritten"]),
            input_bytes=int(fields["inputBytes"]),
            table=str(fields["table"]),
        )


@dataclass(frozen=True)
class CleanedLogFile:
    """One expired log file that ``ALTER TABLE … CLEAN LOG`` deleted, would delete, or kept.

    Attributes
    ----------
    path:
        The file.
    kind:
        ``"commit"``, ``"checksum"``, ``"compaction"``, ``"checkpoint"`` or ``"sidecar"``
        (a V2 checkpoint's sidecar file that no remaining checkpoint names).
    version:
        Its version (a compaction's start version; for a sidecar, the expired checkpoint
        naming it, or the cut-off checkpoint when none does).
    size_in_bytes:
        Its size.
    action:
        ``"deleted"``, ``"to delete"`` (dry run) or ``"kept"``.
    reason:
        Why the file was kept (checkpoint protection), else ``None``.
    table:
        The table the statement acted on: for a redirected table, its destination
        (``delta.`<location>` `` or the destination table's name), else the table as named.

    Examples
    --------
    >>> plan = LifecycleTable.for_path(spark, "/data/events").clean_log(24, dry_run=True)
    >>> [(f.kind, f.version, f.action) for f in plan.files][:2]
    [('commit', 0, 'to delete'), ('commit', 1, 'to delete')]
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

    @classmethod
    def from_row(cls, row: Row) -> "CleanedLogFile":
        """Build a :class:`CleanedLogFile` from one row ``CLEAN LOG`` returns.

        Raises ``ValueError`` when the row lacks one of the statement's columns.

        Examples
        --------
        >>> rows = spark.sql("ALTER TABLE delta.`/data/events` CLEAN LOG DRY RUN").collect()
        >>> CleanedLogFile.from_row(rows[0]).kind
        'commit'
        """
        fields = _fields(row, CLEANUP_COLUMNS, "ALTER TABLE … CLEAN LOG")
        return cls(
            path=str(fields["path"]),
            kind=str(fields["kind"]),
            version=int(fields["version"]),
            size_in_bytes=int(fields["sizeInBytes"]),
            action=str(fields["action"]),
            reason=_optional_str(fields["reason"]),
            table=str(fields["table"]),
        )


@dataclass(frozen=True)
class CleanupResult:
    """What ``ALTER TABLE … CLEAN LOG`` did, or (``dry_run``) would do.

    Attributes
    ----------
    dry_run:
        ``True`` when nothing was deleted and ``files`` is the plan.
    files:
        Every expired log file, in deletion order (commits, checksums, compactions,
        checkpoints), including those checkpoint protection keeps.

    Examples
    --------
    >>> plan = LifecycleTable.for_path(spark, "/data/events").clean_log(168, dry_run=True)
    >>> len(plan.deleted), plan.bytes_deleted, [f.reason for f in plan.kept]
    (42, 81234, [])
    """

    dry_run: bool
    files: Tuple[CleanedLogFile, ...]

    @property
    def deleted(self) -> Tuple[CleanedLogFile, ...]:
        """The files deleted (in a dry run: the files that would be deleted)."""
        return tuple(f for f in self.files if f.deleted)

    @property
    def kept(self) -> Tuple[CleanedLogFile, ...]:
        """Expired files kept, each with its ``reason``."""
        return tuple(f for f in self.files if not f.deleted)

    @property
    def bytes_deleted(self) -> int:
        """Total size of :attr:`deleted`."""
        return sum(f.size_in_bytes for f in self.deleted)

    @classmethod
    def from_rows(cls, rows: Iterable[Row], dry_run: bool) -> "CleanupResult":
        """Build a :class:`CleanupResult` from the rows ``CLEAN LOG`` returns.

        ``dry_run`` says whether the statement had ``DRY RUN``; the rows alone cannot tell
        when there are none.

        Examples
        --------
        >>> sql = "ALTER TABLE delta.`/data/events` CLEAN LOG RETAIN 24 HOURS DRY RUN"
        >>> CleanupResult.from_rows(spark.sql(sql).collect(), dry_run=True).dry_run
        True
        """
        return cls(dry_run=dry_run, files=tuple(CleanedLogFile.from_row(r) for r in rows))


@dataclass(frozen=True)
class DropFeatureResult:
    """What ``ALTER TABLE … DROP FEATURE`` did or, with ``DRY RUN``, will do.

    Attributes
    ----------
    feature:
        The feature's name as the protocol spells it.
    mode:
        ``"fast"`` (checkpoint protection, no waiting) or ``"truncate-history"``.
    status:
        ``"dropped"``, or ``"planned"`` for a dry run.
    files_rewritten, bytes_rewritten:
        Data files rewritten to remove the feature's traces (planned: to be rewritten).
    commit_versions:
        The versions written during the drop, the downgrade commit last (planned: the
        versions it will write if no other writer commits meanwhile).
    checkpoint_versions:
        Checkpoints written: for the fast drop of a reader-writer feature, the three
        protected barrier checkpoints and the one on the downgraded version.
    protected_before:
        ``delta.requireCheckpointProtectionBeforeVersion`` afterwards, or ``None``.
    readable_without_feature_from:
        The first version a client that lacks the feature can read (every version, for a
        writer-only feature).
    history_truncated_before:
        For ``"truncate-history"``: the earliest version left in the log.
    steps:
        One line per step, in order.
    clients_gaining_access:
        Known clients (docs/compatibility.md) that gain read or write access by the drop,
        per way of dropping, e.g. ``"deltalake-1.x: read (fast), read+write
        (truncate-history)"``.
    clients_blocked_by_protection:
        For a fast drop: clients that could write the table without the feature but not with
        the ``checkpointProtection`` the fast drop adds; the ``TRUNCATE HISTORY`` drop
        avoids it.
    table:
        The table the statement acted on: for a redirected table, its destination
        (``delta.`<location>` `` or the destination table's name), else the table as named.

    Examples
    --------
    >>> plan = LifecycleTable.for_path(spark, "/data/events").drop_feature(
    ...     "deletionVectors", dry_run=True)
    >>> plan.status, plan.files_rewritten, plan.readable_without_feature_from
    ('planned', 100, 1012)
    """

    feature: str
    mode: DropMode
    status: DropStatus
    files_rewritten: int
    bytes_rewritten: int
    commit_versions: Tuple[int, ...]
    checkpoint_versions: Tuple[int, ...]
    protected_before: Optional[int]
    readable_without_feature_from: Optional[int]
    history_truncated_before: Optional[int]
    steps: Tuple[str, ...]
    clients_gaining_access: Tuple[str, ...]
    clients_blocked_by_protection: Tuple[str, ...]
    table: str

    @property
    def dropped(self) -> bool:
        """Whether the feature is gone from the protocol."""
        return self.status == "dropped"

    @classmethod
    def from_row(cls, row: Row) -> "DropFeatureResult":
        """Build a :class:`DropFeatureResult` from the row ``DROP FEATURE`` returns.

        Raises ``ValueError`` when the row lacks one of the statement's columns, or has a
        ``mode`` or ``status`` outside :data:`DropMode` or :data:`DropStatus`.

        Examples
        --------
        >>> rows = spark.sql(
        ...     "ALTER TABLE delta.`/data/events` DROP FEATURE deletionVectors DRY RUN").collect()
        >>> DropFeatureResult.from_row(rows[0]).mode
        'fast'
        """
        statement = "ALTER TABLE … DROP FEATURE"
        fields = _fields(row, DROP_FEATURE_COLUMNS, statement)
        mode = _one_of(fields["mode"], DropMode, "mode", statement)
        status = _one_of(fields["status"], DropStatus, "status", statement)
        return cls(
            feature=str(fields["feature"]),
            mode=cast(DropMode, mode),
            status=cast(DropStatus, status),
            files_rewritten=int(fields["filesRewritten"]),
            bytes_rewritten=int(fields["bytesRewritten"]),
            commit_versions=tuple(int(v) for v in fields["commitVersions"]),
            checkpoint_versions=tuple(int(v) for v in fields["checkpointVersions"]),
            protected_before=_optional_int(fields["protectedBefore"]),
            readable_without_feature_from=_optional_int(fields["readableWithoutFeatureFrom"]),
            history_truncated_before=_optional_int(fields["historyTruncatedBefore"]),
            steps=tuple(str(s) for s in fields["steps"]),
            clients_gaining_access=tuple(str(c) for c in fields["clientsGainingAccess"]),
            clients_blocked_by_protection=tuple(
                str(c) for c in fields["clientsBlockedByProtection"]
            ),
            table=str(fields["table"]),
        )


@dataclass(frozen=True)
class RedirectStatus:
    """A table's redirect, as ``SET REDIRECT``, ``UNSET REDIRECT`` or ``DESCRIBE REDIRECT``
    reports it.

    Attributes
    ----------
    table:
        The table as the statement named it.
    state:
        ``"NORMAL"`` (no redirect), ``"ENABLE-REDIRECT-IN-PROGRESS"``, ``"READY"`` or
        ``"DROP-REDIRECT-IN-PROGRESS"``.
    mode:
        ``"READER WRITER"`` or ``"WRITER ONLY"``; ``None`` when NORMAL.
    type:
        ``"Object Store"`` (a location) or ``"Session Catalog"`` (a catalog table).
    destination:
        The location or table name the redirect points to.
    destination_location:
        Where the destination's files are.
    no_redirect_rules:
        One ``"<app>: <operations>"`` line per NoRedirectRules entry.
    version:
        The table's latest version after the statement.
    files_copied, bytes_copied:
        What the statement copied (0 for DESCRIBE; smaller on a resumed run).
    commit_versions:
        Versions the statement committed on the table.
    steps:
        One line per step, in order.
    copy_mode:
        How the statement copied the files (:data:`CopyMode`); ``None`` when it copied
        nothing (``DESCRIBE``, a cancel).
    copy_mode_reason:
        Why the copy was not server-side, or why some files went through streams after the
        store refused to copy them itself; ``None`` otherwise.
    bytes_through_executors:
        Data bytes the executors read and wrote themselves: 0 when the store copied every
        file.

    Examples
    --------
    >>> status = LifecycleTable.for_path(spark, "/data/events").set_redirect("/new/events")
    >>> status.state, status.destination
    ('READY', 'file:/new/events')
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

    @classmethod
    def from_row(cls, row: Row) -> "RedirectStatus":
        """Build a :class:`RedirectStatus` from the row a redirect statement returns.

        Raises ``ValueError`` when the row lacks one of the statement's columns, or has a
        ``mode`` outside :data:`RedirectMode`.

        Examples
        --------
        >>> row = spark.sql("DESCRIBE REDIRECT delta.`/data/events`").collect()[0]
        >>> RedirectStatus.from_row(row).state
        'READY'
        """
        statement = "… REDIRECT"
        fields = _fields(row, REDIRECT_COLUMNS, statement)
        mode = fields["mode"]
        return cls(
            table=str(fields["table"]),
            state=str(fields["state"]),
            mode=None
            if mode is None
            else cast(RedirectMode, _one_of(mode, RedirectMode, "mode", statement)),
            type=_optional_str(fields["type"]),
            destination=_optional_str(fields["destination"]),
            destination_location=_optional_str(fields["destinationLocation"]),
            no_redirect_rules=tuple(str(r) for r in fields["noRedirectRules"]),
            version=int(fields["version"]),
            files_copied=int(fields["filesCopied"]),
            bytes_copied=int(fields["bytesCopied"]),
            commit_versions=tuple(int(v) for v in fields["commitVersions"]),
            steps=tuple(str(s) for s in fields["steps"]),
            copy_mode=_copy_mode(fields["copyMode"], statement),
            copy_mode_reason=_optional_str(fields["copyModeReason"]),
            bytes_through_executors=int(fields["bytesThroughExecutors"]),
        )


def _copy_mode(value: Any, statement: str) -> Optional[CopyMode]:
    return None if value is None else cast(CopyMode, _one_of(value, CopyMode, "copyMode", statement))


@dataclass(frozen=True)
class RedirectRefusal:
    """A check that would refuse a redirect statement: the error it would raise.

    Attributes
    ----------
    condition:
        The error condition, e.g. ``"DELTA_LIFECYCLE_REDIRECT_LOCATION_NOT_ALLOWED"``; the
        statement would raise the :mod:`delta_lifecycle.errors` class of that condition.
    message:
        The error's message, which ends with the fix.
    """

    condition: str
    message: str


@dataclass(frozen=True)
class RedirectPlan:
    """What ``SET REDIRECT`` or ``UNSET REDIRECT`` would do: the row of its ``DRY RUN``,
    which writes nothing in either location.

    Attributes
    ----------
    table:
        The table as the statement named it.
    state:
        Its redirect state now (``"NORMAL"`` when it has none).
    destination, destination_location:
        The redirect's destination (as given, and where its files are).
    version:
        The table's latest version now.
    files_to_copy, bytes_to_copy:
        Data files (and their bytes) the statement would copy: to the destination for
        ``SET``, back to the source for ``UNSET``.
    files_already_there, bytes_already_there:
        Data files already at the target with the source's size (an earlier run cut
        short): they would not be copied again.
    files_referenced_in_place:
        Files the log names outside the table's root: not copied, read where they are.
    files_gone:
        Files only older versions name that no longer exist (vacuumed): nothing to copy.
    log_files_to_copy, log_bytes_to_copy:
        Log files ``SET REDIRECT`` would copy (0 for ``UNSET``, which replays commits).
    copy_mode:
        How the files would be copied (:data:`CopyMode`); ``None`` when nothing would be.
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
    >>> plan = LifecycleTable.for_path(spark, "s3a://b/events").set_redirect(
    ...     "s3a://c/events", dry_run=True)
    >>> plan.files_to_copy, plan.copy_mode, plan.refusals
    (2000, 'server-side', ())
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

    @classmethod
    def from_row(cls, row: Row) -> "RedirectPlan":
        """Build a :class:`RedirectPlan` from the row of a redirect statement's ``DRY RUN``.

        Raises ``ValueError`` when the row lacks one of its columns.
        """
        statement = "… REDIRECT … DRY RUN"
        fields = _fields(row, REDIRECT_PLAN_COLUMNS, statement)
        return cls(
            table=str(fields["table"]),
            state=str(fields["state"]),
            destination=_optional_str(fields["destination"]),
            destination_location=_optional_str(fields["destinationLocation"]),
            version=int(fields["version"]),
            files_to_copy=int(fields["filesToCopy"]),
            bytes_to_copy=int(fields["bytesToCopy"]),
            files_already_there=int(fields["filesAlreadyThere"]),
            bytes_already_there=int(fields["bytesAlreadyThere"]),
            files_referenced_in_place=int(fields["filesReferencedInPlace"]),
            files_gone=int(fields["filesGone"]),
            log_files_to_copy=int(fields["logFilesToCopy"]),
            log_bytes_to_copy=int(fields["logBytesToCopy"]),
            copy_mode=_copy_mode(fields["copyMode"], statement),
            copy_mode_reason=_optional_str(fields["copyModeReason"]),
            tasks=int(fields["tasks"]),
            refusals=tuple(
                RedirectRefusal(str(r["condition"]), str(r["message"])) for r in fields["refusals"]
            ),
            steps=tuple(str(s) for s in fields["steps"]),
        )


COMPATIBILITY_COLUMNS: Tuple[str, ...] = (
    "client",
    "versions",
    "evidence",
    "canRead",
    "canWrite",
    "readBlockers",
    "writeBlockers",
    "unknownForRead",
    "unknownForWrite",
    "dropForRead",
    "dropForWrite",
    "notDroppable",
    "writeNeedsTruncateHistory",
    "sources",
    "table",
)


@dataclass(frozen=True)
class ClientCompatibility:
    """Whether one client (and version range) can read and write a table version: one row of
    ``DESCRIBE COMPATIBILITY``. Decided from the table's protocol and the capability file
    bundled in the jar (docs/compatibility.md).

    Attributes
    ----------
    client:
        The client's id in the capability file, e.g. ``"deltalake-1.x"``.
    versions:
        The version range the entry covers, e.g. ``"1.6.x"``.
    evidence:
        ``"verified"`` (a test runs the client here) or ``"documented"``.
    can_read, can_write:
        ``"yes"``, ``"no"`` or ``"unknown"`` (no source covers a feature the table has).
    read_blockers, write_blockers:
        The features (or ``minReaderVersion=N`` / ``minWriterVersion=N``) the client refuses.
    unknown_for_read, unknown_for_write:
        The table's features no source says the client handles or refuses.
    drop_for_read, drop_for_write:
        The features to drop, in this order, for the client to read (write) the table.
    not_droppable:
        Those of them ``DROP FEATURE`` cannot remove.
    write_needs_truncate_history:
        The client does not write tables with ``checkpointProtection``, which a fast drop
        adds: dropping for its writes must use ``TRUNCATE HISTORY``.
    sources:
        Where the entry comes from (URLs).
    table:
        The table the statement acted on: for a redirected table, its destination
        (``delta.`<location>` `` or the destination table's name), else the table as named.

    Examples
    --------
    >>> [c] = LifecycleTable.for_path(spark, "/data/events").compatibility("deltalake-0.25")
    >>> c.can_read, c.drop_for_read
    ('no', ('deletionVectors',))
    """

    client: str
    versions: str
    evidence: Evidence
    can_read: Access
    can_write: Access
    read_blockers: Tuple[str, ...]
    write_blockers: Tuple[str, ...]
    unknown_for_read: Tuple[str, ...]
    unknown_for_write: Tuple[str, ...]
    drop_for_read: Tuple[str, ...]
    drop_for_write: Tuple[str, ...]
    not_droppable: Tuple[str, ...]
    write_needs_truncate_history: bool
    sources: Tuple[str, ...]
    table: str

    @classmethod
    def from_row(cls, row: Row) -> "ClientCompatibility":
        """Build a :class:`ClientCompatibility` from a ``DESCRIBE COMPATIBILITY`` row.

        Raises ``ValueError`` when the row lacks a column or has a value outside
        :data:`Access` or :data:`Evidence`.

        Examples
        --------
        >>> rows = spark.sql("DESCRIBE COMPATIBILITY delta.`/data/events`").collect()
        >>> {ClientCompatibility.from_row(r).client for r in rows} >= {"deltalake-1.x"}
        True
        """
        statement = "DESCRIBE COMPATIBILITY"
        f = _fields(row, COMPATIBILITY_COLUMNS, statement)

        def names(column: str) -> Tuple[str, ...]:
            return tuple(str(n) for n in f[column])

        return cls(
            client=str(f["client"]),
            versions=str(f["versions"]),
            evidence=cast(Evidence, _one_of(f["evidence"], Evidence, "evidence", statement)),
            can_read=cast(Access, _one_of(f["canRead"], Access, "canRead", statement)),
            can_write=cast(Access, _one_of(f["canWrite"], Access, "canWrite", statement)),
            read_blockers=names("readBlockers"),
            write_blockers=names("writeBlockers"),
            unknown_for_read=names("unknownForRead"),
            unknown_for_write=names("unknownForWrite"),
            drop_for_read=names("dropForRead"),
            drop_for_write=names("dropForWrite"),
            not_droppable=names("notDroppable"),
            write_needs_truncate_history=bool(f["writeNeedsTruncateHistory"]),
            sources=names("sources"),
            table=str(f["table"]),
        )
