"""Streaming queries by path that keep running while their tables are redirected and brought back
(docs/redirection.md, "Streaming"); the same by name: tests/test_redirect_streaming.py.

In a session whose catalog is Spark's in-memory one: Spark's Hive session drops the analyzer rules
that route a path before delta-spark opens it (SPARK-59081), so there a reader-writer redirected
source cannot be opened by path by the DataFrame API (docs/spark-lines.md).
"""

from __future__ import annotations

from pathlib import Path

from pyspark.sql import SparkSession

from stock_session import run_stock_script
from table_helpers import delta_rs_ids
from streaming_redirects import difference, moves_by_path, run_through_moves, stream_between_paths


def test_a_query_by_path_runs_through_redirects_and_a_stock_session_resumes_it(
    spark: SparkSession, tmp_path: Path
) -> None:
    feed, orders, stream = stream_between_paths(spark, tmp_path)
    ids = run_through_moves(stream, moves_by_path(feed, orders))
    assert stream.fed > 0 and ids == list(range(stream.fed)), difference(ids, stream.fed)
    assert delta_rs_ids(orders) == ids

    # The checkpoint's offsets name their location in a field delta-spark ignores: a session
    # without this extension resumes the query where it stopped.
    fed = stream.fed
    spark.sql(f"INSERT INTO delta.`{feed}` SELECT id FROM range({fed}, {fed + 7})")
    run_stock_script(
        """
        feed, orders, checkpoint = sys.argv[1:4]
        q = (spark.readStream.format("delta").load(feed).writeStream.format("delta")
             .option("checkpointLocation", checkpoint).trigger(availableNow=True).start(orders))
        q.awaitTermination()
        emit({})
        """,
        [str(feed), str(orders), str(tmp_path / "ck")],
    )
    assert delta_rs_ids(orders) == list(range(fed + 7))
