"""An independent, deliberately simple reading of a ``_delta_log``, for expected values.

The tests compare what delta-lifecycle reports with what this module reads straight from
the log files with the ``json`` module. It handles only logs that still hold every commit
from version 0, which is what the tests create or copy; it raises on anything else rather
than guess.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Dict, FrozenSet, List, Optional, Sequence, Tuple

from delta_lifecycle import ProtocolVersion

_COMMIT = re.compile(r"^(\d{20})\.json$")
_CHECKPOINT_KINDS = (
    ("classic", re.compile(r"^(\d{20})\.checkpoint\.parquet$")),
    ("multi-part", re.compile(r"^(\d{20})\.checkpoint\.\d{10}\.\d{10}\.parquet$")),
    ("v2", re.compile(r"^(\d{20})\.checkpoint\.[0-9a-fA-F-]{36}\.(?:json|parquet)$")),
)
_COMPACTION = re.compile(r"^(\d{20})\.(\d{20})\.compacted\.json$")

PROTECTION_PROPERTY = "delta.requireCheckpointProtectionBeforeVersion"


@dataclass(frozen=True)
class LogVersion:
    """What the raw log says about one version; features as sets (their order is not
    meaningful in the protocol)."""

    version: int
    timestamp_ms: int
    operation: Optional[str]
    min_reader_version: int
    min_writer_version: int
    reader_features: Optional[FrozenSet[str]]
    writer_features: Optional[FrozenSet[str]]
    checkpoint: Optional[str]
    compactions: Tuple[str, ...]
    require_checkpoint_protection_before_version: Optional[int]

    @property
    def protocol(self) -> Tuple[Any, ...]:
        return (
            self.min_reader_version,
            self.min_writer_version,
            self.reader_features,
            self.writer_features,
        )


def local_path(location: str) -> Path:
    """The local directory of a ``file:`` location as Spark reports it."""
    if location.startswith("file://"):
        location = location[len("file://"):]
    elif location.startswith("file:"):
        location = location[len("file:"):]
    return Path(location)


def _actions(commit: Path) -> List[Dict[str, Any]]:
    with commit.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def read_log(table: Path) -> List[LogVersion]:
    """Every version of the table at ``table``, oldest first, from its log files."""
    log = Path(table) / "_delta_log"
    names = sorted(os.listdir(log))
    commits = {int(m.group(1)): log / n for n in names if (m := _COMMIT.match(n))}
    if not commits or sorted(commits) != list(range(max(commits) + 1)):
        raise AssertionError(f"{log} does not hold every commit from 0: {sorted(commits)}")

    checkpoints: Dict[int, List[str]] = {}
    for name in names:
        for kind, pattern in _CHECKPOINT_KINDS:
            if m := pattern.match(name):
                kinds = checkpoints.setdefault(int(m.group(1)), [])
                if kind not in kinds:
                    kinds.append(kind)
    compactions = [
        (int(m.group(1)), int(m.group(2)), n) for n in names if (m := _COMPACTION.match(n))
    ]

    result: List[LogVersion] = []
    protocol: Optional[Dict[str, Any]] = None
    configuration: Dict[str, str] = {}
    for version in sorted(commits):
        commit_info: Dict[str, Any] = {}
        for action in _actions(commits[version]):
            if "protocol" in action:
                protocol = action["protocol"]
            elif "metaData" in action:
                configuration = action["metaData"].get("configuration") or {}
            elif "commitInfo" in action:
                commit_info = action["commitInfo"]
        if protocol is None:
            raise AssertionError(f"no protocol action up to version {version} in {log}")
        ict = commit_info.get("inCommitTimestamp")
        timestamp_ms = (
            int(ict) if ict is not None else commits[version].stat().st_mtime_ns // 1_000_000
        )
        reader = protocol.get("readerFeatures")
        writer = protocol.get("writerFeatures")
        protection = configuration.get(PROTECTION_PROPERTY)
        kinds = checkpoints.get(version)
        result.append(
            LogVersion(
                version=version,
                timestamp_ms=timestamp_ms,
                operation=commit_info.get("operation"),
                min_reader_version=int(protocol["minReaderVersion"]),
                min_writer_version=int(protocol["minWriterVersion"]),
                reader_features=None if reader is None else frozenset(reader),
                writer_features=None if writer is None else frozenset(writer),
                checkpoint=",".join(kinds) if kinds else None,
                compactions=tuple(sorted(n for x, y, n in compactions if x <= version <= y)),
                require_checkpoint_protection_before_version=(
                    None if protection is None else int(protection)
                ),
            )
        )
    return result


def epoch_ms(timestamp: datetime) -> int:
    """Milliseconds since the epoch of a naive local ``datetime`` as PySpark returns it."""
    return round(timestamp.timestamp() * 1000)


def from_history(v: ProtocolVersion) -> LogVersion:
    """A :class:`ProtocolVersion` in the same shape as :func:`read_log`'s entries."""
    assert v.timestamp is not None, f"version {v.version} has no timestamp"
    return LogVersion(
        version=v.version,
        timestamp_ms=epoch_ms(v.timestamp),
        operation=v.operation,
        min_reader_version=v.min_reader_version,
        min_writer_version=v.min_writer_version,
        reader_features=None if v.reader_features is None else frozenset(v.reader_features),
        writer_features=None if v.writer_features is None else frozenset(v.writer_features),
        checkpoint=v.checkpoint,
        compactions=tuple(sorted(v.compactions)),
        require_checkpoint_protection_before_version=v.require_checkpoint_protection_before_version,
    )


def assert_history_matches_log(history: Sequence[ProtocolVersion], table: Path) -> None:
    """Assert that ``history`` is, version by version, what the log at ``table`` says."""
    expected = read_log(table)
    assert [v.version for v in history] == [e.version for e in expected], "versions differ"
    for actual, wanted in zip(history, expected):
        assert from_history(actual) == wanted, f"version {wanted.version} differs"
