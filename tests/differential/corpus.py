"""The differential corpus: Delta operations, each a few lines, that a session with this
extension must do exactly as a stock delta-spark session does (docs/differential.md).

An operation is a function of ``(spark, t)``, where ``t`` is a :class:`TableRef`: the table
by name in the metastore or by path, created beforehand by the operation's ``setup``. It
returns what the operation gave back (rows, metrics, a table read afterwards) as JSON-able
values, or raises; tests/differential/runner.py runs it and records the result or the error.

Column names never collide with the fields the comparison normalizes (``id``, ``timestamp``,
``createdAt``, ...: tests/differential/normalize.py), so a table's own data is always
compared as it is.
"""

from __future__ import annotations

import datetime
import decimal
import json
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional, Union

from delta.tables import DeltaTable
from py4j.protocol import Py4JJavaError
from pyspark.errors import PySparkException
from pyspark.sql import DataFrame, DataFrameWriter, Row, SparkSession

from spark_errors import condition_of


@dataclass(frozen=True)
class TableRef:
    """The table an operation works on, as the operation names it."""

    kind: str  # "name" (in the session's metastore) or "path"
    name: str  # its name in the metastore; by path, only the stem of its siblings' names
    path: str  # its location by path; "" by name
    scratch: Path  # a folder of this operation's own (clone targets, stream sources, sinks)

    @property
    def by_name(self) -> bool:
        return self.kind == "name"

    @property
    def sql(self) -> str:
        """The table in SQL text."""
        return self.name if self.by_name else f"delta.`{self.path}`"

    @property
    def identifier(self) -> str:
        """The table as a string argument (``table_changes``, ``isDeltaTable``)."""
        return self.name if self.by_name else self.path

    def sibling(self, suffix: str) -> "TableRef":
        """Another table of the same kind (a clone target, a clone source)."""
        path = "" if self.by_name else str(self.scratch / suffix)
        return TableRef(self.kind, f"{self.name}_{suffix}", path, self.scratch / suffix)

    def read(self, spark: SparkSession, **options: Any) -> DataFrame:
        reader = spark.read.format("delta").options(**options)
        return reader.table(self.name) if self.by_name else reader.load(self.path)

    def save(self, writer: DataFrameWriter) -> None:
        if self.by_name:
            writer.saveAsTable(self.name)
        else:
            writer.save(self.path)

    def delta_table(self, spark: SparkSession) -> DeltaTable:
        if self.by_name:
            return DeltaTable.forName(spark, self.name)
        return DeltaTable.forPath(spark, self.path)

    def read_stream(self, spark: SparkSession, **options: Any) -> DataFrame:
        reader = spark.readStream.format("delta").options(**options)
        return reader.table(self.name) if self.by_name else reader.load(self.path)

    def write_stream(self, df: DataFrame, checkpoint: Path) -> None:
        """Write the stream ``df`` into this table until its input is drained (AvailableNow)."""
        writer = (
            df.writeStream.format("delta")
            .option("checkpointLocation", str(checkpoint))
            .trigger(availableNow=True)
        )
        query = writer.toTable(self.name) if self.by_name else writer.start(self.path)
        query.awaitTermination()


Setup = Callable[[SparkSession, TableRef], None]
Run = Callable[[SparkSession, TableRef], Any]
Expectation = Union[None, str, Dict[str, Optional[str]]]


@dataclass(frozen=True)
class Operation:
    name: str
    category: str
    run: Run
    #: Creates the table's history; ``None``: the operation creates the table itself. A
    #: redirected run needs a table to redirect, and uses :func:`basic_table` then.
    setup: Optional[Setup]
    #: The error condition (or, without one, the exception class) stock delta-spark gives on
    #: the primary line, ``None`` when it succeeds, or one of those by kind of reference
    #: (``{"name": ..., "path": ...}``); the suite checks it, so that two equal failures of
    #: the harness itself never pass as agreement.
    fails: Expectation
    #: The same on Spark 3.5 (delta-spark 3.3), where it differs.
    fails_on_35: Expectation
    #: Part of the slice CI runs, one operation of each category (the whole corpus runs with
    #: DELTA_LIFECYCLE_FULL_MATRIX=1, ``make differential``).
    ci: bool

    def expected_failure(self, on_spark_35: bool, kind: str) -> Optional[str]:
        expected = self.fails_on_35 if on_spark_35 else self.fails
        return expected.get(kind) if isinstance(expected, dict) else expected


OPERATIONS: List[Operation] = []
_SAME = "<same as the primary line>"


def operation(
    category: str,
    setup: Optional[Setup] = None,
    fails: Expectation = None,
    fails_on_35: Expectation = _SAME,
    ci: bool = False,
) -> Callable[[Run], Run]:
    def register(run: Run) -> Run:
        on_35 = fails if fails_on_35 == _SAME else fails_on_35
        OPERATIONS.append(Operation(run.__name__, category, run, setup, fails, on_35, ci))
        return run

    return register


def by_name(name: str) -> Operation:
    return next(op for op in OPERATIONS if op.name == name)


# ---- results ----------------------------------------------------------------------------


def jsonable(value: Any) -> Any:
    if isinstance(value, Row):
        return {k: jsonable(v) for k, v in value.asDict(recursive=False).items()}
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, (datetime.datetime, datetime.date)):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, (bytes, bytearray)):
        return value.hex()
    return value


def rows(df: Optional[DataFrame]) -> Any:
    """The rows of ``df`` in a stable order (``None`` for an API that returns nothing)."""
    if df is None:
        return None
    return sorted(jsonable(df.collect()), key=lambda r: json.dumps(r, sort_keys=True))


def ordered_rows(df: DataFrame) -> Any:
    """The rows of ``df`` in its own order (history, newest first)."""
    return jsonable(df.collect())


def sql(spark: SparkSession, text: str) -> Any:
    return rows(spark.sql(text))


def table_rows(spark: SparkSession, t: TableRef) -> Any:
    """What the table holds now, read through SQL (routed on every line)."""
    df = spark.sql(f"SELECT * FROM {t.sql}")
    return {"schema": df.schema.simpleString(), "rows": rows(df)}


@contextmanager
def session_conf(spark: SparkSession, settings: Dict[str, str]) -> Iterator[None]:
    before = {key: spark.conf.get(key, None) for key in settings}
    for key, value in settings.items():
        spark.conf.set(key, value)
    try:
        yield
    finally:
        for key, value in before.items():
            if value is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, value)


def commit_time(spark: SparkSession, t: TableRef, version: int) -> str:
    """The timestamp of ``version`` as TIMESTAMP AS OF takes it."""
    row = spark.sql(f"DESCRIBE HISTORY {t.sql}").where(f"version = {version}").first()
    assert row is not None, f"no version {version}"
    stamp: datetime.datetime = row["timestamp"]
    return stamp.strftime("%Y-%m-%d %H:%M:%S.%f")


NO_RETENTION_CHECK = {"spark.databricks.delta.retentionDurationCheck.enabled": "false"}


# ---- setups: each table's history -------------------------------------------------------

BASIC_COLUMNS = "key INT, value STRING"


def create(spark: SparkSession, t: TableRef, columns: str = BASIC_COLUMNS, clauses: str = "") -> None:
    spark.sql(f"CREATE TABLE {t.sql} ({columns}) USING delta {clauses}")


def insert_one_file(spark: SparkSession, t: TableRef, values: str) -> None:
    """Insert ``values`` as one file per partition. OPTIMIZE reads files of equal size in the
    order of their names, which are random: two files of the same size would make the file
    it writes differ between runs by the order of its rows (and so its size by a byte)."""
    spark.sql(f"INSERT INTO {t.sql} SELECT /*+ COALESCE(1) */ * FROM VALUES {values}")


def fill(spark: SparkSession, t: TableRef) -> None:
    """Two commits of a file each: keys 1-3, then 4-5."""
    insert_one_file(spark, t, "(1, 'a'), (2, 'b'), (3, 'c')")
    insert_one_file(spark, t, "(4, 'd'), (5, 'e')")


def basic_table(spark: SparkSession, t: TableRef) -> None:
    create(spark, t)
    fill(spark, t)


def properties_table(**properties: str) -> Setup:
    clause = ", ".join(f"'{k}' = '{v}'" for k, v in properties.items())

    def setup(spark: SparkSession, t: TableRef) -> None:
        create(spark, t, clauses=f"TBLPROPERTIES ({clause})")
        fill(spark, t)

    return setup


mapped_table = properties_table(**{"delta.columnMapping.mode": "name"})
dv_table = properties_table(**{"delta.enableDeletionVectors": "true"})
append_only_table = properties_table(**{"delta.appendOnly": "true"})


def partitioned_table(spark: SparkSession, t: TableRef) -> None:
    create(spark, t, BASIC_COLUMNS + ", part STRING", "PARTITIONED BY (part)")
    insert_one_file(spark, t, "(1, 'a', 'x'), (2, 'b', 'y'), (3, 'c', 'x')")
    insert_one_file(spark, t, "(4, 'd', 'y'), (5, 'e', 'x')")


def cdf_table(spark: SparkSession, t: TableRef) -> None:
    """Versions 0-4: create, two inserts, an update and a delete, with the change data feed."""
    properties_table(**{"delta.enableChangeDataFeed": "true"})(spark, t)
    spark.sql(f"UPDATE {t.sql} SET value = 'B' WHERE key = 2")
    spark.sql(f"DELETE FROM {t.sql} WHERE key = 3")


def rewritten_table(spark: SparkSession, t: TableRef) -> None:
    """The basic table overwritten once: its first files are removed and vacuumable."""
    basic_table(spark, t)
    spark.sql(f"INSERT OVERWRITE {t.sql} VALUES (6, 'f'), (7, 'g')")


def clustered_table(spark: SparkSession, t: TableRef) -> None:
    create(spark, t, clauses="CLUSTER BY (key)")
    fill(spark, t)


def generated_table(spark: SparkSession, t: TableRef) -> None:
    create(spark, t, BASIC_COLUMNS + ", doubled INT GENERATED ALWAYS AS (key * 2)")
    spark.sql(f"INSERT INTO {t.sql} (key, value) VALUES (1, 'a'), (2, 'b'), (3, 'c')")


def identity_table(spark: SparkSession, t: TableRef) -> None:
    create(spark, t, "ident BIGINT GENERATED ALWAYS AS IDENTITY, value STRING")
    spark.sql(f"INSERT INTO {t.sql} (value) VALUES ('a'), ('b'), ('c')")


def constrained_table(spark: SparkSession, t: TableRef) -> None:
    basic_table(spark, t)
    spark.sql(f"ALTER TABLE {t.sql} ADD CONSTRAINT key_positive CHECK (key > 0)")


# ---- batch DML ----------------------------------------------------------------------------

UPSERT_SOURCE = "(SELECT * FROM VALUES (1, 'one'), (9, 'nine') AS s(key, value))"


@operation("dml", basic_table)
def insert_values(spark: SparkSession, t: TableRef) -> Any:
    return sql(spark, f"INSERT INTO {t.sql} VALUES (10, 'x'), (11, 'y')")


@operation("dml", basic_table)
def insert_select(spark: SparkSession, t: TableRef) -> Any:
    return sql(spark, f"INSERT INTO {t.sql} SELECT CAST(id AS INT), CAST(id AS STRING) FROM range(20, 30)")


@operation("dml", basic_table)
def insert_column_list(spark: SparkSession, t: TableRef) -> Any:
    return sql(spark, f"INSERT INTO {t.sql} (value, key) VALUES ('z', 12)")


@operation("dml", basic_table)
def insert_by_name(spark: SparkSession, t: TableRef) -> Any:
    return sql(spark, f"INSERT INTO {t.sql} BY NAME SELECT 'w' AS value, 13 AS key")


@operation("dml", basic_table, fails="DELTA_INSERT_COLUMN_ARITY_MISMATCH")
def insert_too_few_columns(spark: SparkSession, t: TableRef) -> Any:
    return sql(spark, f"INSERT INTO {t.sql} VALUES (14)")


@operation("dml", basic_table)
def insert_overwrite(spark: SparkSession, t: TableRef) -> Any:
    return sql(spark, f"INSERT OVERWRITE {t.sql} SELECT key + 100, value FROM {t.sql}")


@operation("dml", partitioned_table)
def insert_overwrite_partition(spark: SparkSession, t: TableRef) -> Any:
    return sql(spark, f"INSERT OVERWRITE {t.sql} PARTITION (part = 'x') VALUES (100, 'new')")


@operation("dml", partitioned_table)
def insert_overwrite_dynamic(spark: SparkSession, t: TableRef) -> Any:
    with session_conf(spark, {"spark.sql.sources.partitionOverwriteMode": "dynamic"}):
        return sql(spark, f"INSERT OVERWRITE {t.sql} VALUES (200, 'dyn', 'y')")


@operation("dml", partitioned_table)
def insert_replace_where(spark: SparkSession, t: TableRef) -> Any:
    return sql(spark, f"INSERT INTO {t.sql} REPLACE WHERE part = 'x' VALUES (300, 'rw', 'x')")


@operation("dml", basic_table)
def df_append(spark: SparkSession, t: TableRef) -> Any:
    df = spark.createDataFrame([(40, "df")], BASIC_COLUMNS)
    t.save(df.write.format("delta").mode("append"))
    return table_rows(spark, t)


@operation("dml", basic_table)
def df_overwrite(spark: SparkSession, t: TableRef) -> Any:
    df = spark.createDataFrame([(41, "over")], BASIC_COLUMNS)
    t.save(df.write.format("delta").mode("overwrite"))
    return table_rows(spark, t)


# delta-spark 3.3 cannot overwrite a table by name with a condition (saveAsTable goes through
# Spark's V2 OverwriteByExpression, which its table does not support).
@operation("dml", partitioned_table, fails_on_35={"name": "_LEGACY_ERROR_TEMP_1113", "path": None}, ci=True)
def df_replace_where(spark: SparkSession, t: TableRef) -> Any:
    df = spark.createDataFrame([(42, "rw", "y")], BASIC_COLUMNS + ", part STRING")
    t.save(df.write.format("delta").mode("overwrite").option("replaceWhere", "part = 'y'"))
    return table_rows(spark, t)


@operation("dml", partitioned_table, fails="DELTA_REPLACE_WHERE_MISMATCH")
def df_replace_where_mismatch(spark: SparkSession, t: TableRef) -> Any:
    df = spark.createDataFrame([(43, "rw", "x")], BASIC_COLUMNS + ", part STRING")
    t.save(df.write.format("delta").mode("overwrite").option("replaceWhere", "part = 'y'"))


@operation("dml", basic_table)
def df_append_merge_schema(spark: SparkSession, t: TableRef) -> Any:
    df = spark.createDataFrame([(44, "m", 1.5)], BASIC_COLUMNS + ", extra DOUBLE")
    t.save(df.write.format("delta").mode("append").option("mergeSchema", "true"))
    return table_rows(spark, t)


@operation("dml", basic_table, fails="DELTA_METADATA_MISMATCH")
def df_append_schema_mismatch(spark: SparkSession, t: TableRef) -> Any:
    df = spark.createDataFrame([(45, "m", 1.5)], BASIC_COLUMNS + ", extra DOUBLE")
    t.save(df.write.format("delta").mode("append"))


@operation("dml", basic_table)
def df_overwrite_schema(spark: SparkSession, t: TableRef) -> Any:
    df = spark.createDataFrame([("only", 1)], "label STRING, amount INT")
    t.save(df.write.format("delta").mode("overwrite").option("overwriteSchema", "true"))
    return table_rows(spark, t)


@operation("dml", basic_table)
def update(spark: SparkSession, t: TableRef) -> Any:
    return sql(spark, f"UPDATE {t.sql} SET value = upper(value) WHERE key > 2")


@operation("dml", basic_table)
def update_every_row(spark: SparkSession, t: TableRef) -> Any:
    return sql(spark, f"UPDATE {t.sql} SET key = key + 100")


@operation("dml", basic_table)
def delete(spark: SparkSession, t: TableRef) -> Any:
    return sql(spark, f"DELETE FROM {t.sql} WHERE key = 1")


@operation("dml", basic_table)
def delete_every_row(spark: SparkSession, t: TableRef) -> Any:
    return sql(spark, f"DELETE FROM {t.sql}")


@operation("dml", dv_table)
def delete_with_deletion_vectors(spark: SparkSession, t: TableRef) -> Any:
    return sql(spark, f"DELETE FROM {t.sql} WHERE key = 2")


@operation("dml", basic_table)
def merge_upsert(spark: SparkSession, t: TableRef) -> Any:
    return sql(spark, f"""MERGE INTO {t.sql} AS t USING {UPSERT_SOURCE} AS s ON t.key = s.key
        WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *""")


@operation("dml", basic_table)
def merge_not_matched_by_source(spark: SparkSession, t: TableRef) -> Any:
    return sql(spark, f"""MERGE INTO {t.sql} AS t USING {UPSERT_SOURCE} AS s ON t.key = s.key
        WHEN MATCHED THEN UPDATE SET value = s.value WHEN NOT MATCHED BY SOURCE THEN DELETE""")


@operation("dml", basic_table)
def merge_conditional_clauses(spark: SparkSession, t: TableRef) -> Any:
    source = "(SELECT * FROM VALUES (1, 'drop'), (2, 'two'), (8, 'eight'), (3, 'skip') AS s(key, value))"
    return sql(spark, f"""MERGE INTO {t.sql} AS t USING {source} AS s ON t.key = s.key
        WHEN MATCHED AND s.value = 'drop' THEN DELETE
        WHEN MATCHED AND s.value != 'skip' THEN UPDATE SET value = s.value
        WHEN NOT MATCHED AND s.key > 5 THEN INSERT *""")


EVOLVING_SOURCE = "(SELECT * FROM VALUES (1, 'one', true), (9, 'nine', false) AS s(key, value, flag))"


@operation("dml", basic_table)
def merge_schema_evolution(spark: SparkSession, t: TableRef) -> Any:
    with session_conf(spark, {"spark.databricks.delta.schema.autoMerge.enabled": "true"}):
        sql(spark, f"""MERGE INTO {t.sql} AS t USING {EVOLVING_SOURCE} AS s ON t.key = s.key
            WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *""")
    return table_rows(spark, t)


@operation("dml", basic_table, fails_on_35="PARSE_SYNTAX_ERROR")
def merge_with_schema_evolution_clause(spark: SparkSession, t: TableRef) -> Any:
    sql(spark, f"""MERGE WITH SCHEMA EVOLUTION INTO {t.sql} AS t USING {EVOLVING_SOURCE} AS s
        ON t.key = s.key WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *""")
    return table_rows(spark, t)


@operation("dml", basic_table, fails="DELTA_MULTIPLE_SOURCE_ROW_MATCHING_TARGET_ROW_IN_MERGE")
def merge_duplicate_source_rows(spark: SparkSession, t: TableRef) -> Any:
    source = "(SELECT * FROM VALUES (1, 'x'), (1, 'y') AS s(key, value))"
    return sql(spark, f"""MERGE INTO {t.sql} AS t USING {source} AS s ON t.key = s.key
        WHEN MATCHED THEN UPDATE SET value = s.value""")


# ---- DDL ----------------------------------------------------------------------------------

CTAS_QUERY = "SELECT CAST(id AS INT) AS key, CAST(id AS STRING) AS value FROM range(3)"


@operation("ddl", None)
def create_table_as_select(spark: SparkSession, t: TableRef) -> Any:
    sql(spark, f"CREATE TABLE {t.sql} USING delta AS {CTAS_QUERY}")
    return table_rows(spark, t)


@operation("ddl", None)
def create_partitioned_as_select_with_properties(spark: SparkSession, t: TableRef) -> Any:
    sql(spark, f"""CREATE TABLE {t.sql} USING delta PARTITIONED BY (value)
        TBLPROPERTIES ('delta.appendOnly' = 'true', 'owner.note' = 'x') AS {CTAS_QUERY}""")
    return sql(spark, f"SHOW TBLPROPERTIES {t.sql}")


@operation("ddl", basic_table, fails="TABLE_OR_VIEW_ALREADY_EXISTS")
def create_table_as_select_existing(spark: SparkSession, t: TableRef) -> Any:
    return sql(spark, f"CREATE TABLE {t.sql} USING delta AS {CTAS_QUERY}")


@operation("ddl", basic_table)
def create_table_if_not_exists_existing(spark: SparkSession, t: TableRef) -> Any:
    sql(spark, f"CREATE TABLE IF NOT EXISTS {t.sql} (other INT) USING delta")
    return table_rows(spark, t)


@operation("ddl", basic_table)
def replace_table_as_select(spark: SparkSession, t: TableRef) -> Any:
    sql(spark, f"REPLACE TABLE {t.sql} USING delta AS SELECT 'r' AS label")
    return table_rows(spark, t)


@operation("ddl", basic_table)
def create_or_replace_table_as_select(spark: SparkSession, t: TableRef) -> Any:
    sql(spark, f"CREATE OR REPLACE TABLE {t.sql} USING delta AS {CTAS_QUERY}")
    return table_rows(spark, t)


@operation("ddl", mapped_table)
def add_columns_mapped(spark: SparkSession, t: TableRef) -> Any:
    sql(spark, f"ALTER TABLE {t.sql} ADD COLUMNS (extra STRING)")
    sql(spark, f"INSERT INTO {t.sql} VALUES (6, 'f', 'more')")
    return table_rows(spark, t)


@operation("ddl", mapped_table, ci=True)
def rename_column_mapped(spark: SparkSession, t: TableRef) -> Any:
    sql(spark, f"ALTER TABLE {t.sql} RENAME COLUMN value TO label")
    return table_rows(spark, t)


@operation("ddl", mapped_table)
def drop_column_mapped(spark: SparkSession, t: TableRef) -> Any:
    sql(spark, f"ALTER TABLE {t.sql} DROP COLUMN value")
    return table_rows(spark, t)


@operation("ddl", basic_table, fails="DELTA_UNSUPPORTED_RENAME_COLUMN")
def rename_column_unmapped(spark: SparkSession, t: TableRef) -> Any:
    return sql(spark, f"ALTER TABLE {t.sql} RENAME COLUMN value TO label")


@operation("ddl", basic_table, fails="DELTA_UNSUPPORTED_DROP_COLUMN")
def drop_column_unmapped(spark: SparkSession, t: TableRef) -> Any:
    return sql(spark, f"ALTER TABLE {t.sql} DROP COLUMN value")


@operation("ddl", basic_table)
def enable_column_mapping(spark: SparkSession, t: TableRef) -> Any:
    sql(spark, f"ALTER TABLE {t.sql} SET TBLPROPERTIES ('delta.columnMapping.mode' = 'name')")
    return sql(spark, f"SHOW TBLPROPERTIES {t.sql}")


@operation("ddl", basic_table)
def add_check_constraint(spark: SparkSession, t: TableRef) -> Any:
    sql(spark, f"ALTER TABLE {t.sql} ADD CONSTRAINT key_positive CHECK (key > 0)")
    return sql(spark, f"SHOW TBLPROPERTIES {t.sql}")


@operation("ddl", constrained_table, fails="DELTA_VIOLATE_CONSTRAINT_WITH_VALUES")
def check_constraint_violated(spark: SparkSession, t: TableRef) -> Any:
    return sql(spark, f"INSERT INTO {t.sql} VALUES (-1, 'negative')")


@operation("ddl", basic_table, fails="DELTA_NEW_CHECK_CONSTRAINT_VIOLATION")
def add_check_constraint_violated_by_rows(spark: SparkSession, t: TableRef) -> Any:
    return sql(spark, f"ALTER TABLE {t.sql} ADD CONSTRAINT key_small CHECK (key < 3)")


@operation("ddl", constrained_table)
def drop_check_constraint(spark: SparkSession, t: TableRef) -> Any:
    sql(spark, f"ALTER TABLE {t.sql} DROP CONSTRAINT key_positive")
    return sql(spark, f"INSERT INTO {t.sql} VALUES (-1, 'negative')")


@operation("ddl", generated_table)
def generated_column_insert(spark: SparkSession, t: TableRef) -> Any:
    sql(spark, f"INSERT INTO {t.sql} (key, value) VALUES (7, 'g')")
    return table_rows(spark, t)


@operation("ddl", generated_table, fails="DELTA_VIOLATE_CONSTRAINT_WITH_VALUES")
def generated_column_mismatch(spark: SparkSession, t: TableRef) -> Any:
    return sql(spark, f"INSERT INTO {t.sql} VALUES (7, 'g', 99)")


@operation("ddl", identity_table)
def identity_column_insert(spark: SparkSession, t: TableRef) -> Any:
    sql(spark, f"INSERT INTO {t.sql} (value) VALUES ('d'), ('e')")
    return table_rows(spark, t)


@operation("ddl", identity_table, fails="DELTA_IDENTITY_COLUMNS_EXPLICIT_INSERT_NOT_SUPPORTED")
def identity_column_explicit_value(spark: SparkSession, t: TableRef) -> Any:
    return sql(spark, f"INSERT INTO {t.sql} VALUES (100, 'x')")


@operation("ddl", None)
def create_clustered_table(spark: SparkSession, t: TableRef) -> Any:
    clustered_table(spark, t)
    return sql(spark, f"DESCRIBE DETAIL {t.sql}")


@operation("ddl", clustered_table)
def alter_cluster_by(spark: SparkSession, t: TableRef) -> Any:
    sql(spark, f"ALTER TABLE {t.sql} CLUSTER BY (value)")
    return spark.sql(f"DESCRIBE DETAIL {t.sql}").select("clusteringColumns").first()[0]


@operation("ddl", clustered_table)
def alter_cluster_by_none(spark: SparkSession, t: TableRef) -> Any:
    sql(spark, f"ALTER TABLE {t.sql} CLUSTER BY NONE")
    return spark.sql(f"DESCRIBE DETAIL {t.sql}").select("clusteringColumns").first()[0]


@operation("ddl", basic_table)
def set_table_properties(spark: SparkSession, t: TableRef) -> Any:
    sql(spark, f"ALTER TABLE {t.sql} SET TBLPROPERTIES ('delta.logRetentionDuration' = "
        "'interval 60 days', 'owner.note' = 'x')")
    return sql(spark, f"SHOW TBLPROPERTIES {t.sql}")


@operation("ddl", append_only_table)
def unset_table_properties(spark: SparkSession, t: TableRef) -> Any:
    sql(spark, f"ALTER TABLE {t.sql} UNSET TBLPROPERTIES ('delta.appendOnly')")
    return sql(spark, f"SHOW TBLPROPERTIES {t.sql}")


@operation("ddl", append_only_table, fails="DELTA_CANNOT_MODIFY_APPEND_ONLY")
def append_only_refuses_delete(spark: SparkSession, t: TableRef) -> Any:
    return sql(spark, f"DELETE FROM {t.sql} WHERE key = 1")


@operation("ddl", basic_table)
def alter_column_comment(spark: SparkSession, t: TableRef) -> Any:
    sql(spark, f"ALTER TABLE {t.sql} ALTER COLUMN value COMMENT 'the value'")
    return sql(spark, f"DESCRIBE TABLE {t.sql}")


@operation("ddl", basic_table)
def type_widening(spark: SparkSession, t: TableRef) -> Any:
    sql(spark, f"ALTER TABLE {t.sql} SET TBLPROPERTIES ('delta.enableTypeWidening' = 'true')")
    sql(spark, f"ALTER TABLE {t.sql} ALTER COLUMN key TYPE BIGINT")
    return table_rows(spark, t)


@operation("ddl", basic_table)
def enable_deletion_vectors(spark: SparkSession, t: TableRef) -> Any:
    sql(spark, f"ALTER TABLE {t.sql} SET TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')")
    sql(spark, f"DELETE FROM {t.sql} WHERE key = 4")
    return sql(spark, f"DESCRIBE DETAIL {t.sql}")


# ---- time travel, change data feed, RESTORE, CLONE, VACUUM, OPTIMIZE, DESCRIBE ------------


@operation("history", basic_table)
def select_version_as_of(spark: SparkSession, t: TableRef) -> Any:
    return sql(spark, f"SELECT * FROM {t.sql} VERSION AS OF 1")


@operation("history", basic_table)
def select_timestamp_as_of(spark: SparkSession, t: TableRef) -> Any:
    return sql(spark, f"SELECT * FROM {t.sql} TIMESTAMP AS OF '{commit_time(spark, t, 1)}'")


@operation("history", basic_table)
def read_version_as_of_option(spark: SparkSession, t: TableRef) -> Any:
    return rows(t.read(spark, versionAsOf=1))


@operation("history", basic_table)
def read_timestamp_as_of_option(spark: SparkSession, t: TableRef) -> Any:
    return rows(t.read(spark, timestampAsOf=commit_time(spark, t, 1)))


@operation("history", basic_table, fails="DELTA_VERSION_NOT_FOUND")
def select_version_not_found(spark: SparkSession, t: TableRef) -> Any:
    return sql(spark, f"SELECT * FROM {t.sql} VERSION AS OF 99")


@operation("history", cdf_table, ci=True)
def table_changes(spark: SparkSession, t: TableRef) -> Any:
    function = "table_changes" if t.by_name else "table_changes_by_path"
    return sql(spark, f"SELECT * FROM {function}('{t.identifier}', 1)")


@operation("history", cdf_table)
def read_change_feed(spark: SparkSession, t: TableRef) -> Any:
    return rows(t.read(spark, readChangeFeed="true", startingVersion=2, endingVersion=4))


@operation("history", basic_table, fails="DELTA_MISSING_CHANGE_DATA")
def read_change_feed_not_enabled(spark: SparkSession, t: TableRef) -> Any:
    return rows(t.read(spark, readChangeFeed="true", startingVersion=1))


@operation("history", basic_table)
def restore_to_version(spark: SparkSession, t: TableRef) -> Any:
    return sql(spark, f"RESTORE TABLE {t.sql} TO VERSION AS OF 1")


@operation("history", basic_table)
def restore_to_timestamp(spark: SparkSession, t: TableRef) -> Any:
    return sql(spark, f"RESTORE TABLE {t.sql} TO TIMESTAMP AS OF '{commit_time(spark, t, 1)}'")


@operation("history", basic_table)
def shallow_clone(spark: SparkSession, t: TableRef) -> Any:
    clone = t.sibling("clone")
    result = sql(spark, f"CREATE TABLE {clone.sql} SHALLOW CLONE {t.sql}")
    history = spark.sql(f"DESCRIBE HISTORY {clone.sql}").select("operationParameters")
    return {"result": result, "clone": table_rows(spark, clone), "history": ordered_rows(history)}


@operation("history", basic_table)
def shallow_clone_version_as_of(spark: SparkSession, t: TableRef) -> Any:
    clone = t.sibling("clone")
    sql(spark, f"CREATE TABLE {clone.sql} SHALLOW CLONE {t.sql} VERSION AS OF 1")
    return table_rows(spark, clone)


@operation("history", basic_table, fails="DELTA_UNSUPPORTED_NON_EMPTY_CLONE")
def replace_with_shallow_clone(spark: SparkSession, t: TableRef) -> Any:
    other = t.sibling("other")
    sql(spark, f"CREATE TABLE {other.sql} USING delta AS SELECT 77 AS key, 'cloned' AS value")
    return sql(spark, f"CREATE OR REPLACE TABLE {t.sql} SHALLOW CLONE {other.sql}")


@operation("history", rewritten_table)
def vacuum_dry_run(spark: SparkSession, t: TableRef) -> Any:
    with session_conf(spark, NO_RETENTION_CHECK):
        return sql(spark, f"VACUUM {t.sql} RETAIN 0 HOURS DRY RUN")


@operation("history", rewritten_table)
def vacuum_retain_zero_hours(spark: SparkSession, t: TableRef) -> Any:
    with session_conf(spark, NO_RETENTION_CHECK):
        result = sql(spark, f"VACUUM {t.sql} RETAIN 0 HOURS")
    # The removed files are gone: the first version can no longer be read.
    try:
        sql(spark, f"SELECT * FROM {t.sql} VERSION AS OF 1")
        return {"result": result, "version 1": "read"}
    # A missing file fails the scan's tasks: pyspark 4.2 does not convert that SparkException.
    except (PySparkException, Py4JJavaError) as e:
        return {"result": result, "version 1": condition_of(e)}


@operation("history", rewritten_table, fails="DELTA_VACUUM_RETENTION_PERIOD_TOO_SHORT")
def vacuum_retention_check(spark: SparkSession, t: TableRef) -> Any:
    return sql(spark, f"VACUUM {t.sql} RETAIN 0 HOURS")


@operation("history", rewritten_table)
def vacuum_default_retention(spark: SparkSession, t: TableRef) -> Any:
    return sql(spark, f"VACUUM {t.sql}")


@operation("history", basic_table)
def optimize(spark: SparkSession, t: TableRef) -> Any:
    return sql(spark, f"OPTIMIZE {t.sql}")


@operation("history", partitioned_table)
def optimize_where(spark: SparkSession, t: TableRef) -> Any:
    return sql(spark, f"OPTIMIZE {t.sql} WHERE part = 'x'")


@operation("history", basic_table)
def optimize_zorder(spark: SparkSession, t: TableRef) -> Any:
    return sql(spark, f"OPTIMIZE {t.sql} ZORDER BY (key)")


@operation("history", clustered_table)
def optimize_clustered(spark: SparkSession, t: TableRef) -> Any:
    return sql(spark, f"OPTIMIZE {t.sql}")


@operation("history", clustered_table, fails_on_35="PARSE_SYNTAX_ERROR")
def optimize_clustered_full(spark: SparkSession, t: TableRef) -> Any:
    return sql(spark, f"OPTIMIZE {t.sql} FULL")


@operation("history", dv_table)
def reorg_purge(spark: SparkSession, t: TableRef) -> Any:
    sql(spark, f"DELETE FROM {t.sql} WHERE key = 2")
    return sql(spark, f"REORG TABLE {t.sql} APPLY (PURGE)")


@operation("history", basic_table)
def describe_detail(spark: SparkSession, t: TableRef) -> Any:
    return sql(spark, f"DESCRIBE DETAIL {t.sql}")


@operation("history", cdf_table)
def describe_history(spark: SparkSession, t: TableRef) -> Any:
    return ordered_rows(spark.sql(f"DESCRIBE HISTORY {t.sql}"))


@operation("history", basic_table)
def describe_history_limit(spark: SparkSession, t: TableRef) -> Any:
    return ordered_rows(spark.sql(f"DESCRIBE HISTORY {t.sql} LIMIT 1"))


@operation("history", generated_table)
def describe_table(spark: SparkSession, t: TableRef) -> Any:
    return ordered_rows(spark.sql(f"DESCRIBE TABLE {t.sql}"))


@operation("history", basic_table)
def show_columns(spark: SparkSession, t: TableRef) -> Any:
    return ordered_rows(spark.sql(f"SHOW COLUMNS IN {t.sql}"))


@operation("history", basic_table)
def generate_manifest(spark: SparkSession, t: TableRef) -> Any:
    return sql(spark, f"GENERATE symlink_format_manifest FOR TABLE {t.sql}")


# ---- the DeltaTable Python API ------------------------------------------------------------


def upsert_source(spark: SparkSession, extra: bool = False) -> DataFrame:
    if extra:
        return spark.createDataFrame([(1, "one", True), (9, "nine", False)], BASIC_COLUMNS + ", flag BOOLEAN")
    return spark.createDataFrame([(1, "one"), (9, "nine")], BASIC_COLUMNS)


@operation("python-api", basic_table)
def delta_table_to_df(spark: SparkSession, t: TableRef) -> Any:
    return rows(t.delta_table(spark).toDF())


@operation("python-api", basic_table)
def delta_table_update(spark: SparkSession, t: TableRef) -> Any:
    result = t.delta_table(spark).update("key > 2", {"value": "upper(value)"})
    return {"result": rows(result), "table": table_rows(spark, t)}


@operation("python-api", basic_table)
def delta_table_delete(spark: SparkSession, t: TableRef) -> Any:
    result = t.delta_table(spark).delete("key = 1")
    return {"result": rows(result), "table": table_rows(spark, t)}


@operation("python-api", basic_table, ci=True)
def delta_table_merge(spark: SparkSession, t: TableRef) -> Any:
    merge = t.delta_table(spark).alias("t").merge(upsert_source(spark).alias("s"), "t.key = s.key")
    result = merge.whenMatchedUpdateAll().whenNotMatchedInsertAll().execute()
    return {"result": rows(result), "table": table_rows(spark, t)}


@operation("python-api", basic_table)
def delta_table_merge_schema_evolution(spark: SparkSession, t: TableRef) -> Any:
    merge = t.delta_table(spark).alias("t").merge(upsert_source(spark, extra=True).alias("s"), "t.key = s.key")
    merge.whenMatchedUpdateAll().whenNotMatchedInsertAll().withSchemaEvolution().execute()
    return table_rows(spark, t)


@operation("python-api", basic_table)
def delta_table_history(spark: SparkSession, t: TableRef) -> Any:
    return ordered_rows(t.delta_table(spark).history())


@operation("python-api", basic_table)
def delta_table_detail(spark: SparkSession, t: TableRef) -> Any:
    return rows(t.delta_table(spark).detail())


@operation("python-api", rewritten_table)
def delta_table_vacuum(spark: SparkSession, t: TableRef) -> Any:
    with session_conf(spark, NO_RETENTION_CHECK):
        result = t.delta_table(spark).vacuum(0.0)
    return {"result": rows(result), "table": table_rows(spark, t)}


@operation("python-api", basic_table)
def delta_table_optimize(spark: SparkSession, t: TableRef) -> Any:
    return rows(t.delta_table(spark).optimize().executeCompaction())


@operation("python-api", basic_table)
def delta_table_optimize_zorder(spark: SparkSession, t: TableRef) -> Any:
    return rows(t.delta_table(spark).optimize().executeZOrderBy("key"))


@operation("python-api", basic_table)
def delta_table_restore(spark: SparkSession, t: TableRef) -> Any:
    return {"result": rows(t.delta_table(spark).restoreToVersion(1)), "table": table_rows(spark, t)}


@operation("python-api", basic_table)
def delta_table_clone(spark: SparkSession, t: TableRef) -> Any:
    clone = t.sibling("clone")
    t.delta_table(spark).clone(clone.identifier, isShallow=True)
    return table_rows(spark, clone)


@operation("python-api", None)
def delta_table_create(spark: SparkSession, t: TableRef) -> Any:
    builder = DeltaTable.create(spark)
    builder = builder.tableName(t.name) if t.by_name else builder.location(t.path)
    builder.addColumn("key", "INT").addColumn("value", "STRING").property("owner.note", "x").execute()
    return table_rows(spark, t)


# By path, delta-spark refuses to replace a table with another schema; by name it replaces it.
@operation("python-api", basic_table, fails={"name": None, "path": "DELTA_CREATE_TABLE_SCHEME_MISMATCH"})
def delta_table_create_or_replace(spark: SparkSession, t: TableRef) -> Any:
    builder = DeltaTable.createOrReplace(spark)
    builder = builder.tableName(t.name) if t.by_name else builder.location(t.path)
    builder.addColumn("label", "STRING").execute()
    return table_rows(spark, t)


@operation("python-api", basic_table)
def delta_table_is_delta_table(spark: SparkSession, t: TableRef) -> Any:
    return DeltaTable.isDeltaTable(spark, t.identifier)


@operation("python-api", basic_table)
def delta_table_add_feature(spark: SparkSession, t: TableRef) -> Any:
    t.delta_table(spark).addFeatureSupport("deletionVectors")
    return sql(spark, f"DESCRIBE DETAIL {t.sql}")


@operation("python-api", basic_table)
def delta_table_upgrade_protocol(spark: SparkSession, t: TableRef) -> Any:
    t.delta_table(spark).upgradeTableProtocol(1, 4)
    return sql(spark, f"DESCRIBE DETAIL {t.sql}")


# ---- streaming (AvailableNow) -------------------------------------------------------------


def drain(spark: SparkSession, stream: DataFrame, t: TableRef) -> Any:
    """Run ``stream`` to the end of its input into a Delta sink of the operation's own, and
    return what the sink holds."""
    sink = TableRef("path", "", str(t.scratch / "sink"), t.scratch)
    sink.write_stream(stream, t.scratch / "sink_checkpoint")
    return rows(sink.read(spark))


def stream_source(spark: SparkSession, t: TableRef, keys: range) -> DataFrame:
    """A streaming read of a Delta table of the operation's own, after appending ``keys``."""
    source = TableRef("path", "", str(t.scratch / "stream_source"), t.scratch)
    df = spark.createDataFrame([(k, f"s{k}") for k in keys], BASIC_COLUMNS)
    source.save(df.write.format("delta").mode("append"))
    return source.read_stream(spark)


@operation("streaming", basic_table)
def stream_read(spark: SparkSession, t: TableRef) -> Any:
    return drain(spark, t.read_stream(spark), t)


@operation("streaming", basic_table)
def stream_read_starting_version(spark: SparkSession, t: TableRef) -> Any:
    return drain(spark, t.read_stream(spark, startingVersion=2), t)


@operation("streaming", cdf_table)
def stream_read_change_feed(spark: SparkSession, t: TableRef) -> Any:
    return drain(spark, t.read_stream(spark, readChangeFeed="true", startingVersion=1), t)


@operation("streaming", cdf_table, fails="STREAM_FAILED")
def stream_read_after_update(spark: SparkSession, t: TableRef) -> Any:
    return drain(spark, t.read_stream(spark, startingVersion=0), t)


@operation("streaming", basic_table, ci=True)
def stream_write(spark: SparkSession, t: TableRef) -> Any:
    t.write_stream(stream_source(spark, t, range(50, 53)), t.scratch / "checkpoint")
    return table_rows(spark, t)


@operation("streaming", basic_table)
def stream_write_resumed(spark: SparkSession, t: TableRef) -> Any:
    t.write_stream(stream_source(spark, t, range(50, 53)), t.scratch / "checkpoint")
    t.write_stream(stream_source(spark, t, range(60, 62)), t.scratch / "checkpoint")
    return ordered_rows(spark.sql(f"DESCRIBE HISTORY {t.sql}").select("version", "operation", "operationParameters"))


@operation("streaming", None)
def stream_write_creates_table(spark: SparkSession, t: TableRef) -> Any:
    t.write_stream(stream_source(spark, t, range(70, 72)), t.scratch / "checkpoint")
    return table_rows(spark, t)
