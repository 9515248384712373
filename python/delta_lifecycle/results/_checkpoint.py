"""`ALTER TABLE … CHECKPOINT`: [`CheckpointResult`][delta_lifecycle.results.CheckpointResult]."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Optional, Tuple

from delta_lifecycle.results._rows import StatementRow

#: ``CHECKPOINT``'s ``status``: written from the earlier checkpoint (or, for a DRY RUN,
#: would be); written in full by delta-spark (or would be), with the ``reason``; or the
#: latest version has a checkpoint already.
CheckpointStatus = Literal[
    "written", "would write", "written in full", "would write in full", "exists"
]

#: The kinds of checkpoint the Delta protocol defines (empty for a full checkpoint).
CheckpointKind = Literal["classic", "multi-part", "v2", ""]

#: The columns of ``ALTER TABLE … CHECKPOINT``, in order.
CHECKPOINT_COLUMNS: Tuple[str, ...] = (
    "version", "baseVersion", "kind", "status", "reason", "commits", "reused", "rewritten",
    "written", "reusedBytes", "rewrittenBytes", "writtenBytes", "table",
)


@dataclass(frozen=True)
class CheckpointResult(StatementRow, columns=CHECKPOINT_COLUMNS, statement="ALTER TABLE … CHECKPOINT"):
    """What `ALTER TABLE … CHECKPOINT` did, or (DRY RUN) would do: its one result row.

    Attributes
    ----------
    version:
        The version checkpointed: the latest (for a catalog-managed table, the latest in
        `_delta_log`).
    base_version:
        The earlier checkpoint the new one was written from; `None` for a full checkpoint.
    kind:
        `"classic"`, `"multi-part"` or `"v2"`, as the earlier checkpoint; empty for a full one.
    status:
        `"written"`, `"would write"` (DRY RUN), `"written in full"`, `"would write in full"`,
        or `"exists"` when the version has a checkpoint already.
    reason:
        Why the checkpoint is written in full (the table has no checkpoint yet, its schema
        or checkpoint policy changed since, the commits after it are too long); else `None`.
    commits:
        Commits between the earlier checkpoint and the version.
    reused:
        What the new checkpoint takes unchanged: V2 sidecars it references again, or a
        classic part's row groups copied byte for byte (`"<file> row groups 0,1"`).
    rewritten:
        The sidecars or row groups whose rows were read and written again, without the rows
        the commits replaced.
    written:
        The files written: a new sidecar and manifest, or the checkpoint's parts.
    reused_bytes, rewritten_bytes, written_bytes:
        The bytes of `reused` and `rewritten` in the earlier checkpoint, and of `written`.
    table:
        The table the statement acted on: for a redirected table, its destination.

    Examples
    --------
    >>> result = LifecycleTable.for_path(spark, "/data/events").checkpoint()
    >>> result.status, result.version, result.base_version
    ('written', 5, 3)
    """

    version: int
    base_version: Optional[int]
    kind: CheckpointKind
    status: CheckpointStatus
    reason: Optional[str]
    commits: int
    reused: Tuple[str, ...]
    rewritten: Tuple[str, ...]
    written: Tuple[str, ...]
    reused_bytes: int
    rewritten_bytes: int
    written_bytes: int
    table: str

    @property
    def incremental(self) -> bool:
        """Whether the checkpoint is (or would be) written from the earlier one."""
        return self.base_version is not None
