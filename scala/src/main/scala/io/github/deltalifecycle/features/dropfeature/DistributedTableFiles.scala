package io.github.deltalifecycle.features.dropfeature

import io.github.deltalifecycle.shims.ReorgShim
import org.apache.spark.sql.Row
import org.apache.spark.sql.delta.Snapshot
import org.apache.spark.sql.functions.{coalesce, col, count, lit, sum, when}

/**
 * The file figures of delta-spark's snapshot, aggregated by a Spark job over its distributed file
 * state: the driver receives a few numbers, never the files. A table of millions of files costs the
 * driver what delta-spark's own DESCRIBE DETAIL costs it.
 */
final class DistributedTableFiles(snapshot: Snapshot)
    extends TableFiles {

  private lazy val tallies: Row = {
    val withDv = col("deletionVector").isNotNull
    snapshot.allFiles.toDF().agg(
      count(lit(1)),
      coalesce(sum(col("size")), lit(0L)),
      count(when(withDv, lit(1))),
      coalesce(sum(when(withDv, col("size"))), lit(0L))
    ).head()
  }

  def all: FileTally = FileTally(tallies.getLong(0), tallies.getLong(1))

  def withDeletionVectors: FileTally = FileTally(tallies.getLong(2), tallies.getLong(3))

  /**
   * delta-spark's own file filter decides, reading Parquet footers in the tasks of a Spark job over
   * the snapshot's distributed file list (task-safe on a cluster, see ReorgShim); the driver
   * receives the two totals. Only a table whose schema records type changes asks for it.
   */
  def writtenNarrower: FileTally = {
    val totals = ReorgShim.filesWrittenWithOtherTypes(snapshot)
      .agg(count(lit(1)), coalesce(sum(col("size")), lit(0L)))
      .head()
    FileTally(totals.getLong(0), totals.getLong(1))
  }
}
