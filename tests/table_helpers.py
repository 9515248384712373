"""Delta tables for the tests: copies of the tables other clients wrote (tests/data), the
droppable table of docs/sql-reference.md, and reading, listing and aging a table's files."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path
from typing import Dict, List, Optional

from deltalake import DeltaTable
from pyspark.sql import SparkSession

from environment import REPO_ROOT
from spark_line import ON_SPARK_35

#: Tables written by other Delta clients (tests/data/README.md). Read-only: tests copy from it.
TESTDATA = Path(os.environ.get("DELTA_LIFECYCLE_TESTDATA", REPO_ROOT / "tests" / "data"))

LOG_FILE_PREFIX_DIGITS = 20


def copy_testdata(name: str, destination: Path) -> Path:
    """Copy the test table ``name`` (e.g. ``"delta-rs/simple_table"``) under ``destination``
    and return the copy; the shared originals must never be written to."""
    source = TESTDATA / name
    if not (source / "_delta_log").is_dir():
        raise FileNotFoundError(f"test table {source} is missing (tests/data/README.md)")
    target = destination / name.replace("/", "__")
    shutil.copytree(source, target)
    return target


#: The droppable table of docs/sql-reference.md has a column per line family, in this order.
DROPPABLE_COLUMNS = {"4.x": 1, "3.5": 2}


def documented_droppable(line_family: str, beyond_stock: bool = False) -> List[str]:
    """The features the droppable table of docs/sql-reference.md (between
    ``<!-- droppable -->`` markers) marks droppable with ``line_family``'s delta-spark,
    sorted; with ``beyond_stock``, only those this project drops although stock delta-spark
    of the line does not."""
    page = (REPO_ROOT / "docs" / "sql-reference.md").read_text()
    block = page.split("<!-- droppable -->")[1].split("<!-- /droppable -->")[0]
    column = DROPPABLE_COLUMNS[line_family]
    names = []
    for row in block.strip().splitlines()[2:]:
        cells = [c.strip() for c in row.strip().strip("|").split("|")]
        verdict = cells[column]
        if verdict == "yes, beyond stock" or (verdict == "yes" and not beyond_stock):
            names.append(cells[0].strip("`"))
    return sorted(names)


def ids(spark: SparkSession, path: Path, version: Optional[int] = None) -> List[int]:
    reader = spark.read.format("delta")
    if version is not None:
        reader = reader.option("versionAsOf", version)
    return sorted(int(r[0]) for r in reader.load(str(path)).select("id").collect())


def redirected_ids(spark: SparkSession, path: Path) -> List[int]:
    """The rows of a table that may be redirected, read through the extension: by DataFrame
    ``load`` where the line routes it, by SQL on the path on Spark 3.5, whose delta-spark opens a
    reader-writer redirected source by path itself and refuses it (docs/spark-lines.md)."""
    if not ON_SPARK_35:
        return ids(spark, path)
    return sorted(int(r[0]) for r in spark.sql(f"SELECT id FROM delta.`{path}`").collect())


def delta_rs_ids(path: Path, version: Optional[int] = None) -> List[int]:
    table = DeltaTable(str(path)) if version is None else DeltaTable(str(path), version=version)
    return sorted(int(v) for v in table.to_pyarrow_table().column("id").to_pylist())


def files_of(table: Path) -> Dict[str, int]:
    """Every file under ``table`` with its size."""
    out: Dict[str, int] = {}
    for root, _, names in os.walk(table):
        for name in names:
            path = Path(root) / name
            out[str(path.relative_to(table))] = path.stat().st_size
    return out


def latest_version(path: Path) -> int:
    return max(int(n[:LOG_FILE_PREFIX_DIGITS]) for n in os.listdir(path / "_delta_log") if n.endswith(".json"))


def age_log(path: Path, through: int, hours: float) -> None:
    """Make the log files of versions up to ``through`` look ``hours`` old, in commit order."""
    base = time.time() - hours * 3600
    for name in os.listdir(path / "_delta_log"):
        if name[:LOG_FILE_PREFIX_DIGITS].isdigit() and int(name[:LOG_FILE_PREFIX_DIGITS]) <= through:
            stamp = base + int(name[:LOG_FILE_PREFIX_DIGITS])
            os.utime(path / "_delta_log" / name, (stamp, stamp))


def deletion_vector_table(spark: SparkSession, path: Path) -> None:
    """Ten one-file commits of two rows; three files then carry deletion vectors."""
    spark.sql(
        f"CREATE TABLE delta.`{path}` (id BIGINT) USING delta "
        "TBLPROPERTIES ('delta.enableDeletionVectors' = 'true', 'delta.checkpointInterval' = '4')"
    )
    for i in range(10):
        spark.sql(
            f"INSERT INTO delta.`{path}` SELECT /*+ COALESCE(1) */ * FROM VALUES ({i}), ({i + 100}) AS t(id)"
        )
    spark.sql(f"DELETE FROM delta.`{path}` WHERE id IN (101, 103, 105)")
