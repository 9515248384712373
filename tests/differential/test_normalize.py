"""The differential suite's normalization takes out what differs between two runs, and nothing
else (docs/differential.md lists the rules)."""

from __future__ import annotations

from differential.normalize import normalize


def test_wall_clock_fields_and_properties_become_time() -> None:
    record = {
        "last_commit": {"timestamp": 1795996551715, "version": 3},
        "rows": [
            {"key": "option.delta.lastCommitTimestamp", "value": "1795996551715"},
            {"key": "delta.lastCommitTimestamp", "value": "1795996551716"},
            {"key": "option.delta.lastUpdateVersion", "value": "3"},
            {"key": "owner.note", "value": "1795996551715"},
        ],
    }
    assert normalize(record, root="/nowhere") == {
        "last_commit": {"timestamp": "<time>", "version": 3},
        "rows": [
            {"key": "option.delta.lastCommitTimestamp", "value": "<time>"},
            {"key": "delta.lastCommitTimestamp", "value": "<time>"},
            {"key": "option.delta.lastUpdateVersion", "value": "3"},
            {"key": "owner.note", "value": "1795996551715"},
        ],
    }


def test_root_uuids_and_expression_ids() -> None:
    path = "/tmp/run/t/part-00000-0f8fad5b-d9cb-469f-a165-70867728950e-c000.snappy.parquet"
    assert normalize({"file": path, "predicate": "(key#1155 > 1)"}, root="/tmp/run") == {
        "file": "<root>/t/part-00000-<uuid>-c000.snappy.parquet",
        "predicate": "(key#<n> > 1)",
    }
