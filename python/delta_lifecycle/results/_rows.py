"""The row parsing the result types share: a row's columns checked against its statement's,
values checked against a `Literal` type, and each result built from its row by one rule."""

from __future__ import annotations

import dataclasses
import functools
from typing import (
    TYPE_CHECKING,
    Any,
    Callable,
    ClassVar,
    Dict,
    Literal,
    Mapping,
    Optional,
    Tuple,
    Type,
    TypeVar,
    Union,
    cast,
    get_args,
    get_origin,
    get_type_hints,
)

from pyspark.sql import Row

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

_Result = TypeVar("_Result", bound="DataclassInstance")
_StatementRow = TypeVar("_StatementRow", bound="StatementRow")

_Converter = Callable[[Any], Any]


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


def _optional_names(value: Any) -> Optional[Tuple[str, ...]]:
    return None if value is None else tuple(str(v) for v in value)


def _column(field: str) -> str:
    """The column of a result's field: `size_in_bytes` is `sizeInBytes`."""
    head, *rest = field.split("_")
    return head + "".join(part.capitalize() for part in rest)


def _converter(hint: Any, column: str, statement: str) -> _Converter:
    """What turns a column's value into a field of type `hint`: `int`, `str` and `bool` by
    their constructors, a `Literal` checked by `_one_of`, `Optional[X]` and `Tuple[X, ...]`
    item by item, a result type (a struct column) by `_build`; anything else (`datetime`) as
    PySpark returns it."""
    origin, args = get_origin(hint), get_args(hint)
    if origin is Union:
        inner = _converter(next(a for a in args if a is not type(None)), column, statement)
        return lambda value: None if value is None else inner(value)
    if origin is tuple:
        item = _converter(args[0], column, statement)
        return lambda value: tuple(item(v) for v in value)
    if origin is Literal:
        return lambda value: _one_of(value, hint, column, statement)
    if hint in (int, str, bool):
        return cast(_Converter, hint)
    if dataclasses.is_dataclass(hint):
        return lambda value: _build(cast("Type[DataclassInstance]", hint), value, statement)
    return lambda value: value


@functools.lru_cache(maxsize=None)
def _converters(
    cls: Type[DataclassInstance], statement: str
) -> Tuple[Tuple[str, str, _Converter], ...]:
    """Each field of `cls` with its column and converter, in order."""
    hints = get_type_hints(cls)
    return tuple(
        (f.name, _column(f.name), _converter(hints[f.name], _column(f.name), statement))
        for f in dataclasses.fields(cls)
    )


def _build(
    cls: Type[_Result],
    values: Mapping[str, Any],
    statement: str,
    **convert: _Converter,
) -> _Result:
    """`cls` with each field from the value of its column in `values`, converted by its type
    (`_converter`) or, for the fields named in `convert`, by the function given there."""
    arguments = {
        name: convert[name](values[column]) if name in convert else converter(values[column])
        for name, column, converter in _converters(cls, statement)
    }
    return cls(**arguments)


def _from_row(
    cls: Type[_Result],
    row: Row,
    columns: Tuple[str, ...],
    statement: str,
    **convert: _Converter,
) -> _Result:
    """The result `cls` of `statement` from one of its rows, whose `columns` are the fields
    of `cls` in order (`_column`); raises `ValueError` when the row lacks a column or a value
    is not one its field's `Literal` type allows."""
    fields = tuple(column for _, column, _ in _converters(cls, statement))
    if fields != columns:
        raise TypeError(f"{cls.__name__}'s fields {fields} are not the columns {columns}")
    return _build(cls, _fields(row, columns, statement), statement, **convert)


class StatementRow:
    """A result type that one row of its statement builds: `class R(StatementRow,
    columns=R_COLUMNS, statement="DESCRIBE …")`, a frozen dataclass whose fields are the
    statement's columns in order."""

    _columns: ClassVar[Tuple[str, ...]]
    _statement: ClassVar[str]

    def __init_subclass__(cls, *, columns: Tuple[str, ...], statement: str, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        cls._columns = columns
        cls._statement = statement

    @classmethod
    def from_row(cls: Type[_StatementRow], row: Row) -> _StatementRow:
        """Build this result from one row of its statement.

        Raises `ValueError` when the row lacks one of the statement's columns or has a value
        outside its field's `Literal` type, which means the delta-lifecycle jar on the JVM
        does not match this Python package.

        Examples
        --------
        >>> from delta_lifecycle.results import CompactionResult
        >>> rows = spark.sql("ALTER TABLE delta.`/data/events` COMPACT LOG").collect()
        >>> CompactionResult.from_row(rows[0]).status
        'written'
        """
        result = _from_row(
            cast("Type[DataclassInstance]", cls), row, cls._columns, cls._statement
        )
        return cast(_StatementRow, result)
