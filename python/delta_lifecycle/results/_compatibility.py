"""`DESCRIBE COMPATIBILITY`: [`ClientCompatibility`][delta_lifecycle.results.ClientCompatibility]."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Tuple

from delta_lifecycle.results._rows import StatementRow

#: ``DESCRIBE COMPATIBILITY``'s ``canRead`` / ``canWrite``: ``"unknown"`` when no source says
#: whether the client handles one of the table's features.
Access = Literal["yes", "no", "unknown"]
#: Where a capability entry comes from: a test here runs the client, or only public sources.
Evidence = Literal["verified", "documented"]

#: The columns of ``DESCRIBE COMPATIBILITY``, in order.
COMPATIBILITY_COLUMNS: Tuple[str, ...] = (
    "client", "versions", "evidence", "canRead", "canWrite", "readBlockers", "writeBlockers",
    "unknownForRead", "unknownForWrite", "dropForRead", "dropForWrite", "notDroppable",
    "writeNeedsTruncateHistory", "sources", "table",
)


@dataclass(frozen=True)
class ClientCompatibility(StatementRow, columns=COMPATIBILITY_COLUMNS, statement="DESCRIBE COMPATIBILITY"):
    """Whether one client (and version range) can read and write a table version: one row of
    `DESCRIBE COMPATIBILITY`. Decided from the table's protocol and the capability file
    bundled in the jar (docs/compatibility.md).

    Attributes
    ----------
    client:
        The client's id in the capability file, e.g. `"deltalake-1.x"`.
    versions:
        The version range the entry covers, e.g. `"1.6.x"`.
    evidence:
        `"verified"` (a test runs the client here) or `"documented"`.
    can_read, can_write:
        `"yes"`, `"no"` or `"unknown"` (no source covers a feature the table has).
    read_blockers, write_blockers:
        The features (or `minReaderVersion=N` / `minWriterVersion=N`) the client refuses.
    unknown_for_read, unknown_for_write:
        The table's features no source says the client handles or refuses.
    drop_for_read, drop_for_write:
        The features to drop, in this order, for the client to read (write) the table.
    not_droppable:
        Those of them `DROP FEATURE` cannot remove.
    write_needs_truncate_history:
        The client does not write tables with `checkpointProtection`, which a fast drop
        adds: dropping for its writes must use `TRUNCATE HISTORY`.
    sources:
        Where the entry comes from (URLs).
    table:
        The table the statement acted on: for a redirected table, its destination.

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
