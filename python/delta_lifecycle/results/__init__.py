"""Result types of the delta-lifecycle statements, as frozen dataclasses.

Each type mirrors the rows its SQL statement returns, with Python names and immutable
containers (tuples instead of lists), so results can be compared, hashed and stored. Its
`from_row` builds it from one row: each column (`sizeInBytes`) is the field of the same name in
snake case (`size_in_bytes`), and a value that its field's `Literal` type does not allow, or a
missing column, raises `ValueError`: the delta-lifecycle jar on the JVM does not match this
Python package.

The `table` of the statements that act on a table (all but the redirect statements, whose
`table` is the table as named) is the table the statement acted on: for a redirected table, its
destination (`` delta.`<location>` `` or the destination table's name), else the table as named.
"""

# The types live in one private module per statement family: _history (DESCRIBE PROTOCOL
# HISTORY), _compaction (COMPACT LOG), _cleanup (CLEAN LOG), _drop_feature (DROP FEATURE and
# DROP FEATURES FOR CLIENT), _redirect (the redirect statements and their DRY RUN),
# _compatibility (DESCRIBE COMPATIBILITY), _log_files (DESCRIBE LOG FILES), _checkpoint
# (CHECKPOINT); _rows holds the row parsing they share (one rule from a row to any of them). This module is where they are
# imported from, here and by users. The API reference (docs/python-api.md) lists them in the
# order of these imports.

from __future__ import annotations

from delta_lifecycle.results._history import PROTOCOL_HISTORY_COLUMNS, ProtocolVersion
from delta_lifecycle.results._compaction import (
    COMPACTION_COLUMNS,
    CompactionStatus,
    CompactionResult,
)
from delta_lifecycle.results._cleanup import CLEANUP_COLUMNS, CleanedLogFile, CleanupResult
from delta_lifecycle.results._drop_feature import (
    DROP_FEATURE_COLUMNS,
    DropMode,
    DropStatus,
    DropFeatureResult,
)
from delta_lifecycle.results._redirect import (
    REDIRECT_COLUMNS,
    REDIRECT_PLAN_COLUMNS,
    RedirectMode,
    CopyMode,
    RedirectStatus,
    RedirectRefusal,
    RedirectPlan,
)
from delta_lifecycle.results._compatibility import (
    COMPATIBILITY_COLUMNS,
    Access,
    Evidence,
    ClientCompatibility,
)
from delta_lifecycle.results._log_files import LOG_FILES_COLUMNS, LogFileEntry, LogFileKind
from delta_lifecycle.results._checkpoint import (
    CHECKPOINT_COLUMNS,
    CheckpointKind,
    CheckpointStatus,
    CheckpointResult,
)

__all__ = [
    "Access",
    "CHECKPOINT_COLUMNS",
    "CheckpointKind",
    "CheckpointResult",
    "CheckpointStatus",
    "CLEANUP_COLUMNS",
    "COMPATIBILITY_COLUMNS",
    "ClientCompatibility",
    "Evidence",
    "COMPACTION_COLUMNS",
    "PROTOCOL_HISTORY_COLUMNS",
    "CleanedLogFile",
    "CleanupResult",
    "CompactionResult",
    "CompactionStatus",
    "DROP_FEATURE_COLUMNS",
    "DropFeatureResult",
    "DropMode",
    "DropStatus",
    "LOG_FILES_COLUMNS",
    "LogFileEntry",
    "LogFileKind",
    "ProtocolVersion",
    "REDIRECT_COLUMNS",
    "REDIRECT_PLAN_COLUMNS",
    "CopyMode",
    "RedirectMode",
    "RedirectPlan",
    "RedirectRefusal",
    "RedirectStatus",
]
