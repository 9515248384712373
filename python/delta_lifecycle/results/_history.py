"""`DESCRIBE PROTOCOL HISTORY`: [`ProtocolVersion`][delta_lifecycle.results.ProtocolVersion]."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Optional, Tuple

from pyspark.sql import Row

from delta_lifecycle.results._rows import _from_row, _optional_names

#: The columns of ``DESCRIBE PROTOCOL HISTORY``, in order.
PROTOCOL_HISTORY_COLUMNS: Tuple[str, ...] = (
    "version", "timestamp", "operation", "minReaderVersion", "minWriterVersion",
    "readerFeatures", "writerFeatures", "checkpoint", "compactions",
    "requireCheckpointProtectionBeforeVersion", "table",
)


@dataclass(frozen=True)
class ProtocolVersion:
    """The protocol in force at one version of a Delta table: one row of
    `DESCRIBE PROTOCOL HISTORY`.

    Attributes
    ----------
    version:
        The table version.
    timestamp:
        When the version was committed: the in-commit timestamp when the table records
        one, otherwise the commit file's modification time. A naive `datetime` in local
        time, as PySpark returns `TIMESTAMP` values.
    operation:
        The `commitInfo` operation (`"WRITE"`, `"SET TBLPROPERTIES"`, ...), or
        `None` when the commit has no `commitInfo`.
    min_reader_version, min_writer_version:
        The protocol versions.
    reader_features, writer_features:
        The table features the protocol lists, or `None` when the protocol has no such
        list (reader version below 3, writer version below 7).
    checkpoint:
        `None` when no checkpoint exists at this version, otherwise its kind:
        `"classic"`, `"multi-part"` or `"v2"`.
    compactions:
        File names of the `<x>.<y>.compacted.json` log compactions that cover this
        version (empty when there are none).
    require_checkpoint_protection_before_version:
        The table property `delta.requireCheckpointProtectionBeforeVersion` at this
        version, or `None` when it is not set.
    table:
        The table the statement acted on: for a redirected table, its destination.

    Examples
    --------
    >>> history = LifecycleTable.for_path(spark, "/data/events").protocol_history()
    >>> [(v.version, v.min_reader_version, v.min_writer_version) for v in history]
    [(0, 1, 2), (1, 1, 2), (2, 3, 7), (3, 3, 7), (4, 3, 7), (5, 3, 7)]
    >>> history[-1].reader_features
    ('deletionVectors',)
    >>> [(v.version, v.operation, v.checkpoint) for v in history[1:4]]
    [(1, 'WRITE', None), (2, 'SET TBLPROPERTIES', None), (3, 'DELETE', 'classic')]
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
        """Build a [`ProtocolVersion`][delta_lifecycle.results.ProtocolVersion] from one row of `DESCRIBE PROTOCOL HISTORY`.

        Raises `ValueError` when the row lacks one of the statement's columns, which
        means the jar on the JVM does not match this Python package.

        Examples
        --------
        >>> rows = spark.sql("DESCRIBE PROTOCOL HISTORY delta.`/data/events`").collect()
        >>> ProtocolVersion.from_row(rows[0]).version
        0
        """
        return _from_row(
            cls,
            row,
            PROTOCOL_HISTORY_COLUMNS,
            "DESCRIBE PROTOCOL HISTORY",
            timestamp=_timestamp,
            compactions=lambda value: _optional_names(value) or (),
        )


def _timestamp(value: Any) -> Optional[datetime]:
    if value is not None and not isinstance(value, datetime):
        raise ValueError(f"timestamp is a {type(value).__name__}, expected datetime")
    return value
