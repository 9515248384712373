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


def _add_remove_paths(actions: Sequence[Dict[str, Any]]) -> Tuple[List[str], List[str]]:
    adds = [a["add"]["path"] for a in actions if a.get("add")]
    removes = [a["remove"]["path"] for a in actions if a.get("remove")]
    return adds, removes


def _replay(commits: Dict[int, Path], start: int, end: int) -> Tuple[FrozenSet[str], FrozenSet[str]]:
    """(live files, tombstones) after applying commits ``start..end`` to an empty state."""
    live: set[str] = set()
    tombstones: set[str] = set()
    for version in range(start, end + 1):
        adds, removes = _add_remove_paths(_actions(commits[version]))
        for path in removes:
            live.discard(path)
            tombstones.add(path)
        for path in adds:
            live.add(path)
            tombstones.discard(path)
    return frozenset(live), frozenset(tombstones)


def assert_maintenance_files_describe_real_states(table: Path) -> int:
    """Every classic checkpoint and every ``.compacted.json`` in the log holds exactly the
    state the commits give at its versions: a checkpoint at ``v`` the files live after
    replaying commits ``0..v``; a compaction of ``a..b`` the files added and removed by
    replaying ``a..b``. If commit 0 is gone, later checkpoints are checked against the
    oldest one. Returns how many files it checked."""
    import pyarrow.parquet as pq

    log = Path(table) / "_delta_log"
    names = sorted(os.listdir(log))
    commits = {int(m.group(1)): log / n for n in names if (m := _COMMIT.match(n))}
    if not commits or sorted(commits) != list(range(min(commits), max(commits) + 1)):
        raise AssertionError(f"{log} has a gap in its commits: {sorted(commits)}")

    def checkpoint_files(name: str) -> FrozenSet[str]:
        rows = pq.read_table(log / name, columns=["add"]).column("add").to_pylist()
        return frozenset(r["path"] for r in rows if r is not None)

    # Without commit 0 (the history was cleaned), the oldest checkpoint is the base the
    # later ones are checked against.
    base_version, base_files = -1, frozenset[str]()
    if min(commits) > 0:
        oldest = min((int(m.group(1)), n) for n in names if (m := _CHECKPOINT_KINDS[0][1].match(n)))
        if oldest[0] < min(commits) - 1:
            raise AssertionError(f"{log}: no commit follows the oldest checkpoint {oldest[1]}")
        base_version, base_files = oldest[0], checkpoint_files(oldest[1])
    checked = 0
    for name in names:
        if m := _CHECKPOINT_KINDS[0][1].match(name):
            version = int(m.group(1))
            if version <= base_version:
                continue
            in_checkpoint = checkpoint_files(name)
            live, tombstones = _replay(commits, base_version + 1, version)
            live = (base_files - tombstones) | live
            assert in_checkpoint == live, (
                f"checkpoint {name} describes a state no commit made: "
                f"{sorted(in_checkpoint ^ live)[:5]} differ from the commits' files"
            )
            checked += 1
        elif m := _COMPACTION.match(name):
            start, end = int(m.group(1)), int(m.group(2))
            assert start in commits and end in commits, f"{name} covers versions the log lacks"
            adds, removes = _add_remove_paths(_actions(log / name))
            live, tombstones = _replay(commits, start, end)
            assert (frozenset(adds), frozenset(removes)) == (live, tombstones), (
                f"compaction {name} describes a state commits {start}..{end} never made"
            )
            assert len(adds) == len(live), f"compaction {name} repeats an add"
            checked += 1
        elif ".checkpoint." in name and not name.endswith(".crc"):
            raise AssertionError(f"{name}: only classic checkpoints are checked here")
    return checked
