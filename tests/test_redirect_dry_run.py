"""SET REDIRECT … DRY RUN and UNSET REDIRECT … DRY RUN on local disk, through SQL and Python.

A dry run writes nothing in either location; it reports what the statement would copy (the
real run then copies exactly that), the files an earlier, cut-short run left at the
destination, the copy mode and the number of tasks, and the checks that would refuse the
statement (the allow-list, a destination that is not empty, a table whose commits go through
a catalog), without raising them.

The module's application starts with an allow-list (an administrator's setting), so the
allow-list check runs; every destination below is under the allowed directory except where a
test wants it refused.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Dict, Iterator, Tuple

import pytest
from pyspark.sql import SparkSession

from process_jvm import lifecycle_session
from script_runs import run_until_halt, write_crash_script
from delta_lifecycle import LifecycleTable, RedirectPlan, RedirectStatus
from delta_lifecycle.results import REDIRECT_COLUMNS, REDIRECT_PLAN_COLUMNS
from delta_lifecycle.tables import quote_path
from test_coordinated_commits import OWNERS, hand_over

ALLOWED_PREFIXES = "spark.deltaLifecycle.redirect.allowedLocationPrefixes"

#: The plan's and the status's columns as SQL types them (RedirectStatus.scala).
PLAN_TYPES = [
    "string", "string", "string", "string", "bigint", "bigint", "bigint", "bigint", "bigint",
    "bigint", "bigint", "bigint", "bigint", "string", "string", "int",
    "array<struct<condition:string,message:string>>", "array<string>",
]
PLAN_NULLABLE = {"destination", "destinationLocation", "copyMode", "copyModeReason"}
STATUS_TYPES = [
    "string", "string", "string", "string", "string", "string", "array<string>", "bigint",
    "bigint", "bigint", "array<bigint>", "array<string>", "string", "string", "bigint",
]
STATUS_NULLABLE = {"mode", "type", "destination", "destinationLocation", "copyMode",
                   "copyModeReason"}


@pytest.fixture(scope="module")
def allowed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The one directory redirects may point into."""
    return tmp_path_factory.mktemp("allowed")


@pytest.fixture(scope="module")
def spark(tmp_path_factory: pytest.TempPathFactory, allowed: Path) -> Iterator[SparkSession]:
    yield from lifecycle_session(tmp_path_factory, {ALLOWED_PREFIXES: str(allowed)})


def _table(spark: SparkSession, path: Path, commits: int = 4) -> None:
    spark.sql(f"CREATE TABLE {quote_path(str(path))} (id BIGINT) USING delta")
    for i in range(commits):
        spark.sql(f"INSERT INTO {quote_path(str(path))} SELECT /*+ COALESCE(1) */ id "
                  f"FROM range({i * 100}, {i * 100 + 50})")


def _snapshot(root: Path) -> Dict[str, Tuple[int, int]]:
    """Every file under ``root`` with its size and modification time (ns)."""
    out: Dict[str, Tuple[int, int]] = {}
    for dirpath, _, names in os.walk(root):
        for n in names:
            st = os.stat(os.path.join(dirpath, n))
            out[os.path.relpath(os.path.join(dirpath, n), root)] = (st.st_size, st.st_mtime_ns)
    return out


def _data_files(root: Path) -> Dict[str, int]:
    return {k: v[0] for k, v in _snapshot(root).items()
            if k.endswith(".parquet") and not k.startswith("_delta_log")}


def test_result_schemas_match_the_python_columns(spark: SparkSession, allowed: Path) -> None:
    """The SQL schemas (defined once, in RedirectStatus.scala) and the Python columns agree."""
    src = allowed.parent / "schemas-src"
    _table(spark, src, commits=1)
    for statement, columns, types, nullable in (
        (f"ALTER TABLE {quote_path(str(src))} SET REDIRECT TO '{allowed / 'schemas'}' DRY RUN",
         REDIRECT_PLAN_COLUMNS, PLAN_TYPES, PLAN_NULLABLE),
        (f"ALTER TABLE {quote_path(str(src))} UNSET REDIRECT DRY RUN",
         REDIRECT_PLAN_COLUMNS, PLAN_TYPES, PLAN_NULLABLE),
        (f"DESCRIBE REDIRECT {quote_path(str(src))}", REDIRECT_COLUMNS, STATUS_TYPES,
         STATUS_NULLABLE),
    ):
        fields = spark.sql(statement).schema.fields
        assert tuple(f.name for f in fields) == columns, statement
        assert [f.dataType.simpleString() for f in fields] == types, statement
        assert {f.name for f in fields if f.nullable} == nullable, statement


def test_set_redirect_dry_run_writes_nothing_and_forecasts_the_copy(
    spark: SparkSession, allowed: Path
) -> None:
    src, dest = allowed.parent / "plain-src", allowed / "plain"
    _table(spark, src)
    before = _snapshot(src)
    row = spark.sql(
        f"ALTER TABLE {quote_path(str(src))} SET REDIRECT TO '{dest}' DRY RUN"
    ).collect()
    assert len(row) == 1
    plan = RedirectPlan.from_row(row[0])
    assert _snapshot(src) == before
    assert not dest.exists()

    data = _data_files(src)
    assert plan.state == "NORMAL" and plan.version == 4
    assert plan.refusals == ()
    assert (plan.files_to_copy, plan.bytes_to_copy) == (len(data), sum(data.values()))
    assert (plan.files_already_there, plan.bytes_already_there) == (0, 0)
    assert plan.copy_mode == "local" and plan.copy_mode_reason is None
    assert plan.tasks >= 1
    log = [p for p in (src / "_delta_log").iterdir() if p.is_file() and p.name[0] != "."]
    assert plan.log_files_to_copy == len(log) >= 5  # commits 0 to 4 and their checksums
    assert plan.destination_location == dest.as_uri().replace("file:///", "file:/")
    assert any(s.startswith(f"pre-copy {len(data)} data files") for s in plan.steps), plan.steps

    # The statement then copies what the plan said.
    status = LifecycleTable.for_path(spark, str(src)).set_redirect(str(dest))
    assert isinstance(status, RedirectStatus) and status.state == "READY"
    assert status.files_copied == plan.files_to_copy + plan.log_files_to_copy
    assert status.copy_mode == "local" and status.copy_mode_reason is None
    assert status.bytes_through_executors == plan.bytes_to_copy + plan.log_bytes_to_copy
    assert _data_files(dest) == data


def test_python_dry_run_reports_the_refusals_it_would_raise(
    spark: SparkSession, allowed: Path, tmp_path: Path
) -> None:
    src = allowed.parent / "refused-src"
    _table(spark, src, commits=1)
    table = LifecycleTable.for_path(spark, str(src))

    outside = table.set_redirect(str(tmp_path / "outside"), dry_run=True)
    assert [r.condition for r in outside.refusals] == [
        "DELTA_LIFECYCLE_REDIRECT_LOCATION_NOT_ALLOWED"
    ]
    assert ALLOWED_PREFIXES in outside.refusals[0].message
    assert not outside.would_run

    busy = allowed / "busy"
    busy.mkdir()
    (busy / "something.txt").write_text("not a table")
    not_empty = table.set_redirect(str(busy), dry_run=True)
    assert [r.condition for r in not_empty.refusals] == [
        "DELTA_LIFECYCLE_REDIRECT_DESTINATION_NOT_EMPTY"
    ]
    assert sorted(os.listdir(busy)) == ["something.txt"]

    owned = allowed.parent / "owned-src"
    _table(spark, owned, commits=1)
    hand_over(owned, OWNERS[0])
    before = _snapshot(owned)
    plan = LifecycleTable.for_path(spark, str(owned)).set_redirect(
        str(allowed / "owned"), dry_run=True
    )
    assert [r.condition for r in plan.refusals] == ["DELTA_LIFECYCLE_COORDINATED_TABLE"]
    assert _snapshot(owned) == before and not (allowed / "owned").exists()

    # Nothing here stopped the table: it is still NORMAL, and a plan that would run says so.
    assert table.redirect_status() is None
    assert table.set_redirect(str(allowed / "fine"), dry_run=True).would_run


HALTING_SET_REDIRECT = """
    path, dest = args
    spark.sql(f"ALTER TABLE delta.`{path}` SET REDIRECT TO '{dest}'").collect()
    print("NOT HALTED")
"""


def test_a_dry_run_after_a_cut_short_copy_reports_the_files_already_there(
    spark: SparkSession, allowed: Path, tmp_path: Path
) -> None:
    src, dest = allowed.parent / "cut-src", allowed / "cut"
    _table(spark, src, commits=6)
    script = write_crash_script(tmp_path / "halt.py", HALTING_SET_REDIRECT)
    run = run_until_halt(script, [str(src), str(dest)], "setRedirect.midDataCopy")
    assert run.halted, run.stderr
    there = _data_files(dest)
    assert 0 < len(there) < 6

    before = (_snapshot(src), _snapshot(dest))
    table = LifecycleTable.for_path(spark, str(src))
    plan = table.set_redirect(str(dest), dry_run=True)
    assert (_snapshot(src), _snapshot(dest)) == before
    assert plan.refusals == ()  # the destination holds this source's own pre-copy
    assert plan.files_already_there == len(there)
    assert plan.bytes_already_there == sum(there.values())
    assert plan.files_to_copy == 6 - len(there)
    sql = spark.sql(f"ALTER TABLE {quote_path(str(src))} SET REDIRECT TO '{dest}' DRY RUN")
    assert RedirectPlan.from_row(sql.collect()[0]) == plan

    status = table.set_redirect(str(dest))
    assert status.state == "READY"
    assert status.files_copied == plan.files_to_copy + plan.log_files_to_copy
    assert _data_files(dest) == _data_files(src)


def test_unset_redirect_dry_run_forecasts_the_copy_back(
    spark: SparkSession, allowed: Path
) -> None:
    src, dest = allowed.parent / "back-src", allowed / "back"
    _table(spark, src, commits=2)
    table = LifecycleTable.for_path(spark, str(src))
    table.set_redirect(str(dest))
    for i in range(3):  # written at the destination, through the redirect
        spark.sql(f"INSERT INTO {quote_path(str(src))} VALUES ({1000 + i})")
    written = {k: v for k, v in _data_files(dest).items() if k not in _data_files(src)}
    assert len(written) == 3

    before = (_snapshot(src), _snapshot(dest))
    plan = table.unset_redirect(dry_run=True)
    sql = spark.sql(f"ALTER TABLE {quote_path(str(src))} UNSET REDIRECT DRY RUN").collect()[0]
    assert RedirectPlan.from_row(sql) == plan
    assert (_snapshot(src), _snapshot(dest)) == before
    assert plan.state == "READY" and plan.refusals == ()
    assert (plan.files_to_copy, plan.bytes_to_copy) == (3, sum(written.values()))
    assert plan.files_already_there == 0 and plan.log_files_to_copy == 0
    assert plan.copy_mode == "local"
    assert any(s.startswith("replay 3 destination commits") for s in plan.steps), plan.steps

    status = table.unset_redirect()
    assert status.state == "NORMAL" and status.files_copied == 3
    assert status.copy_mode == "local"

    nothing = table.unset_redirect(dry_run=True)
    assert [r.condition for r in nothing.refusals] == ["DELTA_LIFECYCLE_REDIRECT_STATE"]
    assert nothing.copy_mode is None and nothing.files_to_copy == 0


def test_a_table_already_ready_has_nothing_to_do(spark: SparkSession, allowed: Path) -> None:
    src, dest = allowed.parent / "ready-src", allowed / "ready"
    _table(spark, src, commits=1)
    table = LifecycleTable.for_path(spark, str(src))
    table.set_redirect(str(dest))
    plan = table.set_redirect(str(dest), dry_run=True)
    assert plan.state == "READY" and plan.refusals == () and plan.files_to_copy == 0
    assert plan.steps == (f"already READY to {dest.as_uri().replace('file:///', 'file:/')}; "
                          "nothing to do",)
    elsewhere = table.set_redirect(str(allowed / "elsewhere"), dry_run=True)
    assert [r.condition for r in elsewhere.refusals] == ["DELTA_LIFECYCLE_REDIRECT_STATE"]
    assert "Run UNSET REDIRECT first" in elsewhere.refusals[0].message
