package io.github.deltalifecycle.features.dropfeature

import scala.util.control.NonFatal

import io.github.deltalifecycle.core.{ErrorConditions, _}
import org.apache.spark.internal.Logging
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.delta.catalog.DeltaTableV2

/**
 * Checkpoints on top of empty commits: the barrier of the Checkpoint Protection RFC, the fresh
 * checkpoint the history-truncating drop starts its retained history from, and the checkpoint of
 * the downgraded version.
 *
 * A checkpoint is derived from the newest one before it whenever the commits in between add or
 * remove no file ([[CheckpointCopy]]): an empty commit changes nothing, the downgrade changes only
 * the protocol and metadata. So delta-spark writes the first checkpoint of a drop (its state
 * rebuilt once), and the others are copies of its files, or manifests over its sidecars, whatever
 * the checkpoint's kind, with only the parts holding a changed protocol or metadata rewritten.
 * Anything else (a concurrent writer's files in between, a failed copy, a catalog-managed table,
 * whose catalog may not have had the version backfilled yet) gets a checkpoint from delta-spark.
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

  /** A checkpoint of the latest version, derived where it can be; returns it as listed. */
  def checkpointLatest(): LogCheckpoint = {
    val listing = log.tailListing()
    val version = listing.latestVersion
    val base = listing.checkpoints.filter(_.version < version).lastOption
    base.filter(_ => commits.copiesCheckpoints).flatMap(derived(listing, _, version))
      .getOrElse(checkpointedByDeltaSpark())
  }

  private def derived(listing: LogListing, base: LogCheckpoint, version: Long) =
    try CheckpointCopy.derive(
        spark,
        log,
        listing,
        base,
        version,
        () =>
          FaultInjection.step("dropFeature.barrier.copy.beforeRename")
      )
    catch {
      case NonFatal(e) =>
        logWarning(
          s"Deriving the checkpoint of version $version from checkpoint ${base.version} " +
            "failed; delta-spark writes it instead",
          e
        )
        None
    }

  /** delta-spark checkpoints the latest version; returns the checkpoint as listed. */
  private def checkpointedByDeltaSpark(): LogCheckpoint = {
    val snapshot = table.update()
    DeltaState.checkpoint(table, snapshot)
    log.listingFrom(snapshot.version).checkpointsAt(snapshot.version).headOption.getOrElse(
      throw ErrorConditions.corruptLog(
        file = log.logPath.toString,
        reason = s"delta-spark wrote no checkpoint for version ${snapshot.version}"
      )
    )
  }
}
