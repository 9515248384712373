package io.github.deltalifecycle.features.dropfeature

import io.github.deltalifecycle.core._
import org.apache.spark.internal.Logging
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.delta.catalog.DeltaTableV2

/**
 * Checkpoints on top of empty commits: the barrier of the Checkpoint Protection RFC, the fresh
 * checkpoint the history-truncating drop starts its retained history from, and the checkpoint of
 * the downgraded version.
 *
 * Each checkpoint is written from the newest one before it and the commits in between
 * ([[IncrementalCheckpoint]]), at the cost of what they changed: an empty commit changes nothing,
 * the downgrade changes only the protocol and metadata, a concurrent writer's commits add their
 * files. So the checkpoints' unchanged parts are byte copies (or the same sidecars, for V2), and
 * only the row groups holding a changed action are rewritten. Where that cannot be done (no
 * checkpoint yet, a change of the checkpoint's columns or kind, a failed write, a catalog-managed
 * table, whose catalog may not have had the version backfilled yet), delta-spark writes it.
 */
final class BarrierCheckpoints private[dropfeature] (
    spark: SparkSession,
    log: TableLog,
    table: DeltaTableV2,
    commits: DropCommits,
    progress: Progress
) extends Logging {

  /**
   * Commits `count` empty commits, each followed by a checkpoint; returns both lists of versions.
   */
  def write(count: Int): (Seq[Long], Seq[Long]) = {
    val committed = Seq.newBuilder[Long]
    val checkpoints = Seq.newBuilder[Long]
    (1 to count).foreach { i =>
      val version = emptyCommit()
      FaultInjection.step(s"dropFeature.barrier.$i.afterEmptyCommit")
      committed += version
      val checkpoint = checkpointLatest()
      progress.info(s"barrier checkpoint $i of $count at version ${checkpoint.version}")
      FaultInjection.step(s"dropFeature.barrier.$i.afterCheckpoint")
      checkpoints += checkpoint.version
    }
    (committed.result(), checkpoints.result())
  }

  /**
   * One empty commit on top of the latest version, moved past whatever other writers commit
   * meanwhile.
   */
  def emptyCommit(): Long = commits.emptyCommit()

  /** An empty commit, then a checkpoint of the latest version; returns the checkpoint's version. */
  def checkpointOnEmptyCommit(): Long = {
    emptyCommit()
    checkpointLatest().version
  }

  /** A checkpoint of the latest version, incremental where it can be; returns it as listed. */
  def checkpointLatest(): LogCheckpoint = {
    val listing = log.tailListing()
    val version = listing.latestVersion
    val incremental =
      if (!commits.copiesCheckpoints) Left("the table's commits go through its catalog")
      else IncrementalCheckpoint.attempt(
        spark,
        log,
        listing,
        version,
        () => FaultInjection.step("dropFeature.barrier.copy.beforeRename")
      )
    incremental.fold(
      reason => {
        logInfo(s"delta-spark writes the checkpoint of version $version in full: $reason")
        DeltaState.checkpointLatest(table, log)
      },
      _.checkpoint
    )
  }
}
