"""Result types of the delta-lifecycle statements, as frozen dataclasses.

Each type mirrors the rows its SQL statement returns, with Python names and immutable
containers (tuples instead of lists), so results can be compared, hashed and stored.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Optional, Tuple

from pyspark.sql import Row

__all__ = ["PROTOCOL_HISTORY_COLUMNS", "ProtocolVersion"]

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
)


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

    Example
    -------
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

    @classmethod
    def from_row(cls, row: Row) -> "ProtocolVersion":
        """Build a :class:`ProtocolVersion` from one row of ``DESCRIBE PROTOCOL HISTORY``.

        Raises ``ValueError`` when the row lacks one of the statement's columns, which
        means the jar on the JVM does not match this Python package.

        >>> rows = spark.sql("DESCRIBE PROTOCOL HISTORY delta.`/data/events`").collect()
        >>> ProtocolVersion.from_row(rows[0]).version
        0
        """
        fields = row.asDict(recursive=False)
        missing = [c for c in PROTOCOL_HISTORY_COLUMNS if c not in fields]
        if missing:
            raise ValueError(
                f"The row has no column {', '.join(missing)}; it is not a row of "
                "DESCRIBE PROTOCOL HISTORY, or the delta-lifecycle jar on the cluster does "
                f"not match this Python package. Columns: {sorted(fields)}"
            )
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
        )
