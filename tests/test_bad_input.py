"""Generated bad input (hypothesis) for every statement of this project, and planted or
deliberately broken logs: the answer is always a result or a typed error, and an error
writes nothing.

"Typed" means a ``delta_lifecycle.errors.DeltaLifecycleError`` (translated from a
``DELTA_LIFECYCLE_*`` condition), or a Spark error that carries an error condition other
than ``INTERNAL_ERROR`` (``PARSE_SYNTAX_ERROR`` for text that is not a statement,
``TABLE_OR_VIEW_NOT_FOUND``, delta-spark's ``DELTA_*``). "Writes nothing" means every file
under the table (log and data) has the same name and size afterwards.

CI generates ``EXAMPLES`` cases per property; ``DELTA_LIFECYCLE_FULL_MATRIX=1`` generates
ten times as many. The generation is derandomized, so a CI failure reproduces.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from py4j.protocol import Py4JJavaError
from pyspark.errors import PySparkException
from pyspark.sql import SparkSession

from environment import FULL_MATRIX
from process_jvm import lifecycle_session
from spark_errors import condition_of
from table_helpers import TESTDATA, files_of, ids, latest_version
from deltalog import assert_maintenance_files_describe_real_states
from delta_lifecycle import LifecycleTable
from delta_lifecycle.errors import DeltaLifecycleError, translate_errors
from statements import STATEMENTS, Statement

EXAMPLES = 200 if FULL_MATRIX else 15
ALLOWED_PREFIXES = "spark.deltaLifecycle.redirect.allowedLocationPrefixes"
#: Every case a property here generated or planted, for the README's numbers.
CASES: Dict[str, int] = {}

SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

Files = Dict[str, int]


def is_typed(error: BaseException) -> bool:
    if isinstance(error, DeltaLifecycleError):
        return True
    condition = None
    if isinstance(error, PySparkException):
        condition = condition_of(error)
    elif isinstance(error, Py4JJavaError):
        # delta-spark's own errors (DeltaThrowable) that PySpark does not convert.
        # The JVM's SparkThrowable names the getter getErrorClass before Spark 4.
        java = error.java_exception
        for getter in ("getCondition", "getErrorClass"):
            try:
                condition = getattr(java, getter)()
                break
            except Exception:
                condition = None
    return condition is not None and condition != "INTERNAL_ERROR"


def attempt(run: Callable[[], Any]) -> Tuple[Optional[Any], Optional[BaseException]]:
    """(result, None) or (None, error), with this project's errors translated."""
    try:
        with translate_errors():
            return run(), None
    except Exception as error:  # judged by the caller
        return None, error


def assert_typed_and_nothing_written(
    table: Path, before: Files, error: Optional[BaseException], case: str
) -> None:
    assert error is not None and is_typed(error), f"{case}: untyped error {type(error).__name__}: {error}"
    assert str(error).strip(), f"{case}: an error without a message"
    assert files_of(table) == before, f"{case}: the failed statement changed files"


def restore(table: Path, before: Files) -> None:
    """Remove what a statement that succeeded wrote, so the next case sees the same table."""
    for name in set(files_of(table)) - set(before):
        (table / name).unlink()


def sql_string(value: str) -> str:
    """A Spark SQL string literal holding exactly ``value``."""
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def count(name: str, n: int = 1) -> None:
    CASES[name] = CASES.get(name, 0) + n


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where this module's tables live: ``table``, ``allowed/`` (the only redirect targets
    the generated locations may reach) and ``golden/`` (copies of broken tables)."""
    return tmp_path_factory.mktemp("bad-input")


@pytest.fixture(scope="module")
def spark(tmp_path_factory: pytest.TempPathFactory, base: Path) -> Iterator[SparkSession]:
    """This module's session: its application starts with a redirect allow-list, which only
    the administrator's start-up configuration can set (docs/settings.md)."""
    yield from lifecycle_session(tmp_path_factory, {ALLOWED_PREFIXES: f"{base / 'allowed'},{base / 'golden'}"})


@pytest.fixture(scope="module")
def table(spark: SparkSession, base: Path) -> Path:
    """Eight versions of a plain table (no droppable feature), a checkpoint at 5."""
    path = base / "table"
    spark.sql(f"CREATE TABLE delta.`{path}` (id BIGINT) USING delta TBLPROPERTIES ('delta.checkpointInterval' = '5')")
    for i in range(7):
        spark.sql(f"INSERT INTO delta.`{path}` VALUES ({i})")
    return path


@pytest.fixture(scope="module", autouse=True)
def report_cases() -> Iterator[None]:
    yield
    print(f"\ngenerated and planted cases: {sum(CASES.values())} {json.dumps(CASES, sort_keys=True)}")


# ---- redirect JSON ---------------------------------------------------------------------

REDIRECT_KEYS = ["Type", "State", "Spec", "NoRedirectRules", "type", "state", "spec", "Location", "Table",
                 "AppName", "AllowWrite", "redirectState", "Mode"]
REDIRECT_WORDS = ["Object Store", "Session Catalog", "PathBasedRedirect", "ENABLE-REDIRECT-IN-PROGRESS",
                  "REDIRECT-READY", "READY", "DROP-REDIRECT-IN-PROGRESS", "NORMAL", "READER WRITER", "WRITER ONLY"]

json_leaves = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=20), st.sampled_from(REDIRECT_WORDS))
json_values = st.recursive(
    json_leaves,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.one_of(st.sampled_from(REDIRECT_KEYS), st.text(max_size=8)), inner, max_size=4),
    ),
    max_leaves=8,
)
redirect_values = st.one_of(
    st.text(max_size=60),
    json_values.map(json.dumps),
    st.fixed_dictionaries(
        {"Type": st.sampled_from(REDIRECT_WORDS), "State": st.sampled_from(REDIRECT_WORDS)},
        optional={"Spec": json_values, "NoRedirectRules": json_values},
    ).map(json.dumps),
    # A valid value cut short.
    st.integers(min_value=0, max_value=80).map(
        lambda n: json.dumps({"Type": "Object Store", "State": "REDIRECT-READY", "Spec": {"Location": "/nowhere"}})[:n]
    ),
)


@SETTINGS
@given(value=redirect_values, reader_writer=st.booleans())
def test_generated_redirect_property_values(spark: SparkSession, table: Path, value: str, reader_writer: bool) -> None:
    count("redirect property values")
    key = "delta.redirectReaderWriter" if reader_writer else "delta.redirectWriterOnly"
    before = files_of(table)
    statement = f"ALTER TABLE delta.`{table}` SET TBLPROPERTIES ('{key}' = {sql_string(value)})"
    result, error = attempt(lambda: spark.sql(statement).collect())
    if error is None:
        # Only a value that is a valid RFC transition from NORMAL may be committed; it must
        # then read back as a redirect.
        assert LifecycleTable.for_path(spark, str(table)).redirect_status() is not None, value
        restore(table, before)
    else:
        assert_typed_and_nothing_written(table, before, error, f"{key}={value!r}")


# ---- statement arguments ----------------------------------------------------------------

FEATURES = ["deletionVectors", "columnMapping", "typeWidening", "v2Checkpoint", "checkpointProtection",
            "redirectReaderWriter", "appendOnly", "invariants", "DELETIONVECTORS", "deletion-vectors"]


@SETTINGS
@given(feature=st.one_of(st.text(max_size=30), st.sampled_from(FEATURES)),
       truncate=st.booleans(), dry_run=st.booleans(), quoted=st.booleans())
def test_generated_feature_names(
    spark: SparkSession, table: Path, feature: str, truncate: bool, dry_run: bool, quoted: bool
) -> None:
    count("DROP FEATURE names")
    before = files_of(table)
    name = sql_string(feature) if quoted else feature
    statement = (f"ALTER TABLE delta.`{table}` DROP FEATURE {name}"
                 + (" TRUNCATE HISTORY" if truncate else "") + (" DRY RUN" if dry_run else ""))
    # The table has no droppable feature, so no name may succeed.
    _, error = attempt(lambda: spark.sql(statement).collect())
    assert_typed_and_nothing_written(table, before, error, statement)


versions = st.one_of(st.integers(min_value=0, max_value=12), st.integers(min_value=0, max_value=10**30))


@SETTINGS
@given(start=versions, end=versions)
def test_generated_compaction_ranges(spark: SparkSession, table: Path, start: int, end: int) -> None:
    count("COMPACT LOG ranges")
    before = files_of(table)
    statement = f"ALTER TABLE delta.`{table}` COMPACT LOG FROM VERSION {start} TO VERSION {end}"
    result, error = attempt(lambda: spark.sql(statement).collect())
    if error is None:
        assert start < end <= latest_version(table), statement
        restore(table, before)
    else:
        assert_typed_and_nothing_written(table, before, error, statement)


@SETTINGS
@given(hours=st.one_of(st.integers(min_value=1, max_value=10**6), st.integers(min_value=1, max_value=10**30)),
       dry_run=st.booleans())
def test_generated_retention_values(spark: SparkSession, table: Path, hours: int, dry_run: bool) -> None:
    """Every log file is minutes old, so no retention of an hour or more may delete one; an
    overflowing retention must not turn into 'delete everything'. (RETAIN 0 HOURS is a valid
    request to delete, tested in tests/test_log_compaction.py.)"""
    count("CLEAN LOG retentions")
    before = files_of(table)
    statement = f"ALTER TABLE delta.`{table}` CLEAN LOG RETAIN {hours} HOURS" + (" DRY RUN" if dry_run else "")
    result, error = attempt(lambda: spark.sql(statement).collect())
    if error is None:
        assert files_of(table) == before, statement
    else:
        assert_typed_and_nothing_written(table, before, error, statement)


@SETTINGS
@given(location=st.one_of(
    st.text(max_size=40),
    st.sampled_from(["", " ", "s3://bucket/t", "file:/", "/", "..", "nope://x/y", "hdfs:///t", "%", "a\u0000b"]),
    st.text(alphabet="abc/._-:", max_size=20),
), inside_source=st.booleans())
def test_generated_redirect_locations(
    spark: SparkSession, table: Path, tmp_path_factory: pytest.TempPathFactory, location: str, inside_source: bool
) -> None:
    """Only locations under the allowed prefixes (``base/allowed``, ``base/golden``: no
    generated text reaches them) may be destinations; the generated ones are elsewhere, or
    inside the source itself."""
    count("SET REDIRECT locations")
    before = files_of(table)
    target = str(table / location) if inside_source else location
    statement = f"ALTER TABLE delta.`{table}` SET REDIRECT TO {sql_string(target)}"
    _, error = attempt(lambda: spark.sql(statement).collect())
    assert_typed_and_nothing_written(table, before, error, statement)


@pytest.mark.parametrize("statement", STATEMENTS, ids=lambda s: s.name)
@SETTINGS
@given(name=st.text(min_size=1, max_size=30), by_path=st.booleans())
def test_generated_table_names_and_paths(
    spark: SparkSession, tmp_path_factory: pytest.TempPathFactory, statement: Statement, name: str, by_path: bool
) -> None:
    """Names of no table and paths of no Delta table (the generated path is under a fresh
    directory, so it holds nothing, as does SET REDIRECT's destination there), for every
    statement of tests/statements.py."""
    count("table names and paths")
    root = tmp_path_factory.mktemp("nowhere")
    if by_path:
        reference = "delta.`" + str(root / name).replace("`", "``") + "`"
    else:
        reference = "`" + name.replace("`", "``") + "`"
    sql = statement.on(reference, str(root / "moved"))
    _, error = attempt(lambda: spark.sql(sql).collect())
    assert error is not None and is_typed(error), f"{sql}: {type(error).__name__}: {error}"
    assert files_of(root) == {}, sql


def test_python_arguments_are_checked_before_any_sql(spark: SparkSession, table: Path) -> None:
    t = LifecycleTable.for_path(spark, str(table))
    before = files_of(table)
    for call in (lambda: t.compact_log(-1, 3), lambda: t.compact_log(2, None), lambda: t.clean_log(-5),
                 lambda: t.compact_log(1.5, 3),  # type: ignore[arg-type]
                 lambda: t.set_redirect(), lambda: t.set_redirect("/x", mode="sideways"),
                 lambda: t.set_redirect("/x", no_redirect_rules=(("app", ("DROP TABLE",)),))):
        count("Python arguments")
        with pytest.raises(ValueError):
            call()
    assert files_of(table) == before


# ---- planted log files ------------------------------------------------------------------

READ_STATEMENTS = [
    "DESCRIBE PROTOCOL HISTORY delta.`{t}`",
    "ALTER TABLE delta.`{t}` CLEAN LOG DRY RUN",
    "DESCRIBE REDIRECT delta.`{t}`",
    "SELECT count(*) FROM delta.`{t}`",
]


@pytest.fixture(scope="module")
def planted_base(spark: SparkSession, table: Path, tmp_path_factory: pytest.TempPathFactory) -> Dict[str, Any]:
    """A copy of ``table`` with compactions of 1..3 and 6..7, and the answers every read
    statement gives on it intact."""
    path = tmp_path_factory.mktemp("planted") / "base"
    shutil.copytree(table, path)
    t = LifecycleTable.for_path(spark, str(path))
    t.compact_log(1, 3)
    t.compact_log(6, 7)
    answers = {s: [tuple(r) for r in spark.sql(s.format(t=path)).collect()] for s in READ_STATEMENTS}
    return {"path": path, "answers": answers, "rows": ids(spark, path)}


def plant(base: Path, target: Path, damage: str, n: int) -> str:
    """Copy ``base`` to ``target`` and damage its log; returns what was done."""
    shutil.copytree(base, target)
    log = target / "_delta_log"
    compaction = log / "00000000000000000001.00000000000000000003.compacted.json"
    text = compaction.read_bytes()
    commits = sorted(p for p in log.iterdir() if p.name.endswith(".json") and p.name[:20].isdigit()
                     and ".compacted." not in p.name)
    if damage == "empty compaction":
        compaction.write_bytes(b"")
    elif damage == "truncated compaction":
        compaction.write_bytes(text[: n % max(1, len(text))])
    elif damage == "garbage compaction":
        compaction.write_bytes(bytes((n * 7 + i * 13) % 256 for i in range(40 + n % 200)))
    elif damage == "overlapping compaction":
        shutil.copy(compaction, log / "00000000000000000002.00000000000000000004.compacted.json")
    elif damage == "gapped compaction":
        # A compaction of a range whose middle commit is gone.
        (log / f"{2:020d}.json").unlink()
    elif damage == "compaction past the latest version":
        shutil.copy(compaction, log / f"{6:020d}.{40 + n % 9:020d}.compacted.json")
    elif damage == "missing commit":
        commits[n % len(commits)].unlink()
    elif damage == "truncated commit":
        last = commits[-1]
        last.write_bytes(last.read_bytes()[: n % max(1, last.stat().st_size)])
    elif damage == "corrupt _last_checkpoint":
        (log / "_last_checkpoint").write_bytes(
            [b"", b"{", b"not json", b'{"version": 99, "size": 3}', b'{"version": -4}', b"\xff\xfe"][n % 6])
    elif damage == "missing checkpoint":
        (log / f"{5:020d}.checkpoint.parquet").unlink()
    elif damage == "truncated checkpoint":
        checkpoint = log / f"{5:020d}.checkpoint.parquet"
        checkpoint.write_bytes(checkpoint.read_bytes()[: n % max(1, checkpoint.stat().st_size)])
    else:
        raise AssertionError(damage)
    return damage


DAMAGES = ["empty compaction", "truncated compaction", "garbage compaction", "overlapping compaction",
           "gapped compaction", "compaction past the latest version", "missing commit", "truncated commit",
           "corrupt _last_checkpoint", "missing checkpoint", "truncated checkpoint"]


@settings(SETTINGS, max_examples=EXAMPLES * 2)
@given(damage=st.sampled_from(DAMAGES), n=st.integers(min_value=0, max_value=10**6),
       statement=st.sampled_from(READ_STATEMENTS))
def test_planted_log_files(
    spark: SparkSession, planted_base: Dict[str, Any], tmp_path_factory: pytest.TempPathFactory,
    damage: str, n: int, statement: str
) -> None:
    """A damaged maintenance file (compaction, checkpoint, ``_last_checkpoint``) is never
    worse than its absence: the statement gives the intact table's answer. Damaged commits
    may make the table unreadable: then a typed error."""
    count("planted log files")
    path = tmp_path_factory.mktemp("damaged") / "t"
    plant(planted_base["path"], path, damage, n)
    before = files_of(path)
    sql = statement.format(t=path)
    result, error = attempt(lambda: [tuple(r) for r in spark.sql(sql).collect()])
    commit_damaged = damage in ("missing commit", "truncated commit", "gapped compaction")
    if error is None:
        assert files_of(path) == before, f"{damage}: {sql} wrote files"
        if not commit_damaged and statement.startswith(("DESCRIBE", "SELECT")):
            # Protocol history: the versions and protocols must not change; its columns that
            # list the maintenance files present naturally do.
            def essential(rows: List[Tuple[Any, ...]]) -> List[Tuple[Any, ...]]:
                if statement.startswith("DESCRIBE PROTOCOL"):
                    return [r[:7] for r in rows]
                return [r[1:] for r in rows] if statement.startswith("DESCRIBE REDIRECT") else rows  # r[0] names the copy
            assert essential(result) == essential(planted_base["answers"][statement]), f"{damage} (n={n}): {sql}"
    else:
        assert not (damage in ("empty compaction", "truncated compaction", "garbage compaction",
                               "overlapping compaction", "compaction past the latest version")
                    and statement.startswith(("DESCRIBE PROTOCOL", "SELECT"))), (
            f"{damage} (n={n}) made {sql} fail: {error}")
        assert_typed_and_nothing_written(path, before, error, f"{damage} (n={n}): {sql}")


# ---- the deliberately broken tables of delta-golden -------------------------------------

BROKEN_GOLDEN = ["corrupted-last-checkpoint", "corrupted-last-checkpoint-kernel", "versions-not-contiguous",
                 "deltalog-invalid-protocol-version", "no-delta-log-folder",
                 "deltalog-state-reconstruction-without-metadata", "deltalog-state-reconstruction-without-protocol",
                 "deltalog-state-reconstruction-from-checkpoint-missing-metadata",
                 "deltalog-state-reconstruction-from-checkpoint-missing-protocol"]
#: The read statements, the variants above, then every statement of tests/statements.py
#: not among them yet.
GOLDEN_STATEMENTS = list(dict.fromkeys(READ_STATEMENTS + [
    "ALTER TABLE delta.`{t}` DROP FEATURE deletionVectors DRY RUN",
    "ALTER TABLE delta.`{t}` COMPACT LOG FROM VERSION 0 TO VERSION 1",
] + [s.on_path_template() for s in STATEMENTS]))


#: Statements that only report what the log says (the ones that do not write); they may
#: answer on a table delta-spark cannot load (DESCRIBE PROTOCOL HISTORY exists to show an
#: unreadable protocol).
REPORTING = tuple(s.on_path_template() for s in STATEMENTS if not s.writes)


@pytest.mark.parametrize("name", BROKEN_GOLDEN)
def test_broken_golden_tables(spark: SparkSession, base: Path, name: str) -> None:
    """Every statement on every broken table: a typed error that changes nothing, or a
    result. A statement that maintains or changes the table may succeed only where
    delta-spark loads the table despite the damage (a corrupt ``_last_checkpoint``), and
    must leave delta-spark's view of it (version, files) as it was."""
    source = TESTDATA / "delta-golden" / name
    if not source.is_dir():
        pytest.skip(f"{source} is not available")
    problems: List[str] = []
    for i, statement in enumerate(GOLDEN_STATEMENTS):
        count("broken golden tables x statements")
        path = base / "golden" / f"s{i}" / name
        shutil.copytree(source, path)
        loaded, load_error = attempt(lambda: detail(spark, path))
        before = files_of(path)
        sql = statement.format(t=path)
        _, error = attempt(lambda: spark.sql(sql).collect())
        if error is None:
            if statement in REPORTING or statement.startswith("SELECT"):
                continue
            if "COMPACT LOG" in statement:
                # A compaction of intact commits is right even where a later checkpoint is broken.
                assert_maintenance_files_describe_real_states(path)
            elif load_error is not None:
                problems.append(f"{sql} succeeded on a table delta-spark cannot load ({str(load_error)[:200]})")
            elif statement.startswith("ALTER TABLE") and "SET REDIRECT" not in statement:
                after, _ = attempt(lambda: detail(spark, path))
                if after is not None and loaded is not None and after != loaded:
                    problems.append(f"{sql} changed the table: {loaded} -> {after}")
        elif not is_typed(error):
            problems.append(f"{sql}: untyped {type(error).__name__}: {str(error)[:300]}")
        elif files_of(path) != before:
            problems.append(f"{sql} failed ({type(error).__name__}) but changed files")
    assert not problems, "\n".join(problems)


def detail(spark: SparkSession, path: Path) -> Tuple[int, int]:
    """delta-spark's view of the table: (number of files, bytes); raises when it cannot load it."""
    row = spark.sql(f"DESCRIBE DETAIL delta.`{path}`").first()
    assert row is not None
    return int(row["numFiles"] or 0), int(row["sizeInBytes"] or 0)
