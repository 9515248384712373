"""Runs the differential corpus (corpus.py) in one session, stock or with this extension.

    python tests/differential/runner.py batch <spec.json>   run operations, write their results
    python tests/differential/runner.py serve <spec.json>   time operations on request (bench)

The spec (JSON) names the session (``"stock"``: delta-spark's extension and catalog only;
``"extension"``: set up by ``configure_spark``), its scratch folder ``root`` (its own Hive
metastore on Derby, its warehouse, its tables), the Spark settings ``conf``, and the
operations, kinds of reference (``"name"``, ``"path"``) and variants to run:

- ``plain``: each operation on a table of its own, made by the operation's setup.
- ``catalog_managed``: each operation by name on a table of a Unity Catalog catalog
  (``spec["catalog_managed"]``: the catalog's Spark settings and packages, and a schema of
  the session's own), created as a catalog-managed table: the session's default
  ``delta.feature.catalogManaged`` is ``supported`` while the operation and its setup run, so
  every table they create there takes its commits through the catalog. Both sessions reach
  the same server and catalog; a record names the session's schema as ``<schema>``.
- ``redirected``: in the extension session, each table is made by its setup, redirected with
  ``ALTER TABLE ... SET REDIRECT TO '<root>/destinations/<kind>/<op>'``, its destination
  copied to the same place under the stock run's root (``copies_root``), and then the
  operation runs on the source's name or path. The stock session waits for those copies
  (``<root>/destinations/READY``), registers each by name where the operation uses names,
  and runs the operation on the copy: stock delta-spark on a plain table of the
  destination's history.

Every result is normalized (normalize.py) against the run's root before it is written, so
two runs' results compare as they are. Each operation is timed alone (not its setup, nor
the table state read afterwards).
"""

from __future__ import annotations

import json
import shutil
import sys
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence

TESTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TESTS))

from pyspark.sql import SparkSession  # noqa: E402

from differential.corpus import (  # noqa: E402
    Operation,
    TableRef,
    basic_table,
    by_name,
    ordered_rows,
    sql,
    table_rows,
)
from differential.normalize import normalize  # noqa: E402
from metastore import hive_metastore_conf  # noqa: E402
from spark_errors import condition_of  # noqa: E402
import spark_sessions  # noqa: E402
from spark_sessions import SessionSpec  # noqa: E402

#: How long a stock run waits for the extension run's copies of the redirect destinations.
COPIES_TIMEOUT_SECONDS = 1800


#: The session default that makes every table created while it is set catalog-managed.
CATALOG_MANAGED_DEFAULT = "spark.databricks.delta.properties.defaults.feature.catalogManaged"


def start_session(
    kind: str, root: Path, conf: Dict[str, str], packages: Sequence[str] = ()
) -> SparkSession:
    """``packages`` are Maven coordinates the session needs beside delta-spark (and this
    project's jar): Unity Catalog's client libraries, for the ``catalog_managed`` variant."""
    return spark_sessions.start_session(SessionSpec(
        extension=kind != "stock",
        app_name=f"differential-{kind}",
        conf={**conf, **hive_metastore_conf(root)},
        packages=tuple(packages),
        # The delta-spark release the extension session runs with: configure_spark takes the
        # one the line's jar is built against, which may be another patch than pip's
        # delta-spark (3.3.3 against 3.3.2 on Spark 3.5), as configure_spark_with_delta_pip
        # would take.
        stock_delta="bundled",
        log_level="ERROR",
    ))


# ---- results ------------------------------------------------------------------------------


def error_record(error: BaseException) -> Dict[str, Any]:
    """An error as the suite compares it: the condition and the exception class, outermost
    first, down the JVM cause chain; the message is kept for reading only."""
    chain = []
    java = getattr(error, "_origin", None) or getattr(error, "java_exception", None)
    while java is not None and len(chain) < 8:
        chain.append({"class": java.getClass().getName(), "condition": _java_condition(java)})
        java = java.getCause()
    condition = condition_of(error) if hasattr(error, "getErrorClass") else None
    return {
        "condition": condition or (chain[0]["condition"] if chain else None),
        "class": chain[0]["class"] if chain else type(error).__name__,
        "causes": chain[1:],
        "message": str(error)[:600],
    }


def _java_condition(throwable: Any) -> Optional[str]:
    try:
        condition = throwable.getErrorClass()
    except Exception:  # not a SparkThrowable
        return None
    return str(condition) if condition is not None else None


def captured(action: Callable[[], Any]) -> Dict[str, Any]:
    try:
        return {"value": action()}
    except Exception as e:
        return {"error": error_record(e)}


def table_state(spark: SparkSession, t: TableRef) -> Dict[str, Any]:
    """The table after an operation: its rows and schema, DESCRIBE DETAIL, its last commit."""
    return {
        "table": captured(lambda: table_rows(spark, t)),
        "detail": captured(lambda: sql(spark, f"DESCRIBE DETAIL {t.sql}")),
        "last_commit": captured(
            lambda: ordered_rows(spark.sql(f"DESCRIBE HISTORY {t.sql} LIMIT 1"))
        ),
    }


def run_operation(
    spark: SparkSession, op: Operation, t: TableRef, setup: bool, state: bool = True
) -> Dict[str, Any]:
    """Set the table up (unless it is ready), run the operation, read the state. The record's
    ``timing`` (seconds of each step) is not compared; ``timing.operation`` is what the
    benchmark measures."""
    t.scratch.mkdir(parents=True, exist_ok=True)
    timing: Dict[str, float] = {}
    record: Dict[str, Any] = {"timing": timing}
    start = time.perf_counter()
    if setup and op.setup is not None:
        try:
            op.setup(spark, t)
        except Exception as e:
            record["setup_error"] = error_record(e)
            return record
        timing["setup"] = time.perf_counter() - start
    start = time.perf_counter()
    try:
        record["result"] = op.run(spark, t)
    except Exception as e:
        record["error"] = error_record(e)
    timing["operation"] = time.perf_counter() - start
    if state:
        start = time.perf_counter()
        record["state"] = table_state(spark, t)
        timing["state"] = time.perf_counter() - start
    return record


# ---- the variants -------------------------------------------------------------------------


class Layout:
    """Where a run keeps each table; the same relative layout in every run, so that the
    normalized results of two runs name the same places."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def ref(self, variant: str, kind: str, op: str) -> TableRef:
        path = str(self.root / "tables" / variant / op) if kind == "path" else ""
        return TableRef(kind, f"{variant}_{op}", path, self.root / "scratch" / variant / kind / op)

    def managed_ref(self, table_schema: str, op: str) -> TableRef:
        """The ``catalog_managed`` variant's table: by name in ``table_schema``
        (``<catalog>.<schema>``)."""
        return TableRef("name", f"{table_schema}.{op}", "",
                        self.root / "scratch" / "catalog_managed" / op)

    def destination(self, kind: str, op: str) -> Path:
        return self.root / "destinations" / kind / op

    @property
    def copies_ready(self) -> Path:
        return self.root / "destinations" / "READY"


def key(variant: str, kind: str, op: str) -> str:
    return f"{variant}/{kind}/{op}"


class Results:
    """The run's output, one JSON object a line, written as each result comes: the session
    first, then ``{"key", "record"}`` per operation (normalized against the run's root), so
    that a run stopped half-way still shows how far it got."""

    def __init__(self, spark: SparkSession, spec: Dict[str, Any]) -> None:
        self.root = spec["root"]
        managed = spec.get("catalog_managed")
        self.names = {managed["schema"]: "<schema>"} if managed else {}
        self.file = open(spec["out"], "w")
        self._write({
            "session": spec["session"],
            "spark": spark.version,
            "extensions": spark.conf.get("spark.sql.extensions"),
            "catalog": spark.conf.get("spark.sql.catalog.spark_catalog"),
        })

    def add(self, key: str, record: Dict[str, Any]) -> None:
        self._write({"key": key, "record": normalize(record, self.root, self.names)})

    def _write(self, line: Dict[str, Any]) -> None:
        self.file.write(json.dumps(line, sort_keys=True) + "\n")
        self.file.flush()


def read_results(path: Path) -> Dict[str, Any]:
    """A run's output as written by :class:`Results`: the session's fields, and its records
    by key under ``results``."""
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    return {**lines[0], "results": {line["key"]: line["record"] for line in lines[1:]}}


def run_plain(spark: SparkSession, spec: Dict[str, Any], layout: Layout, out: Results) -> None:
    for kind in spec["refs"]["plain"]:
        for op in map(by_name, spec["ops"]):
            ref = layout.ref("plain", kind, op.name)
            out.add(key("plain", kind, op.name), run_operation(spark, op, ref, setup=True))


def run_catalog_managed(
    spark: SparkSession, spec: Dict[str, Any], layout: Layout, out: Results
) -> None:
    managed = spec["catalog_managed"]
    table_schema = f"{managed['catalog']}.{managed['schema']}"
    spark.conf.set(CATALOG_MANAGED_DEFAULT, "supported")
    try:
        for op in map(by_name, managed["ops"]):
            ref = layout.managed_ref(table_schema, op.name)
            out.add(key("catalog_managed", "name", op.name), run_operation(spark, op, ref, True))
    finally:
        spark.conf.unset(CATALOG_MANAGED_DEFAULT)


def prepare_redirected(
    spark: SparkSession, spec: Dict[str, Any], layout: Layout, out: Results
) -> List[str]:
    """Extension run: set each table up, redirect it, copy its destination for the stock
    run. Returns the keys of the tables redirected; the others' errors go to ``out``."""
    copies = Layout(Path(spec["copies_root"]))
    prepared = []
    for kind in spec["refs"]["redirected"]:
        for op in map(by_name, spec["ops"]):
            ref = layout.ref("redirected", kind, op.name)
            destination = layout.destination(kind, op.name)
            step = "setup_error"
            try:
                (op.setup or basic_table)(spark, ref)
                step = "redirect_error"
                spark.sql(f"ALTER TABLE {ref.sql} SET REDIRECT TO '{destination}'").collect()
            except Exception as e:
                out.add(key("redirected", kind, op.name), {step: error_record(e)})
                continue
            shutil.copytree(destination, copies.destination(kind, op.name))
            prepared.append(key("redirected", kind, op.name))
    copies.copies_ready.parent.mkdir(parents=True, exist_ok=True)
    copies.copies_ready.write_text(json.dumps(prepared))
    return prepared


def run_redirected(
    spark: SparkSession, spec: Dict[str, Any], layout: Layout, prepared: List[str], out: Results
) -> None:
    """Extension run: each operation on its redirected source."""
    for kind in spec["refs"]["redirected"]:
        for op in map(by_name, spec["ops"]):
            if key("redirected", kind, op.name) in prepared:
                ref = layout.ref("redirected", kind, op.name)
                out.add(key("redirected", kind, op.name), run_operation(spark, op, ref, setup=False))


def run_on_copies(spark: SparkSession, spec: Dict[str, Any], layout: Layout, out: Results) -> None:
    """Stock run: each operation on the copy of its destination. A table the extension run
    could not set up is set up here too, so that the setup errors are compared."""
    deadline = time.monotonic() + COPIES_TIMEOUT_SECONDS
    while not layout.copies_ready.exists():
        if time.monotonic() > deadline:
            raise TimeoutError(f"no copies of the destinations at {layout.copies_ready}")
        time.sleep(1)
    prepared = set(json.loads(layout.copies_ready.read_text()))
    for kind in spec["refs"]["redirected"]:
        for op in map(by_name, spec["ops"]):
            name = key("redirected", kind, op.name)
            copy = layout.destination(kind, op.name)
            ref = layout.ref("redirected", kind, op.name)
            if name in prepared and kind == "path":
                ref = TableRef(kind, ref.name, str(copy), ref.scratch)
            elif name in prepared:
                spark.sql(f"CREATE TABLE {ref.name} USING delta LOCATION '{copy}'")
            out.add(name, run_operation(spark, op, ref, setup=name not in prepared))


def batch(spark: SparkSession, spec: Dict[str, Any]) -> None:
    layout = Layout(Path(spec["root"]))
    out = Results(spark, spec)
    redirected = "redirected" in spec["variants"]
    extension = spec["session"] == "extension"
    prepared = prepare_redirected(spark, spec, layout, out) if redirected and extension else []
    if "plain" in spec["variants"]:
        run_plain(spark, spec, layout, out)
    if "catalog_managed" in spec["variants"] and spec.get("catalog_managed"):
        run_catalog_managed(spark, spec, layout, out)
    if redirected and extension:
        run_redirected(spark, spec, layout, prepared, out)
    elif redirected:
        run_on_copies(spark, spec, layout, out)


def serve(spark: SparkSession, spec: Dict[str, Any]) -> None:
    """Answer requests on stdin, one JSON object a line (``op``, ``kind``, ``tag``): set up a
    fresh table, run the operation on it, answer its seconds and error condition."""
    layout = Layout(Path(spec["root"]))
    print("READY", flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        op = by_name(request["op"])
        ref = layout.ref(f"bench_{request['tag']}", request["kind"], op.name)
        record = run_operation(spark, op, ref, setup=True, state=False)
        error = record.get("setup_error") or record.get("error")
        seconds = record["timing"].get("operation")
        answer = {"seconds": seconds, "error": error and (error["condition"] or error["class"])}
        print("ANSWER " + json.dumps(answer), flush=True)


def main(argv: List[str]) -> int:
    mode, spec_file = argv
    spec = json.loads(Path(spec_file).read_text())
    managed = spec.get("catalog_managed") or {}
    spark = start_session(spec["session"], Path(spec["root"]),
                          {**spec["conf"], **managed.get("conf", {})}, managed.get("packages", ()))
    try:
        {"batch": batch, "serve": serve}[mode](spark, spec)
    finally:
        spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
