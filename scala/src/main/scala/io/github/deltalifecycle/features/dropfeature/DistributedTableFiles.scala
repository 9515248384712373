package io.github.deltalifecycle.features.dropfeature

import io.github.deltalifecycle.core.DeltaState
import io.github.deltalifecycle.shims.ReorgShim
import org.apache.spark.sql.delta.Snapshot
import org.apache.spark.sql.functions.{coalesce, col, count, lit, sum}

/**
 * The file figures of delta-spark's snapshot, tallied by a Spark job over its distributed file
 * state: the driver receives a few numbers, never the files. The job is the one that builds the
 * snapshot's state ([[DeltaState.load]]), so a table of millions of files costs the driver what
 * delta-spark's own DESCRIBE DETAIL costs it, in partitions of bounded size, and the checks that
 * read the state next read it cached.
 */
final class DistributedTableFiles(snapshot: Snapshot)
    extends TableFiles {

  private lazy val tallies = DeltaState.load(snapshot)

  def all: FileTally = FileTally(tallies.files, tallies.bytes)

  def withDeletionVectors: FileTally = FileTally(tallies.filesWithDv, tallies.bytesWithDv)

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
