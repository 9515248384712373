package io.github.deltalifecycle.core

import io.github.deltalifecycle.shims.DeltaShim
import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.delta.Snapshot
import org.apache.spark.sql.delta.catalog.DeltaTableV2
import org.apache.spark.sql.functions.col

/** The live files of a snapshot, and those of them with a deletion vector: counts and bytes. */
final case class StateTallies(files: Long, bytes: Long, filesWithDv: Long, bytesWithDv: Long) {
  def +(o: StateTallies): StateTallies = StateTallies(
    files + o.files,
    bytes + o.bytes,
    filesWithDv + o.filesWithDv,
    bytesWithDv + o.bytesWithDv
  )
}

/**
 * delta-spark's state of a snapshot (its live files and tombstones), built by a job of this
 * project's before delta-spark's own jobs read it. delta-spark caches the state the first job over
 * it builds; when that job is this project's, its tasks report running out of memory as an error
 * ([[OutOfMemory.guarded]]) instead of ending the JVM, and the jobs of delta-spark's that follow
 * (its checks, its checkpoint, a REORG's scan) read the cache. Its partitions are those
 * [[FilePartitions.withDeltaState]] sets for the statement.
 */
object DeltaState {

  /**
   * Builds `snapshot`'s state (or reads it, if built), returning the tallies of its files. The
   * state is built in partitions of bounded size, whether or not the statement set them already,
   * and in local mode not at all if they cannot fit the driver's heap
   * ([[OutOfMemory.checkLocalFit]]).
   */
  def load(snapshot: Snapshot): StateTallies = {
    val spark = SparkSession.active
    val files = FilePartitions.estimatedFiles(snapshot)
    FilePartitions.withDeltaState(spark, files) {
      val state = snapshot.stateDF
      OutOfMemory.checkLocalFit(spark, files, state.rdd.getNumPartitions)
      tally(state)
    }
  }

  /**
   * Refuses ([[OutOfMemory.checkLocalFit]]), before anything is written, a statement that will have
   * delta-spark rebuild a state of `snapshot`'s size that cannot fit the driver in local mode: the
   * partitions are those [[load]] would build it in.
   */
  def checkFits(snapshot: Snapshot): Unit = {
    val spark = SparkSession.active
    val files = FilePartitions.estimatedFiles(snapshot)
    FilePartitions.withDeltaState(spark, files) {
      OutOfMemory.checkLocalFit(spark, files, FilePartitions.statePartitions(spark))
    }
  }

  private def tally(state: DataFrame): StateTallies = {
    val rows = state.where(col("add").isNotNull)
      .select(col("add.size"), col("add.deletionVector").isNotNull).rdd
    OutOfMemory.guarded(rows).mapPartitions { it =>
      var files, bytes, filesWithDv, bytesWithDv = 0L
      it.foreach { row =>
        val size = if (row.isNullAt(0)) 0L else row.getLong(0)
        files += 1
        bytes += size
        if (row.getBoolean(1)) { filesWithDv += 1; bytesWithDv += size }
      }
      Iterator.single(StateTallies(files, bytes, filesWithDv, bytesWithDv))
    }.fold(StateTallies(0, 0, 0, 0))(_ + _)
  }

  /** delta-spark's checkpoint of `snapshot`, its state built by [[load]] first. */
  def checkpoint(table: DeltaTableV2, snapshot: Snapshot): Unit =
    FilePartitions.withDeltaState(table.spark, FilePartitions.estimatedFiles(snapshot)) {
      load(snapshot)
      DeltaShim.checkpoint(table, snapshot)
    }

  /**
   * delta-spark's checkpoint of `table`'s latest version, whose log is `log`; returns it as listed.
   */
  def checkpointLatest(table: DeltaTableV2, log: TableLog): LogCheckpoint = {
    val snapshot = table.update()
    checkpoint(table, snapshot)
    log.listingFrom(snapshot.version).checkpointsAt(snapshot.version).headOption.getOrElse(
      throw ErrorConditions.corruptLog(
        file = log.logPath.toString,
        reason = s"delta-spark wrote no checkpoint for version ${snapshot.version}"
      )
    )
  }
}
