"""Every ``>>>`` example in the docstrings of ``python/delta_lifecycle`` runs here as a doctest,
against a real session with the extension and real Delta tables; a changed output fails.

The examples are collected from every module of the package by the standard ``doctest``
machinery (``DocTestFinder``), one test per docstring, and compared with ``ELLIPSIS`` and
``NORMALIZE_WHITESPACE``: ``...`` stands for the parts that differ from run to run (sizes,
job ids, digests of the bundled jar, the checkout's path).

How an example meets a table. The examples name the places a reader expects, ``/data/events``
and ``/new/events``, and the catalog table ``sales.events``, because the API reference
(docs/python-api.md) shows them as they are written: a path the harness defines
(``events_path``) would read as a riddle there. So each docstring runs in a folder of its own,
and the harness moves the example paths into it: before the docstring runs, every absolute
path of :data:`EXAMPLE_PATHS` in its source (inside a quote or a backtick) gets the folder in
front, and in what the examples print the folder is taken out again, so an expected output
shows the same ``file:/data/events/...`` the reader sees in the source. Nothing outside the
test's folder is read or written, whatever exists at ``/data`` on the machine.

What is there when a docstring runs:

* ``/data/events``: a fresh copy of the table :func:`events_template` builds once per module,
  six versions (created, written, deletion vectors enabled, a DELETE that writes a deletion
  vector and a checkpoint, written twice more: something to drop, to compact and to clean),
  its log up to the checkpoint made 200 hours old;
* ``sales.events``: a catalog table in database ``sales`` over another copy of it;
* for the docstrings in :data:`REDIRECTED`, ``/data/events`` redirected to ``/new/events``;
  for those in :data:`SLOW_COPIES`, copies slowed by the test-only setting that makes a move
  run long enough for its progress to be reported;
* in every example, ``spark`` (the module's session, set up by ``configure_spark``) and
  ``LifecycleTable``, besides the names of the example's module; logging as in a fresh
  interpreter (no handlers on the root logger).

An example that cannot run here (an ``s3a://`` location) carries ``# doctest: +SKIP`` with a
comment saying why, and is listed in :data:`SKIPPED`; a skip not listed there fails.
The examples show the primary Spark line (a bundled jar's coordinate, Hadoop's version), so
this module runs on that line only (Makefile, ``PRIMARY_ONLY_MODULES``).
"""

from __future__ import annotations

import doctest
import importlib
import logging
import pkgutil
import re
import shutil
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any, Dict, Iterator, List

import pytest
from pyspark.sql import SparkSession

import delta_lifecycle
from table_helpers import age_log
from delta_lifecycle import LifecycleTable

#: The sources of the package as imported (python/delta_lifecycle in a checkout).
PACKAGE = Path(delta_lifecycle.__file__).resolve().parent

#: How examples and their outputs are compared.
OPTIONS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE

#: The absolute paths of the examples that are moved into the docstring's folder.
EXAMPLE_PATHS = ("/data/", "/new/", "/tmp/not-a-table", "/no/such/path")
_EXAMPLE_PATH = re.compile(
    "(?<=[\"'`])(?=" + "|".join(re.escape(p) for p in EXAMPLE_PATHS) + ")"
)

#: The docstrings that find ``/data/events`` redirected to ``/new/events``.
REDIRECTED = {
    "delta_lifecycle.config.route_delta_tables",
    "delta_lifecycle.tables.LifecycleTable.unset_redirect",
}

#: The docstrings whose moves copy each file slowly (a test-only setting), so that their
#: progress is reported: the reports come from a poll every second.
SLOW_COPIES = {"delta_lifecycle.progress"}

#: The docstrings with an example that cannot run here, and why.
SKIPPED = {
    "delta_lifecycle.results._redirect.RedirectPlan": "a move between s3a:// buckets",
}


def package_modules() -> List[ModuleType]:
    """``delta_lifecycle`` and every module below it."""
    names = [m.name for m in pkgutil.walk_packages(delta_lifecycle.__path__, "delta_lifecycle.")]
    return [delta_lifecycle] + [importlib.import_module(name) for name in sorted(names)]


def collect() -> List[doctest.DocTest]:
    """Every docstring of the package with examples, as ``doctest`` finds them."""
    finder = doctest.DocTestFinder(exclude_empty=True)
    found = [test for module in package_modules() for test in finder.find(module) if test.examples]
    return sorted(found, key=lambda test: test.name)


DOCTESTS = collect()


class OutputInFolder(doctest.OutputChecker):
    """Compares what an example printed, with the docstring's folder taken out of it, to what
    the example expects."""

    def __init__(self, folder: str) -> None:
        self.folder = folder

    def check_output(self, want: str, got: str, optionflags: int) -> bool:
        return super().check_output(want, got.replace(self.folder, ""), optionflags)

    def output_difference(self, example: doctest.Example, got: str, optionflags: int) -> str:
        return super().output_difference(example, got.replace(self.folder, ""), optionflags)


def in_folder(test: doctest.DocTest, folder: str, globs: Dict[str, Any]) -> doctest.DocTest:
    """``test`` with its example paths moved into ``folder``, to run with ``globs``."""
    examples = [
        doctest.Example(
            _EXAMPLE_PATH.sub(lambda _: folder, ex.source),
            ex.want,
            ex.exc_msg,
            lineno=ex.lineno,
            indent=ex.indent,
            options=ex.options,
        )
        for ex in test.examples
    ]
    return doctest.DocTest(examples, globs, test.name, test.filename, test.lineno, test.docstring)


@contextmanager
def fresh_logging() -> Iterator[None]:
    """Logging as in a fresh interpreter while an example runs (pytest's handlers off the root
    logger, so that ``logging.basicConfig`` configures it), restored afterwards."""
    root, progress = logging.getLogger(), logging.getLogger("delta_lifecycle.progress")
    handlers, root_level, progress_level = root.handlers[:], root.level, progress.level
    root.handlers = []
    try:
        yield
    finally:
        root.handlers = handlers
        root.setLevel(root_level)
        progress.setLevel(progress_level)


@pytest.fixture(scope="module")
def events_template(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The table every docstring gets a copy of as ``/data/events`` (see the module's
    docstring), built once."""
    path = tmp_path_factory.mktemp("template") / "events"
    table = f"delta.`{path}`"
    spark.sql(
        f"CREATE TABLE {table} (id BIGINT, kind STRING) USING delta "
        "TBLPROPERTIES ('delta.checkpointInterval' = '3')"
    )
    spark.sql(
        f"INSERT INTO {table} SELECT /*+ REPARTITION(2) */ * FROM VALUES "
        "(1, 'view'), (2, 'click'), (3, 'view'), (4, 'click') AS v(id, kind)"
    )
    spark.sql(f"ALTER TABLE {table} SET TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')")
    spark.sql(f"DELETE FROM {table} WHERE id = 1")
    for row in ("(5, 'view')", "(6, 'click')"):
        spark.sql(f"INSERT INTO {table} VALUES {row}")
    age_log(path, through=3, hours=200)
    return path


@pytest.fixture(scope="module")
def sales_database(spark: SparkSession) -> Iterator[str]:
    spark.sql("CREATE DATABASE sales")
    yield "sales"
    spark.sql("DROP DATABASE sales CASCADE")


@pytest.mark.parametrize("test", DOCTESTS, ids=lambda test: test.name)
def test_docstring_examples(
    test: doctest.DocTest,
    spark: SparkSession,
    tmp_path: Path,
    request: pytest.FixtureRequest,
) -> None:
    folder = str(tmp_path.resolve())
    source = "".join(ex.source for ex in test.examples)
    if "/data/events" in source:
        shutil.copytree(request.getfixturevalue("events_template"), f"{folder}/data/events")
    catalog_table = "sales.events" in source
    if catalog_table:
        request.getfixturevalue("sales_database")
        shutil.copytree(request.getfixturevalue("events_template"), f"{folder}/sales/events")
        spark.sql(f"CREATE TABLE sales.events USING delta LOCATION '{folder}/sales/events'")
    if test.name in REDIRECTED:
        spark.sql(
            f"ALTER TABLE delta.`{folder}/data/events` SET REDIRECT TO '{folder}/new/events'"
        ).collect()
    if test.name in SLOW_COPIES:
        spark.conf.set("spark.deltaLifecycle.test.copyDelayMillis", "1000")
    globs = {**test.globs, "spark": spark, "LifecycleTable": LifecycleTable}
    runner = doctest.DocTestRunner(checker=OutputInFolder(folder), optionflags=OPTIONS)
    report: List[str] = []
    try:
        with fresh_logging():
            runner.run(in_folder(test, folder, globs), out=report.append)
    finally:
        spark.conf.unset("spark.deltaLifecycle.test.copyDelayMillis")
        if catalog_table:
            spark.sql("DROP TABLE IF EXISTS sales.events")
    assert runner.failures == 0, "".join(report)


def test_every_example_in_the_sources_is_collected() -> None:
    """Each ``>>>`` line of the package's sources (but a comment alone, which doctest passes
    over) is an example of a collected docstring: none sits where ``DocTestFinder`` does not
    look."""
    collected: Dict[str, int] = {}
    for test in DOCTESTS:
        collected[test.filename] = collected.get(test.filename, 0) + len(test.examples)
    for source in sorted(PACKAGE.rglob("*.py")):
        lines = source.read_text().splitlines()
        prompts = sum(re.match(r"\s*>>> *[^\s#]", line) is not None for line in lines)
        assert collected.get(str(source), 0) == prompts, source
    assert sum(collected.values()) >= 100


def test_only_the_listed_examples_are_skipped() -> None:
    skipping = {
        test.name
        for test in DOCTESTS
        if any(ex.options.get(doctest.SKIP) for ex in test.examples)
    }
    assert skipping == set(SKIPPED)


def test_the_setup_tables_name_collected_docstrings() -> None:
    names = {test.name for test in DOCTESTS}
    assert sorted((REDIRECTED | SLOW_COPIES | set(SKIPPED)) - names) == []
