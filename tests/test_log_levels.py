"""Hierarchical log compaction (docs/log-compaction.md, "Levels"): the post-commit policy
writes level-1 compactions from commits and merges them into level-2 ones; stock delta-spark
(4.4 here, 3.3 with DELTA_LIFECYCLE_STOCK_33=1 or the full matrix), this project's log core
and delta-rs read every table the same, also when a compaction overlaps another; this
project's log core also when one is empty or cut short (stock delta-spark cannot: see
``DAMAGED``), and the policy's next run deletes an empty one; the covered narrower
compactions go once their retention has passed.

The tables use an interval of 3 and a checkpoint interval of 50: levels of 3 and 9 commits.
Versions 0..29 then make level 2 ``0..8``, ``9..17``, ``18..26`` and level 1 ``1..2``,
``3..5``, ``6..8``, ``10..11``, ... (shifted one version so that no two levels share a start
version), and ``28..29``.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import pytest
from deltalake import DeltaTable
from pyspark.sql import SparkSession

from client_venvs import client_venv, run_python
from deltalog import assert_maintenance_files_describe_real_states
from environment import FULL_MATRIX
from spark_sessions import SessionSpec, preamble
from stock_session import REFUSAL_SOURCE, run_stock_script
from table_helpers import age_log, delta_rs_ids, ids

PROPERTIES = (
    "'deltaLifecycle.logCompaction.interval' = '3', 'delta.checkpointInterval' = '50'"
)
VERSIONS = 30
STOCK_33 = FULL_MATRIX or os.environ.get("DELTA_LIFECYCLE_STOCK_33") == "1"


def name(start: int, end: int) -> str:
    return f"{start:020d}.{end:020d}.compacted.json"


def compactions(path: Path) -> List[Tuple[int, int]]:
    return sorted(
        (int(n[:20]), int(n[21:41])) for n in os.listdir(path / "_delta_log") if n.endswith(".compacted.json")
    )


def insert_and_wait(spark: SparkSession, path: Path, values: range) -> None:
    maintenance = spark._jvm.io.github.deltalifecycle.features.compaction.LogMaintenance  # type: ignore[attr-defined]
    for i in values:
        spark.sql(f"INSERT INTO delta.`{path}` VALUES ({i})")
        assert maintenance.awaitIdle(60000)


def core_chain(spark: SparkSession, path: Path, version: Optional[int] = None) -> List[str]:
    """The files this project's log core reads after the checkpoint: ``x-y`` for a compaction,
    ``v`` for a commit."""
    jvm = spark._jvm  # type: ignore[attr-defined]
    log = jvm.io.github.deltalifecycle.core.TableLog.forPath(spark._jsc.hadoopConfiguration(), str(path))
    snapshot = log.latestSnapshot() if version is None else log.snapshotAt(version)
    steps = snapshot.segment().steps()
    out = []
    for i in range(steps.size()):
        step = steps.apply(i)
        if step.isLeft():
            c = step.swap().toOption().get()
            out.append(f"{c.start()}-{c.end()}")
        else:
            out.append(str(step.toOption().get().version()))
    return out


def core_files(spark: SparkSession, path: Path, version: Optional[int] = None) -> List[str]:
    """The data files of a version as this project's log core replays them (compactions that
    are empty or unreadable replaced by their commits)."""
    jvm = spark._jvm  # type: ignore[attr-defined]
    log = jvm.io.github.deltalifecycle.core.TableLog.forPath(spark._jsc.hadoopConfiguration(), str(path))
    snapshot = log.latestSnapshot() if version is None else log.snapshotAt(version)
    files = snapshot.activeFiles()
    return sorted(os.path.basename(files.apply(i).path()) for i in range(files.size()))


def delta_rs_files(path: Path, version: Optional[int] = None) -> List[str]:
    table = DeltaTable(str(path)) if version is None else DeltaTable(str(path), version=version)
    return sorted(os.path.basename(uri) for uri in table.file_uris())


#: Stock delta-spark, in a session without this extension: the ids at each requested version,
#: and the log files its snapshot of the latest version chose after the checkpoint.
STOCK_BODY = """
    out = {}
    jvm = spark._jvm
    for key, (path, versions) in json.loads(sys.argv[1]).items():
        r = {}
        for v in versions:
            reader = spark.read.format("delta")
            if v is not None:
                reader = reader.option("versionAsOf", v)
            try:
                r[str(v)] = sorted(int(x[0]) for x in reader.load(path).select("id").collect())
            except Exception as e:
                r[str(v)] = refusal(e)
        jvm.org.apache.spark.sql.delta.DeltaLog.clearCache()
        log = jvm.org.apache.spark.sql.delta.DeltaLog.forTable(spark._jsparkSession, path)
        deltas = log.unsafeVolatileSnapshot().logSegment().deltas()
        chain = []
        for i in range(deltas.size()):
            n = deltas.apply(i).getPath().getName()
            chain.append(str(int(n[:20])) if n.count(".") == 1 else f"{int(n[:20])}-{int(n[21:41])}")
        r["chain"] = chain
        out[key] = r
    emit(out)
"""

#: The same reads with delta-spark 3.3 on Spark 3.5, in its own venv.
STOCK_33_SCRIPT = preamble(SessionSpec(
    extension=False,
    master="local[1]",
    conf={"spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "1"},
    packages=("io.delta:delta-spark_2.12:3.3.2",),
    stock_delta="given",
)) + """
def emit(result):
    print("RESULT " + json.dumps(result))
""" + REFUSAL_SOURCE + "\n".join(line[4:] for line in STOCK_BODY.splitlines())


@dataclass(frozen=True)
class Tables:
    root: Path
    #: key -> (path, versions to read, the rows expected at each)
    cases: Dict[str, Tuple[Path, Dict[Optional[int], List[int]]]]


def expected_ids(last_version: int) -> List[int]:
    """Rows of a table whose version v > 0 inserted the value v - 1."""
    return list(range(last_version))


@pytest.fixture(scope="module")
def tables(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Tables:
    root = tmp_path_factory.mktemp("levels")
    built = root / "built"
    spark.sql(f"CREATE TABLE delta.`{built}` (id BIGINT) USING delta TBLPROPERTIES ({PROPERTIES})")
    insert_and_wait(spark, built, range(VERSIONS - 1))

    def copy(key: str) -> Path:
        target = root / key
        shutil.copytree(built, target, copy_function=shutil.copy2)
        return target

    cases: Dict[str, Tuple[Path, Dict[Optional[int], List[int]]]] = {}
    cases["built"] = (built, {None: expected_ids(29), 13: expected_ids(13)})

    # Level 2 ``9..17`` of zero bytes: every reader must replay its commits instead.
    zero = copy("zero")
    (zero / "_delta_log" / name(9, 17)).write_bytes(b"")
    cases["zero"] = (zero, {None: expected_ids(29)})

    # Level 2 ``18..26`` cut in the middle of a line.
    cut = copy("cut")
    target = cut / "_delta_log" / name(18, 26)
    data = target.read_bytes()
    target.write_bytes(data[: len(data) - 25])
    cases["cut"] = (cut, {None: expected_ids(29)})

    # Another writer's compaction of 5..13, overlapping level 2 ``0..8`` and ``9..17``.
    overlap = copy("overlap")
    scratch = copy("scratch-overlap")
    for c in compactions(scratch):
        os.remove(scratch / "_delta_log" / name(*c))
    spark.sql(f"ALTER TABLE delta.`{scratch}` COMPACT LOG FROM VERSION 5 TO VERSION 13").collect()
    shutil.copy2(scratch / "_delta_log" / name(5, 13), overlap / "_delta_log" / name(5, 13))
    cases["overlap"] = (overlap, {None: expected_ids(29)})

    # Old logs: the next commits remove the level-1 compactions that level 2 covers.
    aged = copy("aged")
    age_log(aged, through=VERSIONS - 1, hours=48)
    insert_and_wait(spark, aged, range(VERSIONS - 1, VERSIONS + 2))
    cases["aged"] = (aged, {None: expected_ids(32)})

    # The damaged copies after their next commits: the empty compaction is deleted and merged
    # again; a merge over a cut level-1 compaction reads its commits.
    repaired = copy("repaired")
    (repaired / "_delta_log" / name(9, 17)).write_bytes(b"")
    insert_and_wait(spark, repaired, range(VERSIONS - 1, VERSIONS + 2))
    cases["repaired"] = (repaired, {None: expected_ids(32)})

    early = root / "cut-before-merge"
    spark.sql(f"CREATE TABLE delta.`{early}` (id BIGINT) USING delta TBLPROPERTIES ({PROPERTIES})")
    insert_and_wait(spark, early, range(7))
    level1 = early / "_delta_log" / name(3, 5)
    data = level1.read_bytes()
    level1.write_bytes(data[: len(data) // 2])
    insert_and_wait(spark, early, range(7, 8))
    cases["cut-before-merge"] = (early, {None: expected_ids(8)})
    return Tables(root, cases)


@pytest.fixture(scope="module")
def stock(tables: Tables) -> Dict[str, Any]:
    request = {k: (str(p), list(v)) for k, (p, v) in tables.cases.items()}
    import json

    return run_stock_script(STOCK_BODY, [json.dumps(request)])


def test_the_policy_writes_two_levels_that_never_share_a_start(tables: Tables) -> None:
    built = tables.cases["built"][0]
    level1 = [(1, 2), (3, 5), (6, 8), (10, 11), (12, 14), (15, 17), (19, 20), (21, 23), (24, 26), (28, 29)]
    level2 = [(0, 8), (9, 17), (18, 26)]
    assert compactions(built) == sorted(level1 + level2)
    assert assert_maintenance_files_describe_real_states(built) == len(level1 + level2)


def test_stock_delta_spark_and_the_log_core_read_the_widest_compactions(
    spark: SparkSession, tables: Tables, stock: Dict[str, Any]
) -> None:
    built = tables.cases["built"][0]
    widest = ["0-8", "9-17", "18-26", "27", "28-29"]
    assert stock["built"]["chain"] == widest
    assert core_chain(spark, built) == widest
    assert core_chain(spark, built, 13) == ["0-8", "9", "10-11", "12", "13"]
    assert stock["built"]["13"] == expected_ids(13)


#: Tables stock delta-spark cannot read right, whatever this project does at read time: it
#: takes an empty compaction for one without actions (and loses its commits' files) and fails
#: on a cut one. The policy's next run deletes an empty one (the ``repaired`` case).
DAMAGED = ("zero", "cut")


def test_every_reader_reads_the_same_rows(spark: SparkSession, tables: Tables, stock: Dict[str, Any]) -> None:
    for key, (path, versions) in tables.cases.items():
        for version, expected in versions.items():
            if key not in DAMAGED:
                assert stock[key][str(version)] == expected, (key, version)
                # This session wrote ``repaired`` while its compaction was empty: delta-spark's
                # cached snapshot kept the loss until the cache is dropped.
                spark._jvm.org.apache.spark.sql.delta.DeltaLog.clearCache()  # type: ignore[attr-defined]
                assert ids(spark, path, version) == expected, (key, version)
            assert delta_rs_ids(path, version) == expected, (key, version)
            assert core_files(spark, path, version) == delta_rs_files(path, version), (key, version)


def test_damaged_or_overlapping_compactions_fall_back_to_the_commits(
    spark: SparkSession, tables: Tables, stock: Dict[str, Any]
) -> None:
    # The log core skips the empty and the cut compaction and replays their commits.
    zero = core_chain(spark, tables.cases["zero"][0])
    assert zero == ["0-8", "9-17", "18-26", "27", "28-29"]  # planned; the read falls back
    assert core_chain(spark, tables.cases["overlap"][0]) == ["0-8", "9-17", "18-26", "27", "28-29"]
    # Stock delta-spark skips the overlapping one the same way.
    assert stock["overlap"]["chain"] == ["0-8", "9-17", "18-26", "27", "28-29"]


def test_the_next_commit_deletes_an_empty_compaction_and_merges_that_level_again(
    tables: Tables, stock: Dict[str, Any]
) -> None:
    repaired = tables.cases["repaired"][0]
    assert (repaired / "_delta_log" / name(9, 17)).stat().st_size > 0
    assert assert_maintenance_files_describe_real_states(repaired) >= 1
    assert stock["repaired"]["chain"][:3] == ["0-8", "9-17", "18-26"]
    assert stock["repaired"]["None"] == expected_ids(32)


def test_a_merge_over_a_cut_compaction_reads_its_commits(tables: Tables) -> None:
    early = tables.cases["cut-before-merge"][0]
    assert (0, 8) in compactions(early)
    # The merged level 2 holds the real state of 0..8 (checked against the commits, which the
    # helper does for every compaction: the cut one, garbage by design, goes first).
    os.remove(early / "_delta_log" / name(3, 5))
    assert assert_maintenance_files_describe_real_states(early) >= 1


def test_covered_compactions_go_once_their_retention_has_passed(tables: Tables, stock: Dict[str, Any]) -> None:
    aged = tables.cases["aged"][0]
    # Level 1 inside the three level-2 compactions is gone; 28..29 (not yet covered) and the
    # new 30..32 (within the retention) stay.
    assert compactions(aged) == [(0, 8), (9, 17), (18, 26), (28, 29), (30, 32)]
    assert stock["aged"]["chain"] == ["0-8", "9-17", "18-26", "27", "28-29", "30-32"]


@pytest.mark.skipif(not STOCK_33, reason="delta-spark 3.3 in its own venv: DELTA_LIFECYCLE_STOCK_33=1")
def test_stock_delta_spark_33_reads_the_levels(tables: Tables) -> None:
    import json

    python = client_venv("delta-spark-3.3", ["pyspark==3.5.6", "delta-spark==3.3.2"])
    request = {k: (str(p), list(v)) for k, (p, v) in tables.cases.items()}
    done = run_python(python, STOCK_33_SCRIPT, json.dumps(request), timeout=1200)
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    assert lines, done.stdout[-2000:] + done.stderr[-4000:]
    result = json.loads(lines[-1][len("RESULT "):])
    assert result["built"]["chain"] == ["0-8", "9-17", "18-26", "27", "28-29"]
    assert result["aged"]["chain"] == ["0-8", "9-17", "18-26", "27", "28-29", "30-32"]
    for key, (_, versions) in tables.cases.items():
        for version, expected in versions.items():
            if key not in DAMAGED:
                assert result[key][str(version)] == expected, (key, version)
