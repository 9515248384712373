"""Every LogStore configuration delta-spark documents keeps working with this extension
loaded: Delta statements run, the post-commit policy runs, and this project lists and
commits through the very store delta-spark uses for the table.

LogStore settings belong to the SparkContext, so each configuration runs in its own
subprocess session. The default configuration is what every other test module runs under.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any, Dict, get_args

import pytest
from deltalake import DeltaTable

from delta_lifecycle.results import CompactionStatus
from environment import FULL_MATRIX
from script_runs import run_for_result
from spark_sessions import SESSION_CONF, SessionSpec, preamble

#: The session's settings: the tests' (the third argument), then the configuration's (the
#: second).
SCRIPT = preamble(
    SessionSpec(master="local[1]"),
    conf="{**json.loads(sys.argv[3]), **json.loads(sys.argv[2])}",
) + textwrap.dedent(
    """
    path = sys.argv[1]
    jvm, jspark = spark._jvm, spark._jsparkSession

    spark.sql(f"CREATE TABLE delta.`{path}` (id BIGINT) USING delta TBLPROPERTIES ("
              "'delta.checkpointInterval' = '100', "
              "'deltaLifecycle.logCompaction.interval' = '3')")
    for i in range(3):
        spark.sql(f"INSERT INTO delta.`{path}` VALUES ({i})")
    idle = jvm.io.github.deltalifecycle.features.compaction.LogMaintenance.awaitIdle(60000)
    history = spark.sql(f"DESCRIBE PROTOCOL HISTORY delta.`{path}`").count()
    spark.sql(f"INSERT INTO delta.`{path}` VALUES (3)")
    spark.sql(f"INSERT INTO delta.`{path}` VALUES (4)")
    compacted = spark.sql(f"ALTER TABLE delta.`{path}` COMPACT LOG").first()["status"]

    def implementation(store):
        name = store.getClass().getName()
        if name.endswith(".DelegatingLogStore"):
            store = store.getDelegate(jvm.org.apache.hadoop.fs.Path("file://" + path))
            name = store.getClass().getName()
        if name.endswith(".LogStoreAdaptor"):
            name = store.logStoreImpl().getClass().getName()
        return name

    hadoop_conf = jspark.sessionState().newHadoopConf()
    ours = jvm.io.github.deltalifecycle.core.TableLog.forPath(hadoop_conf, path).store()
    deltas = jvm.org.apache.spark.sql.delta.DeltaLog.forTable(jspark, path).store()
    conf = spark.sparkContext.getConf()
    print("RESULT " + json.dumps({
        "idle": idle,
        "history": history,
        "compacted": compacted,
        "ours": implementation(ours),
        "deltas": implementation(deltas),
        "logStoreConf": {k: v for k, v in conf.getAll() if "logStore" in k},
        "rows": spark.read.format("delta").load(path).count(),
    }))
    """
)

CONFIGURATIONS: Dict[str, Dict[str, str]] = {
    # The report this test comes from: a per-scheme key next to the extension.
    "file scheme impl": {"spark.delta.logStore.file.impl": "io.delta.storage.LocalLogStore"},
    "class key": {
        "spark.delta.logStore.class": "org.apache.spark.sql.delta.storage.LocalLogStore"
    },
    # delta-spark's documented cloud setups, next to a local table.
    "cloud scheme impls": {
        "spark.delta.logStore.s3a.impl": "io.delta.storage.S3DynamoDBLogStore",
        "spark.delta.logStore.abfss.impl": "io.delta.storage.AzureLogStore",
        "spark.delta.logStore.gs.impl": "io.delta.storage.GCSLogStore",
    },
}
if FULL_MATRIX:
    CONFIGURATIONS["unprefixed scheme key"] = {
        "delta.logStore.file.impl": "org.apache.spark.sql.delta.storage.HDFSLogStore"
    }
    CONFIGURATIONS["unprefixed class key"] = {
        "delta.logStore.class": "io.delta.storage.HDFSLogStore"
    }

EXPECTED_FILE_STORE = {
    "file scheme impl": "io.delta.storage.LocalLogStore",
    "class key": "org.apache.spark.sql.delta.storage.LocalLogStore",
    "unprefixed scheme key": "org.apache.spark.sql.delta.storage.HDFSLogStore",
    "unprefixed class key": "io.delta.storage.HDFSLogStore",
}


def run_configuration(path: Path, settings: Dict[str, str]) -> Dict[str, Any]:
    return run_for_result(["-c", SCRIPT, str(path), json.dumps(settings), json.dumps(SESSION_CONF)])


@pytest.mark.parametrize("name", sorted(CONFIGURATIONS))
def test_every_statement_and_the_policy_run_under_the_configured_log_store(
    name: str, tmp_path: Path
) -> None:
    settings = CONFIGURATIONS[name]
    table = tmp_path / "t"
    result = run_configuration(table, settings)

    # The user's settings are exactly what delta-spark sees: nothing added, nothing changed.
    assert result["logStoreConf"] == settings
    # This project lists and commits through the store delta-spark uses for the table.
    assert result["ours"] == result["deltas"]
    if name in EXPECTED_FILE_STORE:
        assert result["ours"] == EXPECTED_FILE_STORE[name]

    # The post-commit policy ran after the third commit. With an interval of 3 it keeps two
    # levels, and the first level-1 block (versions 0-2) starts one version later because the
    # level-2 block shares its start (docs/log-compaction.md): the compaction covers 1-2.
    assert result["idle"]
    log = sorted(p.name for p in (table / "_delta_log").iterdir())
    assert "00000000000000000001.00000000000000000002.compacted.json" in log, log
    assert result["history"] == 4
    # The policy may already have compacted the newest commits (it runs in the background),
    # so COMPACT LOG may find nothing left to do; its status must still be a known one.
    assert result["compacted"] in get_args(CompactionStatus)
    assert result["rows"] == 5
    assert DeltaTable(str(table)).to_pyarrow_table().num_rows == 5
