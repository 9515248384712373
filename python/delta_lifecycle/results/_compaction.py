"""`ALTER TABLE … COMPACT LOG`: [`CompactionResult`][delta_lifecycle.results.CompactionResult]."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Optional, Tuple

from delta_lifecycle.results._rows import StatementRow

#: ``COMPACT LOG``'s ``status``: it wrote the file; a compaction of exactly the range was
#: already there; a wider compaction already covers the range; or nothing to compact.
CompactionStatus = Literal["written", "exists", "covered", "nothing-to-compact"]

#: The columns of ``ALTER TABLE … COMPACT LOG``, in order.
COMPACTION_COLUMNS: Tuple[str, ...] = (
    "startVersion", "endVersion", "status", "file", "commits", "actions", "bytesWritten",
    "inputBytes", "table",
)


@dataclass(frozen=True)
class CompactionResult(StatementRow, columns=COMPACTION_COLUMNS, statement="ALTER TABLE … COMPACT LOG"):
    """What `ALTER TABLE … COMPACT LOG` did: its one result row.

    Attributes
    ----------
    start_version, end_version:
        The range of commits compacted (or considered, when nothing was written).
    status:
        `"written"`: this call wrote the file; `"exists"`: a complete compaction of
        exactly this range was already there (another compactor won); `"covered"`: a
        complete compaction of a wider range already stands in for this one, and nothing
        was written; `"nothing-to-compact"`: fewer than two commits to compact, or commits
        that change no table state.
    file:
        The `<x>.<y>.compacted.json` file (for `"covered"`, the wider one), or `None`
        when there is none.
    commits:
        Commits in the range.
    actions:
        Actions written (0 unless `status` is `"written"`).
    bytes_written:
        Size of the file written (0 unless `status` is `"written"`).
    input_bytes:
        Total size of the commit files the compaction stands in for.
    table:
        The table the statement acted on: for a redirected table, its destination.

    Examples
    --------
    >>> result = LifecycleTable.for_path(spark, "/data/events").compact_log()
    >>> result.status, result.start_version, result.end_version
    ('written', 4, 5)
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
