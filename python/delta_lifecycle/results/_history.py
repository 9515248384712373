"""`DESCRIBE PROTOCOL HISTORY`: [`ProtocolVersion`][delta_lifecycle.results.ProtocolVersion]."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Optional, Tuple

from pyspark.sql import Row

from delta_lifecycle.results._rows import _fields, _optional_int, _optional_names, _optional_str

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
        The table the statement acted on: for a redirected table, its destination
        (`` delta.`<location>` `` or the destination table's name), else the table as named.

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
