"""A session set up by configure_spark, started fresh in its own process as a user's program
would start it (a production JVM, without the tests' switches): standard output holds only what the program printed (a script whose stdout is
data must not get Ivy's lines), and every jar, this project's and delta-spark's with its
dependencies, is one Spark hands to executors (``spark.jars`` set by the builder used to
replace them)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from delta_lifecycle.config import bundled_coordinate, delta_maven_coordinate
from environment import PRODUCTION_ENV
from spark_line import ON_SPARK_35
from spark_sessions import SESSION_CONF, SessionSpec, preamble

PROGRAM = preamble(SessionSpec(master="local[1]"), conf="json.loads(sys.argv[1])") + textwrap.dedent(
    """
    jars = spark.sparkContext._jsc.sc().listJars()
    names = [jars.apply(i).rsplit("/", 1)[-1] for i in range(jars.size())]
    path = sys.argv[2]
    spark.range(3).write.format("delta").save(path)
    rows = spark.sql(f"DESCRIBE PROTOCOL HISTORY delta.`{path}`").count()
    spark.stop()
    print(json.dumps({"jars": names, "history_rows": rows}))
    """
)


def test_stdout_holds_only_the_programs_output_and_every_jar_is_shipped(tmp_path: Path) -> None:
    script = tmp_path / "program.py"
    script.write_text(PROGRAM)
    run = subprocess.run(
        [sys.executable, str(script), json.dumps(SESSION_CONF), str(tmp_path / "t")],
        capture_output=True, text=True, timeout=600, env=PRODUCTION_ENV,
    )
    assert run.returncode == 0, run.stderr[-4000:]
    # The program printed one JSON line, and nothing else reached standard output. pyspark
    # 3.5's Ivy prints where it loads its default settings from for any spark.jars.packages,
    # stock delta-spark's configure_spark_with_delta_pip included (docs/spark-lines.md).
    lines = [
        line for line in run.stdout.splitlines()
        if not (ON_SPARK_35 and line.startswith(":: loading settings :: url = jar:"))
    ]
    assert len(lines) == 1, run.stdout
    seen = json.loads(lines[0])
    assert seen["history_rows"] == 1

    _, artifact, version = bundled_coordinate().split(":")
    delta_artifact = delta_maven_coordinate().split(":")[1]
    assert f"io.github.deltalifecycle_{artifact}-{version}.jar" in seen["jars"]
    assert any(n.startswith(f"io.delta_{delta_artifact}-") for n in seen["jars"])
    assert any(n.startswith("io.delta_delta-storage-") for n in seen["jars"])


def test_importing_the_package_changes_nothing_and_configure_spark_routes_delta_tables() -> None:
    """delta-spark's DeltaTable.forPath and forName are its own after `import delta_lifecycle`;
    configure_spark (or route_delta_tables) wraps them, once."""
    program = textwrap.dedent(
        """
        from delta.tables import DeltaTable
        stock = dict(DeltaTable.__dict__)
        import delta_lifecycle
        unchanged = all(DeltaTable.__dict__[m] is stock[m] for m in ("forPath", "forName"))
        delta_lifecycle.route_delta_tables()
        wrapped = DeltaTable.__dict__["forPath"]
        delta_lifecycle.route_delta_tables()
        once = DeltaTable.__dict__["forPath"] is wrapped
        print(unchanged, wrapped is not stock["forPath"], once)
        """
    )
    run = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                         timeout=120, env=PRODUCTION_ENV)
    assert run.returncode == 0, run.stderr[-4000:]
    assert run.stdout.split() == ["True", "True", "True"]
