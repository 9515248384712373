"""`ALTER TABLE … DROP FEATURE` and `DROP FEATURES FOR CLIENT`: [`DropFeatureResult`][delta_lifecycle.results.DropFeatureResult]."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Optional, Tuple

from delta_lifecycle.results._rows import StatementRow

#: ``DROP FEATURE``'s ``mode``: under checkpoint protection, or by truncating history.
DropMode = Literal["fast", "truncate-history"]
#: ``DROP FEATURE``'s ``status``: a ``DRY RUN`` plan, or the drop done.
DropStatus = Literal["planned", "dropped"]

#: The columns of ``ALTER TABLE … DROP FEATURE``, in order.
DROP_FEATURE_COLUMNS: Tuple[str, ...] = (
    "feature", "mode", "status", "filesRewritten", "bytesRewritten", "commitVersions",
    "checkpointVersions", "protectedBefore", "readableWithoutFeatureFrom",
    "historyTruncatedBefore", "steps", "clientsGainingAccess", "clientsBlockedByProtection",
    "table",
)


@dataclass(frozen=True)
class DropFeatureResult(StatementRow, columns=DROP_FEATURE_COLUMNS, statement="ALTER TABLE … DROP FEATURE"):
    """What `ALTER TABLE … DROP FEATURE` did or, with `DRY RUN`, will do.

    Attributes
    ----------
    feature:
        The feature's name as the protocol spells it.
    mode:
        `"fast"` (checkpoint protection, no waiting) or `"truncate-history"`.
    status:
        `"dropped"`, or `"planned"` for a dry run.
    files_rewritten, bytes_rewritten:
        Data files rewritten to remove the feature's traces (planned: to be rewritten).
    commit_versions:
        The versions written during the drop, the downgrade commit last (planned: the
        versions it will write if no other writer commits meanwhile).
    checkpoint_versions:
        Checkpoints written: for the fast drop of a reader-writer feature, the three
        protected barrier checkpoints and the one on the downgraded version.
    protected_before:
        `delta.requireCheckpointProtectionBeforeVersion` afterwards, or `None`.
    readable_without_feature_from:
        The first version a client that lacks the feature can read (every version, for a
        writer-only feature).
    history_truncated_before:
        For `"truncate-history"`: the earliest version left in the log.
    steps:
        One line per step, in order.
    clients_gaining_access:
        Known clients (docs/compatibility.md) that gain read or write access by the drop,
        per way of dropping, e.g. `"deltalake-1.x: read (fast), read+write
        (truncate-history)"`.
    clients_blocked_by_protection:
        For a fast drop: clients that could write the table without the feature but not with
        the `checkpointProtection` the fast drop adds; the `TRUNCATE HISTORY` drop
        avoids it.
    table:
        The table the statement acted on: for a redirected table, its destination.

    Examples
    --------
    >>> plan = LifecycleTable.for_path(spark, "/data/events").drop_feature(
    ...     "deletionVectors", dry_run=True)
    >>> plan.status, plan.files_rewritten, plan.readable_without_feature_from
    ('planned', 1, 12)
    >>> plan.protected_before, plan.checkpoint_versions
    (12, (9, 10, 11, 12))
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
