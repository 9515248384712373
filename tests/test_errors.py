"""Errors: the extension's conditions arrive as typed Python errors, Spark's own errors keep
their types, and statements that are not ours still reach Delta and Spark unchanged."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import List, Type

import pytest
from pyspark.errors import AnalysisException, ParseException, PySparkException
from pyspark.sql import SparkSession

from spark_errors import condition_of
from spark_line import pyspark_error
from delta_lifecycle import LifecycleTable, errors
from delta_lifecycle.config import jar_path
from delta_lifecycle.errors import (
    DeltaLifecycleError,
    NotADeltaTableError,
    NotDeltaProviderError,
    TableNotFoundError,
    convert_exception,
    translate_errors,
)
from delta_lifecycle.tables import quote_path


def assert_typed(error: DeltaLifecycleError, condition: str) -> None:
    """The typed error carries the JVM condition, a message, and the PySpark cause."""
    assert error.condition == condition
    assert error.message and not error.message.startswith("[")
    assert str(error).startswith(f"[{condition}] ")
    cause = error.__cause__
    assert isinstance(cause, AnalysisException)
    assert condition_of(cause) == condition


def test_parquet_directory_is_not_a_delta_table(spark: SparkSession, tmp_path: Path) -> None:
    path = tmp_path / "plain_parquet"
    spark.range(3).write.parquet(str(path))
    with pytest.raises(NotADeltaTableError) as caught:
        LifecycleTable.for_path(spark, str(path)).protocol_history()
    assert_typed(caught.value, "DELTA_LIFECYCLE_NOT_A_DELTA_TABLE")
    assert str(path) in caught.value.message

    with pytest.raises(AnalysisException) as raw:
        spark.sql(f"DESCRIBE PROTOCOL HISTORY {quote_path(str(path))}").collect()
    assert condition_of(raw.value) == "DELTA_LIFECYCLE_NOT_A_DELTA_TABLE"
    # Spark's class for an undefined table, from the jar's error-conditions resource.
    assert raw.value.getSqlState() == "42P01"
    assert raw.value.getMessageParameters()["path"].endswith(str(path))


def test_missing_path_is_not_a_delta_table(spark: SparkSession, tmp_path: Path) -> None:
    with pytest.raises(NotADeltaTableError) as caught:
        LifecycleTable.for_path(spark, str(tmp_path / "nothing here")).protocol_history()
    assert_typed(caught.value, "DELTA_LIFECYCLE_NOT_A_DELTA_TABLE")


def test_empty_delta_log_is_not_a_delta_table(spark: SparkSession, tmp_path: Path) -> None:
    (tmp_path / "t" / "_delta_log").mkdir(parents=True)
    with pytest.raises(NotADeltaTableError) as caught:
        LifecycleTable.for_path(spark, str(tmp_path / "t")).protocol_history()
    assert_typed(caught.value, "DELTA_LIFECYCLE_NOT_A_DELTA_TABLE")


def test_unknown_table_name(spark: SparkSession) -> None:
    with pytest.raises(TableNotFoundError) as caught:
        LifecycleTable.for_name(spark, "no_such_db.no_such_table").protocol_history()
    assert_typed(caught.value, "DELTA_LIFECYCLE_TABLE_NOT_FOUND")

    with pytest.raises(TableNotFoundError):
        LifecycleTable.for_name(spark, "no_such_table_in_default").protocol_history()


def test_parquet_catalog_table_is_not_delta(spark: SparkSession) -> None:
    spark.sql("CREATE TABLE parquet_events (id INT) USING parquet")
    spark.sql("INSERT INTO parquet_events VALUES (1)")
    with pytest.raises(NotDeltaProviderError) as caught:
        LifecycleTable.for_name(spark, "parquet_events").protocol_history()
    assert_typed(caught.value, "DELTA_LIFECYCLE_NOT_DELTA_PROVIDER")
    assert "parquet" in caught.value.message.lower()


def test_statement_without_table_is_a_parse_error(spark: SparkSession) -> None:
    with pytest.raises(ParseException):
        spark.sql("DESCRIBE PROTOCOL HISTORY")
    # A ParseException is Spark's, not ours: the wrapper lets it through untouched.
    with pytest.raises(ParseException):
        LifecycleTable.for_name(spark, "two words").protocol_history()


def test_other_statements_still_work(spark: SparkSession, tmp_path: Path) -> None:
    """Statements that are not ours reach Delta's and Spark's parsers unchanged."""
    assert spark.sql("SELECT 1 AS one").collect()[0]["one"] == 1
    assert spark.sql("DESCRIBE FUNCTION upper").count() > 0

    table = quote_path(str(tmp_path / "t"))
    spark.sql(
        f"CREATE TABLE {table} (id INT) USING delta "
        "TBLPROPERTIES ('delta.enableInCommitTimestamps' = 'true')"
    )
    spark.sql(f"INSERT INTO {table} VALUES (1), (2)")
    versions = [r["version"] for r in spark.sql(f"DESCRIBE HISTORY {table}").collect()]
    assert sorted(versions) == [0, 1]

    def features() -> set[str]:
        return set(spark.sql(f"DESCRIBE DETAIL {table}").collect()[0]["tableFeatures"])

    assert "inCommitTimestamp" in features()
    # This project's DROP FEATURE; its downgrade commit is recorded as delta-spark's would be.
    spark.sql(f"ALTER TABLE {table} DROP FEATURE inCommitTimestamp")
    assert "inCommitTimestamp" not in features()

    history = LifecycleTable.for_path(spark, str(tmp_path / "t")).protocol_history()
    assert "inCommitTimestamp" in (history[0].writer_features or ())
    assert "inCommitTimestamp" not in (history[-1].writer_features or ())
    assert history[-1].operation == "DROP FEATURE"


def test_conversion_of_conditions_without_a_session() -> None:
    """Conditions the package does not know yet still become a DeltaLifecycleError, and
    other conditions are left alone."""
    newer = pyspark_error("from a newer jar", "DELTA_LIFECYCLE_SOMETHING_NEW")
    converted = convert_exception(newer)
    assert type(converted) is DeltaLifecycleError
    assert converted.condition == "DELTA_LIFECYCLE_SOMETHING_NEW"
    assert converted.message == "from a newer jar"

    spark_own = pyspark_error("not ours", "TABLE_OR_VIEW_NOT_FOUND")
    assert convert_exception(spark_own) is None
    assert convert_exception(ValueError("plain")) is None
    with pytest.raises(PySparkException) as caught:
        with translate_errors():
            raise spark_own
    assert caught.value is spark_own


REPO_ROOT = Path(__file__).resolve().parents[1]
CONDITIONS_SOURCE = (
    REPO_ROOT / "scala/src/main/resources/error/delta-lifecycle-error-conditions.json"
)


def typed_classes() -> List[Type[DeltaLifecycleError]]:
    """Every subclass of DeltaLifecycleError that the package defines, at any depth, found
    by walking the class tree rather than any list the package keeps."""
    found: List[Type[DeltaLifecycleError]] = []
    pending: List[Type[DeltaLifecycleError]] = [DeltaLifecycleError]
    while pending:
        for sub in pending.pop().__subclasses__():
            if sub.__module__ == errors.__name__:
                found.append(sub)
            pending.append(sub)
    return found


def test_python_knows_exactly_the_conditions_the_jar_defines() -> None:
    """One class per condition of the bundled jar's error-conditions resource, no more."""
    with zipfile.ZipFile(jar_path()) as jar:
        resource = json.loads(jar.read("error/delta-lifecycle-error-conditions.json"))
    assert sorted(cls.CONDITION for cls in typed_classes()) == sorted(resource)
    assert all(len(info["sqlState"]) == 5 for info in resource.values())


def test_python_knows_exactly_the_conditions_of_the_source() -> None:
    """The same agreement with the resource in the source tree, so a condition added to the
    JSON without a Python class (or a class whose condition the JSON lacks) fails before any
    jar is built."""
    resource = json.loads(CONDITIONS_SOURCE.read_text())
    assert sorted(cls.CONDITION for cls in typed_classes()) == sorted(resource)


def test_every_typed_class_is_exported_and_converted() -> None:
    for cls in typed_classes():
        assert cls.__name__ in errors.__all__ and getattr(errors, cls.__name__) is cls
        converted = convert_exception(pyspark_error("why", cls.CONDITION))
        assert type(converted) is cls
        assert converted.condition == cls.CONDITION and converted.message == "why"
    exported = [getattr(errors, name) for name in errors.__all__]
    assert len(set(errors.__all__)) == len(errors.__all__)
    assert {c for c in exported if isinstance(c, type) and issubclass(c, DeltaLifecycleError)} == (
        set(typed_classes()) | {DeltaLifecycleError}
    )


REGISTRY_REFUSALS = """
import pytest
from delta_lifecycle import errors
from delta_lifecycle.errors import DeltaLifecycleError, NotADeltaTableError

before = dict(errors._BY_CONDITION)
with pytest.raises(TypeError, match="must declare CONDITION"):
    class NoCondition(DeltaLifecycleError):
        __module__ = errors.__name__
with pytest.raises(TypeError, match="already NotADeltaTableError's condition"):
    class SameCondition(DeltaLifecycleError):
        __module__ = errors.__name__
        CONDITION = NotADeltaTableError.CONDITION
class UsersOwn(NotADeltaTableError):
    pass
assert errors._BY_CONDITION == before
"""


def test_a_typed_class_needs_its_own_new_condition() -> None:
    """The registry refuses a class of the package without a condition, or with one that
    another class already stands for, and keeps out subclasses users define. In a fresh
    interpreter, so the refused classes cannot show up in this one's class tree."""
    run = subprocess.run(
        [sys.executable, "-c", REGISTRY_REFUSALS], capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, run.stdout + run.stderr
