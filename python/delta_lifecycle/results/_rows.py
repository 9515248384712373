"""The row parsing the result types share: a row's columns checked against its statement's,
values checked against a `Literal` type, and optional values."""

from __future__ import annotations

from typing import Any, Dict, Optional, Tuple, get_args

from pyspark.sql import Row


def _fields(row: Row, columns: Tuple[str, ...], statement: str) -> Dict[str, Any]:
    fields = row.asDict(recursive=False)
    missing = [c for c in columns if c not in fields]
    if missing:
        raise ValueError(
            f"The row has no column {', '.join(missing)}; it is not a row of {statement}, "
            "or the delta-lifecycle jar on the cluster does not match this Python package. "
            f"Columns: {sorted(fields)}"
        )
    return fields


def _one_of(value: Any, allowed: Any, column: str, statement: str) -> str:
    """`value` as a string, checked against the values of the `Literal` type `allowed`."""
    names: Tuple[str, ...] = get_args(allowed)
    text = str(value)
    if text not in names:
        raise ValueError(
            f"{statement} returned {column} {text!r}, which is not one of "
            f"{', '.join(repr(n) for n in names)}; the delta-lifecycle jar on the cluster "
            "does not match this Python package."
        )
    return text


def _optional_int(value: Any) -> Optional[int]:
    return None if value is None else int(value)


def _optional_str(value: Any) -> Optional[str]:
    return None if value is None else str(value)


def _optional_names(value: Any) -> Optional[Tuple[str, ...]]:
    return None if value is None else tuple(str(v) for v in value)
