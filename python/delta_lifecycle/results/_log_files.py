"""`DESCRIBE LOG FILES`: [`LogFileEntry`][delta_lifecycle.results.LogFileEntry]."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal, Optional, Tuple

from delta_lifecycle.results._rows import StatementRow

#: The columns of ``DESCRIBE LOG FILES``, in order.
LOG_FILES_COLUMNS: Tuple[str, ...] = (
    "version", "endVersion", "kind", "file", "size", "modificationTime", "table",
)

#: What a file of ``_delta_log`` is to the Delta protocol.
LogFileKind = Literal["commit", "checkpoint", "compaction", "checksum", "last_checkpoint", "other"]


@dataclass(frozen=True)
class LogFileEntry(StatementRow, columns=LOG_FILES_COLUMNS, statement="DESCRIBE LOG FILES"):
    """One file of a table's `_delta_log`: one row of `DESCRIBE LOG FILES`.

    Attributes
    ----------
    version, end_version:
        The versions the file belongs to: both the same for a commit, a checkpoint (each
        part of a multi-part one) and a checksum; the first and last version a
        `<x>.<y>.compacted.json` compaction covers; `None` for `_last_checkpoint` and
        for files that are no part of the protocol.
    kind:
        `"commit"`, `"checkpoint"`, `"compaction"`, `"checksum"` (`<v>.crc`),
        `"last_checkpoint"`, or `"other"` (a file in the folder that no Delta client
        reads: a copy someone kept, a compaction of a single commit).
    file:
        The file's name in `_delta_log`.
    size:
        Its length in bytes.
    modification_time:
        When it was last written, as the file system reports it (naive, local time).
    table:
        The table the statement acted on: for a redirected table, its destination.

    Examples
    --------
    >>> files = LifecycleTable.for_path(spark, "/data/events").log_files()
    >>> [(f.kind, f.version, f.end_version) for f in files if f.kind != "checksum"][:5]
    [('commit', 0, 0), ('commit', 1, 1), ('commit', 2, 2), ('checkpoint', 3, 3), ('commit', 3, 3)]
    """

    version: Optional[int]
    end_version: Optional[int]
    kind: LogFileKind
    file: str
    size: int
    modification_time: datetime
    table: str
