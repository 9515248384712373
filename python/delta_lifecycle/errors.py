"""Typed exceptions for the errors the delta-lifecycle JVM extension raises.

The JVM side raises `org.apache.spark.sql.AnalysisException` subclasses whose error
condition starts with `DELTA_LIFECYCLE_`. PySpark surfaces them as
`pyspark.errors.AnalysisException` (classic sessions) or
`pyspark.errors.exceptions.connect.AnalysisException` (Spark Connect); both expose
`getCondition()`. `translate_errors` turns them into the classes below, keeping the
original PySpark exception as `__cause__`. Every other exception passes through unchanged,
so Spark's own errors (a `ParseException` for a malformed statement, for example) keep
their PySpark types.

Examples
--------
>>> from delta_lifecycle import LifecycleTable
>>> from delta_lifecycle.errors import NotADeltaTableError
>>> try:
...     LifecycleTable.for_path(spark, "/tmp/not-a-table").protocol_history()
... except NotADeltaTableError as e:
...     print(e.condition)
DELTA_LIFECYCLE_NOT_A_DELTA_TABLE
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, ClassVar, Dict, Iterator, Optional, Type

from pyspark.errors import PySparkException

# The typed classes join ``__all__`` at the end of the module, from the registry their
# definitions fill.
__all__ = [
    "CONDITION_PREFIX",
    "DeltaLifecycleError",
    "UnsupportedSparkLineError",
    "convert_exception",
    "translate_errors",
]

#: Every error condition raised by the JVM extension starts with this prefix.
CONDITION_PREFIX = "DELTA_LIFECYCLE_"


class DeltaLifecycleError(Exception):
    """Base class of every error raised by delta-lifecycle.

    A condition that this version of the Python package does not know yet (a newer jar)
    is raised as a plain `DeltaLifecycleError` carrying that condition.

    Each subclass in this module declares the one condition it stands for as `CONDITION`;
    defining it registers the class for `convert_exception` and `__all__`, so the
    class is the only place that pairs a condition with its type. The
    [Errors page][every-condition] lists every class with its condition.

    Attributes
    ----------
    condition : str
        The JVM error condition, e.g. `"DELTA_LIFECYCLE_NOT_A_DELTA_TABLE"`.
    message : str
        What went wrong and what to do about it, without the `[CONDITION]` prefix.
    """

    #: The condition a subclass stands for; the base class has none of its own.
    CONDITION: ClassVar[str] = ""

    condition: str
    message: str

    def __init__(self, message: str, condition: Optional[str] = None) -> None:
        resolved = condition if condition is not None else self.CONDITION
        if not resolved:
            raise ValueError(f"{type(self).__name__} needs an error condition")
        super().__init__(f"[{resolved}] {message}")
        self.condition = resolved
        self.message = message

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.__module__ != __name__:  # a user's own subclass stays out of the registry
            return
        condition = cls.__dict__.get("CONDITION")
        if not isinstance(condition, str) or not condition.startswith(CONDITION_PREFIX):
            raise TypeError(f"{cls.__name__} must declare CONDITION = '{CONDITION_PREFIX}...'")
        if condition in _BY_CONDITION:
            taken = _BY_CONDITION[condition].__name__
            raise TypeError(f"{cls.__name__}: {condition} is already {taken}'s condition")
        _BY_CONDITION[condition] = cls


#: The typed class of each condition, filled as the classes below are defined.
_BY_CONDITION: Dict[str, Type[DeltaLifecycleError]] = {}


class NotADeltaTableError(DeltaLifecycleError):
    """The path has no `_delta_log` directory, or the log holds no commits."""

    CONDITION = "DELTA_LIFECYCLE_NOT_A_DELTA_TABLE"


class TableNotFoundError(DeltaLifecycleError):
    """The catalog has no table of that name."""

    CONDITION = "DELTA_LIFECYCLE_TABLE_NOT_FOUND"


class NotDeltaProviderError(DeltaLifecycleError):
    """The catalog table exists but is not a Delta table (e.g. `USING parquet`)."""

    CONDITION = "DELTA_LIFECYCLE_NOT_DELTA_PROVIDER"


class VersionNotFoundError(DeltaLifecycleError):
    """The requested version is outside the versions the log can reconstruct."""

    CONDITION = "DELTA_LIFECYCLE_VERSION_NOT_FOUND"


class NonContiguousVersionsError(DeltaLifecycleError):
    """Commit files are missing in the middle of the log."""

    CONDITION = "DELTA_LIFECYCLE_NON_CONTIGUOUS_VERSIONS"


class UnreadableCheckpointError(DeltaLifecycleError):
    """A checkpoint cannot be read and nothing in the log can replace it."""

    CONDITION = "DELTA_LIFECYCLE_UNREADABLE_CHECKPOINT"


class InvalidProtocolError(DeltaLifecycleError):
    """The log holds no protocol, or a protocol that breaks the Delta protocol's rules."""

    CONDITION = "DELTA_LIFECYCLE_INVALID_PROTOCOL"


class CorruptLogError(DeltaLifecycleError):
    """A log file cannot be parsed."""

    CONDITION = "DELTA_LIFECYCLE_CORRUPT_LOG"


class InvalidCompactionRangeError(DeltaLifecycleError):
    """`COMPACT LOG` over fewer than two versions, past the latest version, or over
    commits that are no longer in the log."""

    CONDITION = "DELTA_LIFECYCLE_INVALID_COMPACTION_RANGE"


class CompactionConflictError(DeltaLifecycleError):
    """A damaged compaction file of the same name exists (delete it: readers ignore it), or
    the range partly overlaps an existing compaction."""

    CONDITION = "DELTA_LIFECYCLE_COMPACTION_CONFLICT"


class CompactionTooLargeError(DeltaLifecycleError):
    """The surviving actions of the range would need more memory than
    `deltaLifecycle.logCompaction.maxBytesInMemory` allows: compact a smaller range."""

    CONDITION = "DELTA_LIFECYCLE_COMPACTION_TOO_LARGE"


class OutOfMemoryError(DeltaLifecycleError):
    """A statement ran out of heap, on the driver or in a task, during the step the message
    names. Every commit it made before is whole and a re-run carries on from the latest
    version; the message names the memory setting to raise and
    `spark.deltaLifecycle.filesPerPartition`, which splits the table's files finer."""

    CONDITION = "DELTA_LIFECYCLE_OUT_OF_MEMORY"


class UnsupportedProtocolError(DeltaLifecycleError):
    """A version the operation would rewrite or delete uses a feature, or an action, that
    this client does not support."""

    CONDITION = "DELTA_LIFECYCLE_UNSUPPORTED_PROTOCOL"


class ConcurrentCommitError(DeltaLifecycleError):
    """Another writer committed the version this operation meant to write; nothing was
    written, and running the operation again starts from the new latest version."""

    CONDITION = "DELTA_LIFECYCLE_CONCURRENT_COMMIT"


class CommitNotVisibleError(DeltaLifecycleError):
    """The LogStore refused a version as taken, yet listing the log shows no such commit:
    an entry the LogStore keeps for it could not be completed. Nothing was written."""

    CONDITION = "DELTA_LIFECYCLE_COMMIT_NOT_VISIBLE"


class CoordinatedTableError(DeltaLifecycleError):
    """The table's commits go through a catalog (`catalogManaged`) or a commit coordinator
    (`coordinatedCommits-preview`, a coordinator property), so this project does not write
    or delete its log files; the message names the feature or property. Nothing was written."""

    CONDITION = "DELTA_LIFECYCLE_COORDINATED_TABLE"


class CatalogManagedTableError(DeltaLifecycleError):
    """A statement on a catalog-managed table reached through its catalog that the catalog or
    the administrator does not allow: maintenance nobody permits (``MAINTENANCE_NOT_PERMITTED``,
    naming the setting ``spark.deltaLifecycle.catalogManaged.maintenance``), a feature the
    catalog requires of its tables (``REQUIRED_BY_CATALOG``), or a commit the catalog refused
    (``CATALOG_REFUSED_COMMIT``, with the catalog's reason). The catalog ratified nothing of the
    refused step."""

    CONDITION = "DELTA_LIFECYCLE_CATALOG_MANAGED_TABLE"


class CatalogPermissionDeniedError(DeltaLifecycleError):
    """The catalog that governs the table does not grant this principal what the statement
    needs: a privilege on the table (``PRIVILEGE``, MODIFY for a statement that writes), on the
    schema a new table goes to (``SCHEMA_PRIVILEGE``), or credentials for a location that is no
    table's (``PATH``, naming the path). Refused before anything was written."""

    CONDITION = "DELTA_LIFECYCLE_CATALOG_PERMISSION_DENIED"


class StorageAccessDeniedError(DeltaLifecycleError):
    """The storage refused access to a table's files (the message names the path): the table
    may well be there. Nothing was read or changed there; name the table through the catalog
    that governs it, or give the session credentials for the path."""

    CONDITION = "DELTA_LIFECYCLE_STORAGE_ACCESS_DENIED"


class InvalidArgumentError(DeltaLifecycleError):
    """An argument of a statement (or a setting it reads) is out of range or malformed; the
    message says which, and what to give instead. Every sub-condition of
    `DELTA_LIFECYCLE_INVALID_ARGUMENT` raises this class."""

    CONDITION = "DELTA_LIFECYCLE_INVALID_ARGUMENT"


class UnknownFeatureError(DeltaLifecycleError):
    """`DROP FEATURE` names a feature it cannot drop; the message lists those it can."""

    CONDITION = "DELTA_LIFECYCLE_UNKNOWN_FEATURE"


class UnknownClientError(DeltaLifecycleError):
    """`DESCRIBE COMPATIBILITY` or `DROP FEATURES FOR CLIENT` names a client that is not
    in the capability file; the message lists the known ones."""

    CONDITION = "DELTA_LIFECYCLE_UNKNOWN_CLIENT"


class ClientNeedsUndroppableError(DeltaLifecycleError):
    """`DROP FEATURES FOR CLIENT` refused before writing anything: a feature that blocks
    the client cannot be dropped (the message names it)."""

    CONDITION = "DELTA_LIFECYCLE_CLIENT_NEEDS_UNDROPPABLE"


class FeatureNotPresentError(DeltaLifecycleError):
    """The table's protocol does not name the feature (already dropped, or never there)."""

    CONDITION = "DELTA_LIFECYCLE_FEATURE_NOT_PRESENT"


class DropNotSupportedOnLineError(DeltaLifecycleError):
    """The running Spark line's delta-spark cannot remove this feature (deletionVectors on
    Spark 3.5 with delta-spark 3.3); the message lists what the line can drop."""

    CONDITION = "DELTA_LIFECYCLE_DROP_NOT_SUPPORTED_ON_LINE"


class DependentFeatureError(DeltaLifecycleError):
    """Another feature of the table requires this one; drop that one first."""

    CONDITION = "DELTA_LIFECYCLE_DEPENDENT_FEATURE"


class FeatureInUseError(DeltaLifecycleError):
    """The table's definition still uses the feature (e.g. CHECK constraints); the message
    says what to remove first. Every sub-condition of `DELTA_LIFECYCLE_FEATURE_IN_USE`
    raises this class."""

    CONDITION = "DELTA_LIFECYCLE_FEATURE_IN_USE"


class FeatureTracesRemainError(DeltaLifecycleError):
    """The latest version still uses the feature after the rewrite (a concurrent writer
    re-enabled it); nothing was downgraded, run the drop again."""

    CONDITION = "DELTA_LIFECYCLE_FEATURE_TRACES_REMAIN"


class TruncateHistoryRequiredError(DeltaLifecycleError):
    """`checkpointProtection` can only be dropped with `truncate_history=True`."""

    CONDITION = "DELTA_LIFECYCLE_TRUNCATE_HISTORY_REQUIRED"


class DropFeatureWaitError(DeltaLifecycleError):
    """The history-truncating drop is prepared but must wait for the truncation retention;
    the message says until when, and which command to run then."""

    CONDITION = "DELTA_LIFECYCLE_DROP_FEATURE_WAIT"


class InvalidRedirectError(DeltaLifecycleError):
    """A redirect property is malformed (not JSON, a field missing, an unknown `Type`,
    `State` or `Spec`), or the table's log no longer shows where its redirect began."""

    CONDITION = "DELTA_LIFECYCLE_INVALID_REDIRECT"

class RedirectWriteRefusedError(DeltaLifecycleError):
    """A write or metadata change reached a table whose redirect is in an IN-PROGRESS state."""

    CONDITION = "DELTA_LIFECYCLE_REDIRECT_WRITE_REFUSED"

class RedirectChainError(DeltaLifecycleError):
    """A redirect points to a table that is redirected itself (a chain or a cycle)."""

    CONDITION = "DELTA_LIFECYCLE_REDIRECT_CHAIN"

class RedirectLocationNotAllowedError(DeltaLifecycleError):
    """A redirect target is outside `spark.deltaLifecycle.redirect.allowedLocationPrefixes`."""

    CONDITION = "DELTA_LIFECYCLE_REDIRECT_LOCATION_NOT_ALLOWED"

class RedirectDestinationNotEmptyError(DeltaLifecycleError):
    """The redirect destination exists and is not empty (or overlaps the source)."""

    CONDITION = "DELTA_LIFECYCLE_REDIRECT_DESTINATION_NOT_EMPTY"

class RedirectStateError(DeltaLifecycleError):
    """The table's redirect state does not allow the command (nothing to unset, already
    redirected elsewhere, ...). Every sub-condition of `DELTA_LIFECYCLE_REDIRECT_STATE`
    raises this class."""

    CONDITION = "DELTA_LIFECYCLE_REDIRECT_STATE"

class RedirectInvalidTransitionError(DeltaLifecycleError):
    """A redirect property change skips or reverses a step of the RFC's state machine."""

    CONDITION = "DELTA_LIFECYCLE_REDIRECT_INVALID_TRANSITION"

class RedirectCopyMismatchError(DeltaLifecycleError):
    """A copied table did not verify (missing files or wrong sizes); running the command again re-copies."""

    CONDITION = "DELTA_LIFECYCLE_REDIRECT_COPY_MISMATCH"

class RedirectNotRoutedError(DeltaLifecycleError):
    """A query read a redirected source directly, bypassing routing; it was refused instead of returning stale rows."""

    CONDITION = "DELTA_LIFECYCLE_REDIRECT_NOT_ROUTED"

class CatalogNotRoutedError(DeltaLifecycleError):
    """SET REDIRECT (or a redirect property set by hand) on a table named in a catalog that
    does not follow redirects in this session: `spark_catalog` without this project's
    catalog, or another catalog that this project's `RoutingCatalog` does not wrap. The
    redirect would leave the table unusable by that name; nothing was written."""

    CONDITION = "DELTA_LIFECYCLE_CATALOG_NOT_ROUTED"

class RedirectBlocksDeltaSparkError(DeltaLifecycleError):
    """delta-spark refused to change a table for one of this project's statements because the
    table's protocol names a redirect feature: it became a redirect's source meanwhile, or
    NoRedirectRules keep the application on the source."""

    CONDITION = "DELTA_LIFECYCLE_REDIRECT_BLOCKS_DELTA_SPARK"


class StreamRedirectChangedError(DeltaLifecycleError):
    """A table's redirect changed state while a streaming query was writing a batch to it; the
    batch was not committed. Restarting the query from its checkpoint writes it exactly once,
    where the redirect now sends it."""

    CONDITION = "DELTA_LIFECYCLE_STREAM_REDIRECT_CHANGED"


class StreamRedirectWaitError(DeltaLifecycleError):
    """A streaming query waited longer than `spark.deltaLifecycle.streaming.redirectWaitTimeout`
    for its table's redirect to leave an IN-PROGRESS state, in which no writes are allowed."""

    CONDITION = "DELTA_LIFECYCLE_STREAM_REDIRECT_WAIT"


class StreamBatchRacedRedirectError(DeltaLifecycleError):
    """A `foreachBatch` batch failed because a table it wrote was being redirected or brought
    back while it ran; restarting the query from its checkpoint runs the batch again, routed."""

    CONDITION = "DELTA_LIFECYCLE_STREAM_BATCH_RACED_REDIRECT"


class StreamPositionUnmappedError(DeltaLifecycleError):
    """A streaming checkpoint's position was read at a location of the table whose versions the
    table's retained log can no longer relate to its current location."""

    CONDITION = "DELTA_LIFECYCLE_STREAM_POSITION_UNMAPPED"


class AdministratorSettingError(DeltaLifecycleError):
    """A session tried to change a setting that is the administrator's policy (such as
    `spark.deltaLifecycle.redirect.allowedLocationPrefixes`); only the configuration the
    application starts with sets it."""

    CONDITION = "DELTA_LIFECYCLE_ADMINISTRATOR_SETTING"

class TestSwitchUnavailableError(DeltaLifecycleError):
    """A session tried to set a test switch (`spark.deltaLifecycle.test.*`) in a JVM not
    started for this project's tests, where it does nothing."""

    __test__ = False  # a pytest collection hint: this is not a test class
    CONDITION = "DELTA_LIFECYCLE_TEST_SWITCH_UNAVAILABLE"


class UnsupportedSparkLineError(RuntimeError):
    """The installed pyspark, delta-spark (or Spark's Scala version) form a combination the
    package has no jar for; raised by [`configure_spark`][delta_lifecycle.configure_spark] before any
    session starts. The message names every supported combination.

    Attributes
    ----------
    spark_version, delta_version, scala_version:
        what is installed (`scala_version` is `None` when it could not be read).
    supported:
        the supported combinations, as text.
    """

    def __init__(
        self,
        message: str,
        *,
        spark_version: str,
        delta_version: str,
        scala_version: Optional[str],
        supported: str,
    ) -> None:
        super().__init__(message)
        self.spark_version = spark_version
        self.delta_version = delta_version
        self.scala_version = scala_version
        self.supported = supported


__all__ += [cls.__name__ for cls in _BY_CONDITION.values()]


def _condition_of(error: PySparkException) -> Optional[str]:
    # A classic session asks the JVM for the condition; if the gateway is already gone the
    # original exception is more useful to the caller than a second failure.
    # pyspark 3.5 names it getErrorClass; pyspark 4 getCondition.
    getter = getattr(error, "getCondition", None) or getattr(error, "getErrorClass", None)
    try:
        value = getter() if getter is not None else None
    except Exception:
        return None
    return value if isinstance(value, str) else None


def _message_of(error: PySparkException, condition: str) -> str:
    # The JVM renders the message from the project's error-conditions resource, and PySpark
    # keeps that text. Asking PySpark to render it again would not work in classic sessions:
    # it looks the condition up in Spark's registry, which does not know this project's.
    text = str(error).split("\n\nJVM stacktrace:", 1)[0].strip()
    prefix = f"[{condition}]"
    return text[len(prefix):].strip() if text.startswith(prefix) else text


def convert_exception(error: BaseException) -> Optional[DeltaLifecycleError]:
    """Return the typed error for a PySpark exception raised by delta-lifecycle.

    Returns `None` when `error` is not a PySpark exception whose condition starts with
    `DELTA_LIFECYCLE_`; the caller should then re-raise the original exception.

    Examples
    --------
    >>> try:
    ...     spark.sql("DESCRIBE PROTOCOL HISTORY nope.nothing").collect()
    ... except Exception as e:
    ...     typed = convert_exception(e)
    >>> type(typed).__name__
    'TableNotFoundError'
    """
    if not isinstance(error, PySparkException):
        return None
    condition = _condition_of(error)
    if condition is None or not condition.startswith(CONDITION_PREFIX):
        return None
    cls = _BY_CONDITION.get(condition, DeltaLifecycleError)
    return cls(_message_of(error, condition), condition=condition)


@contextmanager
def translate_errors() -> Iterator[None]:
    """Re-raise delta-lifecycle's PySpark exceptions inside the block as typed errors.

    The typed error is raised `from` the PySpark exception, so the JVM stack trace stays
    reachable through `__cause__`. Other exceptions are not touched.

    Examples
    --------
    >>> with translate_errors():
    ...     spark.sql("DESCRIBE PROTOCOL HISTORY delta.`/no/such/path`").collect()
    Traceback (most recent call last):
    ...
    delta_lifecycle.errors.NotADeltaTableError: [DELTA_LIFECYCLE_NOT_A_DELTA_TABLE] ...
    """
    try:
        yield
    except PySparkException as e:
        typed = convert_exception(e)
        if typed is None:
            raise
        raise typed from e
