"""What may legitimately differ between two runs of the same operation, and nothing else.

Two sessions running the same operation on tables of the same history still differ in what
the clock, the random number generator and the folder they run in give them. Each rule below
takes out one such thing; everything else is compared as it is (docs/differential.md lists
the rules with their reasons):

1. The run's own folder: every string holding the absolute path of the run's scratch folder
   (table locations, ``file:`` URIs, clone sources in history, VACUUM's file list) has it
   replaced by ``<root>``. Each session runs in a folder of its own, laid out the same way.
2. UUIDs, in any string: table ids (DESCRIBE DETAIL ``id``), data file names
   (``part-00000-<uuid>-c000.snappy.parquet``), streaming query ids in history. They are
   random per table and per write.
3. Wall-clock times, by field name: ``timestamp`` (history, and RESTORE's parameter of
   that name), ``createdAt`` and ``lastModified`` (DESCRIBE DETAIL), ``_commit_timestamp``
   (change data feed), ``startTimeMs`` and ``endTimeMs`` (OPTIMIZE's metrics). When an
   operation happened differs between any two runs.
4. Durations, by field name: any field whose name ends in ``TimeMs`` (operationMetrics
   ``executionTimeMs``, ``scanTimeMs``, ``rewriteTimeMs``, MERGE's
   ``materializeSourceTimeMs``, ...). How long a step took differs between any two runs.

5. Expression ids, in any string: ``key#1155`` becomes ``key#<n>`` (history's ``predicate``
   parameters of UPDATE, DELETE and MERGE print the analyzed expression). Spark numbers the
   attributes of every query from one counter per JVM, so they depend on what ran before.
6. The session's own names, in any string (``names``): the ``catalog_managed`` variant's
   sessions share one Unity Catalog catalog, each with a schema of its own, which table
   names (DESCRIBE DETAIL's ``name``) carry.
7. Wall-clock times, by property name, in rows of a key and a value (SHOW TBLPROPERTIES):
   ``delta.lastCommitTimestamp``, which Unity Catalog's connector shows (as
   ``option.delta.lastCommitTimestamp``) for a catalog-managed table: when its last commit
   was ratified. The same reason as rule 3.

Row counts, file counts, byte sizes, versions, properties (but rule 7's), protocols and schemas
are never normalized: both sessions write the same files.
"""

from __future__ import annotations

import re
from typing import Any, Dict, Optional

UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
#: Rule 5: an attribute's expression id, as Spark prints it after the attribute's name.
EXPRESSION_ID = re.compile(r"(?<=\w)#\d+\b")

#: Rule 3: fields that hold a wall-clock time.
WALL_CLOCK_FIELDS = frozenset(
    {"timestamp", "createdAt", "lastModified", "_commit_timestamp", "startTimeMs", "endTimeMs"}
)


#: Rule 7: table properties that hold a wall-clock time, as SHOW TBLPROPERTIES names them.
WALL_CLOCK_PROPERTIES = frozenset(
    {"delta.lastCommitTimestamp", "option.delta.lastCommitTimestamp"}
)


def is_duration(field: str) -> bool:
    """Rule 4."""
    return field.endswith("TimeMs") and field not in WALL_CLOCK_FIELDS


def normalize(value: Any, root: str, names: Optional[Dict[str, str]] = None) -> Any:
    """``value`` (JSON-able) with rules 1-7 applied; ``root`` is the run's scratch folder,
    ``names`` the session's own names and what stands for each (rule 6)."""
    if isinstance(value, dict):
        if value.get("key") in WALL_CLOCK_PROPERTIES and value.get("value") is not None:
            value = {**value, "value": "<time>"}
        return {k: _field(k, v, root, names) for k, v in value.items()}
    if isinstance(value, list):
        return [normalize(v, root, names) for v in value]
    if isinstance(value, str):
        value = UUID.sub("<uuid>", value.replace(root, "<root>"))
        for name, stands_for in (names or {}).items():
            value = value.replace(name, stands_for)
        return EXPRESSION_ID.sub("#<n>", value)
    return value


def _field(name: str, value: Any, root: str, names: Optional[Dict[str, str]]) -> Any:
    if value is None:
        return None
    if name in WALL_CLOCK_FIELDS:
        return "<time>"
    if is_duration(name):
        return "<duration>"
    return normalize(value, root, names)
