"""tests/statements.py names every statement of this project, and each entry is right: its
template parses as the statement it names, with the columns delta_lifecycle.results reads, and a
statement it says does not write leaves the table's files as they were."""

from __future__ import annotations

from pathlib import Path
from typing import List

import pytest
from pyspark.sql import SparkSession

from table_helpers import files_of
from statements import BY_NAME, STATEMENTS, Statement, grammar_statement_names


def test_every_statement_of_the_grammar_is_in_the_table() -> None:
    grammar = grammar_statement_names()
    assert len(grammar) >= 9
    assert sorted(grammar - set(BY_NAME)) == [], "add them to tests/statements.py"
    assert sorted(set(BY_NAME) - grammar) == [], "tests/statements.py names no such statement"
    assert len(BY_NAME) == len(STATEMENTS)


def parsed(spark: SparkSession, sql: str) -> object:
    """The plan this project's parser makes of ``sql``, before analysis (nothing runs)."""
    return spark._jsparkSession.sessionState().sqlParser().parsePlan(sql)  # type: ignore[union-attr]


@pytest.mark.parametrize("statement", STATEMENTS, ids=lambda s: s.name)
def test_template_is_the_statement_it_names(spark: SparkSession, statement: Statement) -> None:
    for table in ("delta.`/tmp/t`", "db.events"):
        plan = parsed(spark, statement.on(table, "/tmp/moved"))
        assert plan.getClass().getSimpleName() == (  # type: ignore[attr-defined]
            statement.name[0].upper() + statement.name[1:] + "Statement"
        )
        assert list(plan.schema().fieldNames()) == list(statement.columns)  # type: ignore[attr-defined]


def test_statements_that_do_not_write_change_no_file(spark: SparkSession, tmp_path: Path) -> None:
    path = tmp_path / "t"
    spark.sql(
        f"CREATE TABLE delta.`{path}` (id BIGINT) USING delta "
        "TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')"
    )
    spark.sql(f"INSERT INTO delta.`{path}` VALUES (1), (2)")
    readers: List[Statement] = [s for s in STATEMENTS if not s.writes]
    assert readers
    for statement in readers:
        before = files_of(path)
        result = spark.sql(statement.on(f"delta.`{path}`", str(tmp_path / "moved")))
        assert result.columns == list(statement.columns), statement.name
        assert result.collect(), statement.name
        assert files_of(path) == before, statement.name
