"""`LifecycleTable`: the Python entry point to delta-lifecycle's statements on one table."""

from __future__ import annotations

from typing import TYPE_CHECKING, List, Literal, Optional, Sequence, Tuple, Union, overload

from delta_lifecycle._typing import AnySparkSession
from delta_lifecycle.errors import translate_errors
from delta_lifecycle.progress import ProgressCallback, reporting_progress
from delta_lifecycle.results import (
    CheckpointResult,
    ClientCompatibility,
    CleanupResult,
    CompactionResult,
    DropFeatureResult,
    LogFileEntry,
    ProtocolVersion,
    RedirectPlan,
    RedirectStatus,
)

if TYPE_CHECKING:
    from pyspark.sql import Row

__all__ = ["LifecycleTable", "quote_path"]


def quote_path(path: str) -> str:
    """Return the SQL identifier of the Delta table at `path`: `` delta.`<path>` ``.

    Backticks inside the path are doubled, as Spark SQL's quoting rules require.

    Examples
    --------
    >>> quote_path("/data/events")
    'delta.`/data/events`'
    >>> quote_path("/data/odd`name")
    'delta.`/data/odd``name`'
    """
    if not path:
        raise ValueError("The table path is empty")
    return "delta.`" + path.replace("`", "``") + "`"


class LifecycleTable:
    """One Delta table, by path or by catalog name, and the delta-lifecycle statements on it.

    Every method runs this project's SQL statements through `spark.sql` and nothing else,
    so a `LifecycleTable` works the same on a classic session and on a Spark Connect
    session, as long as the session (or the Connect server) was configured with the
    extension (see [`configure_spark`][delta_lifecycle.configure_spark]). Errors raised by the extension
    surface as [`delta_lifecycle.errors`][delta_lifecycle.errors] exceptions.

    Examples
    --------
    >>> from delta_lifecycle import LifecycleTable
    >>> table = LifecycleTable.for_path(spark, "/data/events")
    >>> # or: table = LifecycleTable.for_name(spark, "sales.events")
    >>> for v in table.protocol_history():
    ...     print(v.version, v.min_reader_version, v.min_writer_version, v.writer_features)
    0 1 2 None
    1 1 2 None
    2 3 7 ('appendOnly', 'deletionVectors', 'invariants')
    3 3 7 ('appendOnly', 'deletionVectors', 'invariants')
    4 3 7 ('appendOnly', 'deletionVectors', 'invariants')
    5 3 7 ('appendOnly', 'deletionVectors', 'invariants')
    """

    def __init__(self, spark: AnySparkSession, identifier: str) -> None:
        """Use [`for_path`][delta_lifecycle.tables.LifecycleTable.for_path] or [`for_name`][delta_lifecycle.tables.LifecycleTable.for_name] instead.

        Parameters
        ----------
        spark:
            the session that runs the statements.
        identifier:
            the table as it appears in SQL, already quoted where needed.
        """
        self._spark = spark
        self._identifier = identifier

    @classmethod
    def for_path(cls, spark: AnySparkSession, path: str) -> LifecycleTable:
        """Return the table stored at `path` (any Hadoop path: `/dir`, `file:/dir`,
        `s3a://bucket/dir`, ...).

        Nothing is read until a method runs, so an invalid path fails there, with
        `NotADeltaTableError`.

        Parameters
        ----------
        spark:
            a session configured with [`configure_spark`][delta_lifecycle.configure_spark], classic or
            Spark Connect.
        path:
            the table's root directory (the parent of `_delta_log`).

        Returns
        -------
        LifecycleTable
            The table.

        Examples
        --------
        >>> table = LifecycleTable.for_path(spark, "/data/events")
        >>> table
        LifecycleTable(delta.`/data/events`)
        """
        return cls(spark, quote_path(path))

    @classmethod
    def for_name(cls, spark: AnySparkSession, name: str) -> LifecycleTable:
        """Return the catalog table called `name`.

        `name` is a SQL multipart identifier (`events`, `sales.events`,
        `spark_catalog.sales.events`) and is used as written, so quote parts that need
        it with backticks yourself (`` sales.`odd-name` ``). Unknown tables fail when a method
        runs, with `TableNotFoundError`; non-Delta tables with
        `NotDeltaProviderError`.

        Parameters
        ----------
        spark:
            a session configured with [`configure_spark`][delta_lifecycle.configure_spark], classic or
            Spark Connect.
        name:
            the table's name in the session catalog.

        Returns
        -------
        LifecycleTable
            The table.

        Examples
        --------
        >>> table = LifecycleTable.for_name(spark, "sales.events")
        >>> table.identifier
        'sales.events'
        """
        if not name.strip():
            raise ValueError("The table name is empty")
        return cls(spark, name.strip())

    @property
    def identifier(self) -> str:
        """The table as it appears in the SQL statements, e.g. `` delta.`/data/events` ``."""
        return self._identifier

    def _rows(self, statement: str) -> List["Row"]:
        """Runs a statement that returns at once, its errors as this package's."""
        with translate_errors():
            return self._spark.sql(statement).collect()

    def _run_reporting(
        self, statement: str, on_progress: Optional[ProgressCallback]
    ) -> List["Row"]:
        """Runs a long statement, reporting its jobs' progress while it runs."""
        with translate_errors(), reporting_progress(self._spark, on_progress):
            return self._spark.sql(statement).collect()

    def protocol_history(self) -> List[ProtocolVersion]:
        """Return the protocol in force at every retained version, oldest first.

        Runs `DESCRIBE PROTOCOL HISTORY <table>`. The history starts at version 0 when the
        log still holds every commit, otherwise at the oldest checkpoint that the commits
        after it continue without a gap.

        Returns
        -------
        List[ProtocolVersion]
            One entry per retained version.

        Raises
        ------
        delta_lifecycle.errors.DeltaLifecycleError
            the table cannot be resolved or its log cannot be read (see the subclasses in
            [`delta_lifecycle.errors`][delta_lifecycle.errors]).

        Examples
        --------
        >>> history = LifecycleTable.for_path(spark, "/data/events").protocol_history()
        >>> upgrades = [v.version for prev, v in zip(history, history[1:])
        ...             if (v.min_reader_version, v.min_writer_version, v.writer_features)
        ...             != (prev.min_reader_version, prev.min_writer_version,
        ...                 prev.writer_features)]
        >>> upgrades
        [2]
        """
        rows = self._rows(f"DESCRIBE PROTOCOL HISTORY {self._identifier}")
        return [ProtocolVersion.from_row(row) for row in rows]

    def log_files(self) -> List[LogFileEntry]:
        """Return every file of the table's `_delta_log`, in version order.

        Runs `DESCRIBE LOG FILES <table>`: one listing of the log folder, as
        `DESCRIBE HISTORY` lists it, and nothing read from the files. It shows what
        `compact_log` and `clean_log` work on: commits, checkpoints, compactions,
        checksums, and files in the folder that are no part of the log.

        Returns
        -------
        List[LogFileEntry]
            One entry per file.

        Raises
        ------
        delta_lifecycle.errors.DeltaLifecycleError
            the table cannot be resolved or is not a Delta table.

        Examples
        --------
        >>> files = LifecycleTable.for_path(spark, "/data/events").log_files()
        >>> sorted({f.kind for f in files})
        ['checkpoint', 'checksum', 'commit', 'last_checkpoint']
        >>> sum(f.size for f in files if f.kind == "checkpoint") > 0
        True
        """
        rows = self._rows(f"DESCRIBE LOG FILES {self._identifier}")
        return [LogFileEntry.from_row(row) for row in rows]

    def compatibility(
        self, client: Optional[str] = None, version: Optional[int] = None
    ) -> List[ClientCompatibility]:
        """Say which known clients can read and write the table, and what to drop for the
        others.

        Runs `DESCRIBE COMPATIBILITY <table> [VERSION AS OF v] [FOR '<client>']`. Only the
        protocol is read, never the data files. Entries come from the capability file in the
        jar; a feature no source covers makes the answer `"unknown"`, never a guess.

        Parameters
        ----------
        client:
            an id (`"deltalake-1.x"`) or a family (`"delta-spark"`: every version range);
            `None` for every known client.
        version:
            the table version to judge; `None` for the latest.

        Returns
        -------
        List[ClientCompatibility]
            One entry per client and version range.

        Raises
        ------
        ValueError
            an empty `client` or a negative `version`; raised before any SQL runs.
        delta_lifecycle.errors.UnknownClientError
            the client is not in the capability file (the message lists the known ones).

        Examples
        --------
        >>> table = LifecycleTable.for_path(spark, "/data/events")
        >>> [(c.client, c.can_read) for c in table.compatibility("deltalake")]
        [('deltalake-0.25', 'no'), ('deltalake-1.x', 'no')]
        """
        statement = f"DESCRIBE COMPATIBILITY {self._identifier}"
        if version is not None:
            statement += f" VERSION AS OF {_non_negative(version, 'version')}"
        if client is not None:
            statement += f" FOR {_string_literal(client, 'client')}"
        return [ClientCompatibility.from_row(row) for row in self._rows(statement)]

    def drop_features_for(
        self,
        client: str,
        for_writes: bool = False,
        truncate_history: bool = False,
        dry_run: bool = False,
        on_progress: Optional[ProgressCallback] = None,
    ) -> List[DropFeatureResult]:
        """Drop every feature that keeps `client` from reading (or writing) the table.

        Runs `ALTER TABLE <table> DROP FEATURES FOR CLIENT '<client>' [FOR WRITES]
        [TRUNCATE HISTORY] [DRY RUN]`: the features [`compatibility`][delta_lifecycle.tables.LifecycleTable.compatibility] lists in
        `drop_for_read` (`drop_for_write`), each with DROP FEATURE, features that depend
        on another first. Everything is checked before the first drop; a re-run after a crash
        skips the features already gone.

        Parameters
        ----------
        client:
            one id of the capability file, e.g. `"deltalake-1.x"`.
        for_writes:
            make the table writable too (drops `checkpointProtection` when the client does
            not know it; that needs `truncate_history`).
        truncate_history:
            drop reader-writer features by truncating history instead of the fast drop.
        dry_run:
            change nothing and return the plans.
        on_progress:
            called with the statement's progress, see [`delta_lifecycle.progress`][delta_lifecycle.progress].

        Returns
        -------
        List[DropFeatureResult]
            One result per feature, in drop order (empty when nothing blocks the client).

        Raises
        ------
        delta_lifecycle.errors.UnknownClientError
            the client is not in the capability file.
        delta_lifecycle.errors.ClientNeedsUndroppableError
            a blocking feature cannot be dropped; nothing was changed.
        delta_lifecycle.errors.InvalidArgumentError
            a family rather than one id, or writes for a client that needs
            `truncate_history`.
        delta_lifecycle.errors.DropFeatureWaitError
            a history-truncating drop must wait; run again at the time it says.

        Examples
        --------
        >>> table = LifecycleTable.for_path(spark, "/data/events")
        >>> [r.feature for r in table.drop_features_for("deltalake-0.25", dry_run=True)]
        ['deletionVectors']
        >>> done = table.drop_features_for("deltalake-0.25")
        >>> [(r.feature, r.status) for r in done]
        [('deletionVectors', 'dropped')]
        >>> [c.can_read for c in table.compatibility("deltalake-0.25")]
        ['yes']
        """
        statement = (
            f"ALTER TABLE {self._identifier} DROP FEATURES FOR CLIENT "
            f"{_string_literal(client, 'client')}"
        )
        if for_writes:
            statement += " FOR WRITES"
        return self._drops(statement, truncate_history, dry_run, on_progress)

    def _drops(
        self,
        statement: str,
        truncate_history: bool,
        dry_run: bool,
        on_progress: Optional[ProgressCallback],
    ) -> List[DropFeatureResult]:
        # The options DROP FEATURE and DROP FEATURES FOR CLIENT share, then one row per feature.
        if truncate_history:
            statement += " TRUNCATE HISTORY"
        if dry_run:
            statement += " DRY RUN"
        rows = self._run_reporting(statement, on_progress)
        return [DropFeatureResult.from_row(row) for row in rows]

    def compact_log(
        self, start: Optional[int] = None, end: Optional[int] = None
    ) -> CompactionResult:
        """Write one log compaction, `_delta_log/<start>.<end>.compacted.json`.

        Runs `ALTER TABLE <table> COMPACT LOG [FROM VERSION start TO VERSION end]`. The
        file holds the reconciled actions of commits `start` to `end`; delta-spark and
        this project read it instead of those commits, other clients ignore it. Without a
        range, the commits since the last checkpoint or compaction are compacted. The file
        is written once (put-if-absent) and never overwritten.

        Parameters
        ----------
        start:
            first version of the range; give both `start` and `end` or neither.
        end:
            last version of the range (greater than `start`).

        Returns
        -------
        CompactionResult
            What was written.

        Raises
        ------
        ValueError
            only one of `start` and `end`, or a negative or non-integer version; raised
            before any SQL runs.
        delta_lifecycle.errors.InvalidCompactionRangeError
            a range of fewer than two versions, past the latest version, or over commits no
            longer in the log.
        delta_lifecycle.errors.CompactionConflictError
            a damaged file of that name exists, or the range partly overlaps an existing
            compaction.
        delta_lifecycle.errors.UnsupportedProtocolError
            the range uses a feature this client does not support.
        delta_lifecycle.errors.CoordinatedTableError
            the table's commits go through a catalog or a commit coordinator.
        delta_lifecycle.errors.DeltaLifecycleError
            the table cannot be resolved or its log cannot be read (see the subclasses in
            [`delta_lifecycle.errors`][delta_lifecycle.errors]).

        Examples
        --------
        >>> table = LifecycleTable.for_path(spark, "/data/events")
        >>> table.compact_log().file         # the commits since the last checkpoint
        'file:/data/events/_delta_log/00000000000000000004.00000000000000000005.compacted.json'
        >>> table.compact_log(1, 2).status   # an explicit range
        'written'
        """
        if (start is None) != (end is None):
            raise ValueError("Give both start and end, or neither")
        statement = f"ALTER TABLE {self._identifier} COMPACT LOG"
        if start is not None and end is not None:
            statement += f" FROM VERSION {_non_negative(start, 'start')}"
            statement += f" TO VERSION {_non_negative(end, 'end')}"
        return CompactionResult.from_row(self._rows(statement)[0])

    def checkpoint(
        self, dry_run: bool = False, on_progress: Optional[ProgressCallback] = None
    ) -> CheckpointResult:
        """Write a checkpoint of the latest version at the cost of what changed since the last.

        Runs `ALTER TABLE <table> CHECKPOINT [DRY RUN]`. The new checkpoint is written from
        the newest one before it and the commits in between: a V2 checkpoint gets a new
        manifest over the sidecars those commits did not touch plus one new sidecar; a
        classic one copies the row groups they did not touch byte for byte and appends the
        rows that changed. Every reader (delta-spark, delta-rs, Delta Kernel) reads it as it
        reads a full checkpoint. Where it cannot be written that way (no checkpoint yet, a
        schema change since, a long tail) delta-spark writes it in full, and `reason` says
        why.

        Parameters
        ----------
        dry_run:
            report what would be reused, rewritten and written, and write nothing.
        on_progress:
            called with the statement's progress (its steps and Spark jobs).

        Returns
        -------
        CheckpointResult
            What was (or would be) reused, rewritten and written.

        Raises
        ------
        delta_lifecycle.errors.CoordinatedTableError
            the table's commits go through a commit coordinator this project cannot write.
        delta_lifecycle.errors.DeltaLifecycleError
            the table cannot be resolved or its log cannot be read (see the subclasses in
            [`delta_lifecycle.errors`][delta_lifecycle.errors]).

        Examples
        --------
        >>> table = LifecycleTable.for_path(spark, "/data/events")
        >>> table.checkpoint(dry_run=True).status
        'would write'
        >>> table.checkpoint().status
        'written'
        """
        statement = f"ALTER TABLE {self._identifier} CHECKPOINT"
        if dry_run:
            statement += " DRY RUN"
        return CheckpointResult.from_row(self._run_reporting(statement, on_progress)[0])

    def clean_log(
        self,
        retain_hours: Optional[int] = None,
        dry_run: bool = False,
        on_progress: Optional[ProgressCallback] = None,
    ) -> CleanupResult:
        """Delete expired log files, under the Checkpoint Protection RFC's rules.

        Runs `ALTER TABLE <table> CLEAN LOG [RETAIN n HOURS] [DRY RUN]`: commits, version
        checksums and checkpoints before the newest checkpoint older than the retention
        go, with compactions that start at or before it. On tables with
        `checkpointProtection`, checkpoints before
        `delta.requireCheckpointProtectionBeforeVersion` stay unless the cleanup reaches
        that version in one pass; the kept files come back with a reason.

        Parameters
        ----------
        retain_hours:
            keep this many hours of history; `None` uses the table's
            `delta.logRetentionDuration` (30 days by default).
        dry_run:
            return the plan and delete nothing.
        on_progress:
            called with the statement's progress, see [`delta_lifecycle.progress`][delta_lifecycle.progress].

        Returns
        -------
        CleanupResult
            Every expired file and what happened to it.

        Raises
        ------
        ValueError
            a negative or non-integer `retain_hours`; raised before any SQL runs.
        delta_lifecycle.errors.InvalidArgumentError
            the table's `delta.logRetentionDuration` is negative.
        delta_lifecycle.errors.CoordinatedTableError
            the table's commits go through a catalog or a commit coordinator (refused with
            `dry_run` too).
        delta_lifecycle.errors.DeltaLifecycleError
            the table cannot be resolved or its log cannot be read (see the subclasses in
            [`delta_lifecycle.errors`][delta_lifecycle.errors]).

        Examples
        --------
        >>> table = LifecycleTable.for_name(spark, "sales.events")
        >>> plan = table.clean_log(retain_hours=168, dry_run=True)
        >>> print(len(plan.deleted), "files,", plan.bytes_deleted, "bytes")
        6 files, ... bytes
        >>> done = table.clean_log(retain_hours=168)
        >>> [f.version for f in done.deleted if f.kind == "commit"]
        [0, 1, 2]
        """
        statement = f"ALTER TABLE {self._identifier} CLEAN LOG"
        if retain_hours is not None:
            statement += f" RETAIN {_non_negative(retain_hours, 'retain_hours')} HOURS"
        if dry_run:
            statement += " DRY RUN"
        rows = self._run_reporting(statement, on_progress)
        return CleanupResult.from_rows(rows, dry_run=dry_run)

    def drop_feature(
        self,
        feature: str,
        truncate_history: bool = False,
        dry_run: bool = False,
        on_progress: Optional[ProgressCallback] = None,
    ) -> DropFeatureResult:
        """Remove a table feature from the table's protocol.

        Runs `ALTER TABLE <table> DROP FEATURE <feature> [TRUNCATE HISTORY] [DRY RUN]`.
        By default this is the fast drop: delta-spark disables the feature and rewrites
        what still uses it, three protected checkpoints form a barrier, and one commit
        removes the feature, adds `checkpointProtection` and records the boundary. Clients
        without the feature read every version from the boundary on; nothing is truncated
        and nobody waits.

        With `truncate_history=True` it is the legacy two-run flow: the first run
        prepares and raises `DropFeatureWaitError` saying
        when to run again; the run after that deletes the history older than
        `delta.dropFeatureTruncateHistory.retentionDuration` and downgrades.
        `checkpointProtection` itself can only be dropped this way.

        Parameters
        ----------
        feature:
            the feature's protocol name, e.g. `"deletionVectors"`, `"typeWidening"`,
            `"v2Checkpoint"`.
        truncate_history:
            use the history-truncating flow.
        dry_run:
            change nothing and return the plan.
        on_progress:
            called with the statement's progress, see [`delta_lifecycle.progress`][delta_lifecycle.progress].

        Returns
        -------
        DropFeatureResult
            What the drop did, or with `dry_run` what it will do.

        Raises
        ------
        ValueError
            an empty or non-string `feature`; raised before any SQL runs.
        delta_lifecycle.errors.UnknownFeatureError
            not a droppable feature.
        delta_lifecycle.errors.FeatureNotPresentError
            the protocol lacks it.
        delta_lifecycle.errors.DependentFeatureError
            another feature needs it.
        delta_lifecycle.errors.DropFeatureWaitError
            history truncation must wait.
        delta_lifecycle.errors.CoordinatedTableError
            the table's commits go through a catalog or a commit coordinator (refused with
            `dry_run` too).

        Examples
        --------
        >>> table = LifecycleTable.for_name(spark, "sales.events")
        >>> plan = table.drop_feature("deletionVectors", dry_run=True)
        >>> print(plan.files_rewritten, plan.commit_versions)
        1 (6, 7, 8, 9, 10, 11, 12)
        >>> done = table.drop_feature("deletionVectors")
        >>> print(done.readable_without_feature_from)
        12
        """
        statement = f"ALTER TABLE {self._identifier} DROP FEATURE {_feature_literal(feature)}"
        return self._drops(statement, truncate_history, dry_run, on_progress)[0]

    @overload
    def set_redirect(
        self,
        location: Optional[str] = ...,
        mode: str = ...,
        no_redirect_rules: Sequence[Tuple[str, Sequence[str]]] = ...,
        table: Optional[str] = ...,
        on_progress: Optional[ProgressCallback] = ...,
        dry_run: Literal[False] = ...,
        table_location: Optional[str] = ...,
    ) -> RedirectStatus: ...

    @overload
    def set_redirect(
        self,
        location: Optional[str] = ...,
        mode: str = ...,
        no_redirect_rules: Sequence[Tuple[str, Sequence[str]]] = ...,
        table: Optional[str] = ...,
        on_progress: Optional[ProgressCallback] = ...,
        *,
        dry_run: Literal[True],
        table_location: Optional[str] = ...,
    ) -> RedirectPlan: ...

    @overload
    def set_redirect(
        self,
        location: Optional[str] = ...,
        mode: str = ...,
        no_redirect_rules: Sequence[Tuple[str, Sequence[str]]] = ...,
        table: Optional[str] = ...,
        on_progress: Optional[ProgressCallback] = ...,
        *,
        dry_run: bool,
        table_location: Optional[str] = ...,
    ) -> Union[RedirectStatus, RedirectPlan]: ...

    def set_redirect(
        self,
        location: Optional[str] = None,
        mode: str = "reader_writer",
        no_redirect_rules: Sequence[Tuple[str, Sequence[str]]] = (),
        table: Optional[str] = None,
        on_progress: Optional[ProgressCallback] = None,
        dry_run: bool = False,
        table_location: Optional[str] = None,
    ) -> Union[RedirectStatus, RedirectPlan]:
        """Redirect the table to a new location, or to a new table in the session catalog or
        in Unity Catalog.

        Runs `ALTER TABLE <table> SET REDIRECT [READER WRITER | WRITER ONLY] TO '<location>'
        | TABLE <name> [NO REDIRECT RULES (...)]`: the table's data files are copied while
        it still accepts writes; then it enters `ENABLE-REDIRECT-IN-PROGRESS` (writes are
        refused, reads continue), the files committed since and the log are copied, all
        copies run as Spark jobs and are verified, and it becomes `READY`: from then on
        every read and write by name or path in a session with this extension goes to the
        destination. Re-running the same call after a crash resumes the copy.

        Between two `s3a://` locations of the same store the store copies each file
        itself (no data bytes through the executors); elsewhere the executors copy them.
        `dry_run=True` says what the statement would do and writes nothing.

        Parameters
        ----------
        location:
            the destination location (any Hadoop file system URI); it must be absent or
            empty. Give exactly one of `location` and `table`.
        mode:
            `"reader_writer"` (legacy clients can neither read nor write the source) or
            `"writer_only"` (they can still read it, as it was).
        no_redirect_rules:
            `(application name, operations)` pairs: sessions of that application keep
            reading (and running those operations on) the source.
        table:
            a table to create as the destination: of the session catalog (`db.t`), or of a
            Unity Catalog catalog of the session (`catalog.schema.t`, registered there as an
            external table), at its catalog's default location.
        on_progress:
            called with the statement's progress, see [`delta_lifecycle.progress`][delta_lifecycle.progress].
        dry_run:
            run `… DRY RUN`: return what the statement would copy, how, and which checks
            would refuse it, writing nothing in either location.
        table_location:
            with `table`: where the new table's files go, instead of its catalog's default
            location (`… TO TABLE <name> LOCATION '<table_location>'`).

        Returns
        -------
        Union[RedirectStatus, RedirectPlan]
            The redirect's status once the table is `READY`; with `dry_run`, the plan (the
            checks that would refuse the redirect are in its `refusals`, not raised).

        Raises
        ------
        ValueError
            bad arguments; raised before any SQL runs.
        delta_lifecycle.errors.RedirectDestinationNotEmptyError
            the target has data.
        delta_lifecycle.errors.RedirectLocationNotAllowedError
            outside the allowed prefixes.
        delta_lifecycle.errors.RedirectStateError
            already redirected elsewhere.
        delta_lifecycle.errors.CoordinatedTableError
            the table's commits, or the destination's, go through a catalog or a commit
            coordinator.

        Examples
        --------
        >>> table = LifecycleTable.for_name(spark, "sales.events")
        >>> plan = table.set_redirect("/new/events", dry_run=True)
        >>> print(plan.files_to_copy, plan.copy_mode, plan.refusals)
        5 local ()
        >>> status = table.set_redirect("/new/events")
        >>> print(status.state, status.files_copied)
        READY 19
        """
        if (location is None) == (table is None):
            raise ValueError("give exactly one of location and table")
        if table_location is not None and table is None:
            raise ValueError("table_location goes with table")
        modes = {"reader_writer": "READER WRITER", "writer_only": "WRITER ONLY"}
        if mode not in modes:
            raise ValueError(f"mode must be one of {sorted(modes)}, got {mode!r}")
        target = f"TO {_string_literal(location, 'location')}" if location is not None else \
            f"TO TABLE {_table_name(table)}"
        if table_location is not None:
            target += f" LOCATION {_string_literal(table_location, 'table location')}"
        statement = f"ALTER TABLE {self._identifier} SET REDIRECT {modes[mode]} {target}"
        if no_redirect_rules:
            rules = []
            for app, operations in no_redirect_rules:
                ops = ", ".join(_operation(op) for op in operations)
                rules.append(f"{_string_literal(app, 'application name')} ALLOW ({ops})")
            statement += f" NO REDIRECT RULES ({', '.join(rules)})"
        return self._redirect(statement, dry_run, on_progress)

    @overload
    def unset_redirect(
        self, on_progress: Optional[ProgressCallback] = ..., dry_run: Literal[False] = ...
    ) -> RedirectStatus: ...

    @overload
    def unset_redirect(
        self, on_progress: Optional[ProgressCallback] = ..., *, dry_run: Literal[True]
    ) -> RedirectPlan: ...

    @overload
    def unset_redirect(
        self, on_progress: Optional[ProgressCallback] = ..., *, dry_run: bool
    ) -> Union[RedirectStatus, RedirectPlan]: ...

    def unset_redirect(
        self, on_progress: Optional[ProgressCallback] = None, dry_run: bool = False
    ) -> Union[RedirectStatus, RedirectPlan]:
        """Remove the table's redirect and bring its data home.

        Runs `ALTER TABLE <table> UNSET REDIRECT`. From `READY`: source and destination
        enter `DROP-REDIRECT-IN-PROGRESS` (writes refused), everything written at the
        destination is copied back and its commits replayed on the source, and the source
        returns to `NORMAL`, readable by every client again. From
        `ENABLE-REDIRECT-IN-PROGRESS` it cancels the unfinished redirect. Re-running after
        a crash continues where it stopped.

        Parameters
        ----------
        on_progress:
            called with the statement's progress, see [`delta_lifecycle.progress`][delta_lifecycle.progress].
        dry_run:
            run `… DRY RUN`: return a [`RedirectPlan`][delta_lifecycle.results.RedirectPlan] of
            what would be copied back and replayed, writing nothing in either location.

        Returns
        -------
        Union[RedirectStatus, RedirectPlan]
            The table's status once it is `NORMAL` again; with `dry_run`, the plan.

        Raises
        ------
        delta_lifecycle.errors.RedirectStateError
            the table has no redirect.
        delta_lifecycle.errors.CoordinatedTableError
            the table's commits, or the destination's, go through a catalog or a commit
            coordinator.

        Examples
        --------
        >>> LifecycleTable.for_path(spark, "/data/events").unset_redirect().state
        'NORMAL'
        """
        statement = f"ALTER TABLE {self._identifier} UNSET REDIRECT"
        return self._redirect(statement, dry_run, on_progress)

    def _redirect(
        self, statement: str, dry_run: bool, on_progress: Optional[ProgressCallback]
    ) -> Union[RedirectStatus, RedirectPlan]:
        # SET and UNSET REDIRECT: the status the statement reports, or its DRY RUN's plan.
        if dry_run:
            plan = self._run_reporting(statement + " DRY RUN", on_progress)
            return RedirectPlan.from_row(plan[0])
        return RedirectStatus.from_row(self._run_reporting(statement, on_progress)[0])

    def redirect_status(self) -> Optional[RedirectStatus]:
        """The table's redirect as its log records it, or `None` when it has none.

        Runs `DESCRIBE REDIRECT <table>`; reads only the table's log (it works on
        tables delta-spark cannot open).

        Examples
        --------
        >>> status = LifecycleTable.for_path(spark, "/data/events").redirect_status()
        >>> print(status.state if status else "not redirected")
        not redirected
        """
        status = RedirectStatus.from_row(self._rows(f"DESCRIBE REDIRECT {self._identifier}")[0])
        return status if status.redirected else None

    def __repr__(self) -> str:
        return f"LifecycleTable({self._identifier})"


def _feature_literal(feature: str) -> str:
    # A SQL string literal, so names with '-' and any stray quote reach the JVM intact.
    return _string_literal(feature, "feature")


def _non_negative(value: int, name: str) -> int:
    # bool is an int subclass; True would otherwise become "1".
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} must be an int, got {type(value).__name__}")
    if value < 0:
        raise ValueError(f"{name} must not be negative, got {value}")
    return value


def _string_literal(value: Optional[str], name: str) -> str:
    # Backslashes first, then quotes: the literal must reach the JVM exactly as given.
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{name} must be a non-empty string, got {value!r}")
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _table_name(name: Optional[str]) -> str:
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"table must be a non-empty string, got {name!r}")
    return ".".join("`" + part.replace("`", "``") + "`" for part in name.split("."))


def _operation(op: str) -> str:
    if not isinstance(op, str) or not op.isidentifier():
        raise ValueError(f"an operation must be a plain word such as 'DELETE', got {op!r}")
    return op.upper()
