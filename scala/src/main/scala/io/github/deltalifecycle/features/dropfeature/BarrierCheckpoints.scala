package io.github.deltalifecycle.features.dropfeature

import java.util.UUID

import scala.util.control.NonFatal

import io.github.deltalifecycle.core._
import org.apache.hadoop.fs.{FileUtil, Path}
import org.apache.spark.internal.Logging
import org.apache.spark.sql.delta.catalog.DeltaTableV2
import org.apache.spark.sql.delta.util.FileNames

/**
 * Checkpoints on top of empty commits: the barrier of the Checkpoint Protection RFC, and the fresh
 * checkpoint the history-truncating drop starts its retained history from.
 *
 * delta-spark writes the first checkpoint. An empty commit changes no state, so when the next
 * version is our own empty commit right after a classic single-file checkpoint, the barrier copies
 * that file to the new version instead of running another checkpoint job; the copy is published by
 * rename, so readers never see it half-written. Any other case (a concurrent writer's commit in
 * between, multi-part or V2 checkpoints, a catalog-managed table, whose catalog may not have had
 * the version backfilled yet) gets a checkpoint from delta-spark.
 */
final class BarrierCheckpoints private[dropfeature] (
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
    var previous: Option[LogCheckpoint] = None
    (1 to count).foreach { i =>
      val version = emptyCommit()
      FaultInjection.step(s"dropFeature.barrier.$i.afterEmptyCommit")
      committed += version
      val copyable = previous.filter(p =>
        commits.copiesCheckpoints && p.version == version - 1 && isCopyable(p)
      )
      val checkpoint = copyable match {
        case Some(p) => copy(p, version)
        case None => checkpointLatest()
      }
      progress.info(s"barrier checkpoint $i of $count at version ${checkpoint.version}")
      FaultInjection.step(s"dropFeature.barrier.$i.afterCheckpoint")
      checkpoints += checkpoint.version
      previous = Some(checkpoint)
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

  /** delta-spark checkpoints the latest version; returns the checkpoint as listed. */
  def checkpointLatest(): LogCheckpoint = {
    val snapshot = table.update()
    DeltaState.checkpoint(table, snapshot)
    log.listingFrom(snapshot.version).checkpointsAt(snapshot.version).headOption.getOrElse(
      throw LifecycleErrors.corruptLog(
        log.logPath.toString,
        s"delta-spark wrote no checkpoint for version ${snapshot.version}"
      )
    )
  }

  private def isCopyable(checkpoint: LogCheckpoint): Boolean =
    checkpoint.kind == CheckpointKind.Classic && checkpoint.files.size == 1

  private def copy(from: LogCheckpoint, version: Long): LogCheckpoint = {
    val source = from.files.head.status.getPath
    val target = FileNames.checkpointFileSingular(log.logPath, version)
    val temp = new Path(log.logPath, s".${target.getName}.${UUID.randomUUID()}.tmp")
    try {
      FileUtil.copy(log.fs, source, log.fs, temp, false, log.hadoopConf)
      FaultInjection.step("dropFeature.barrier.copy.beforeRename")
      if (!log.fs.rename(temp, target))
        throw new java.io.IOException(s"could not rename $temp to $target")
      log.listingFrom(version).checkpointsAt(version).head
    } catch {
      case NonFatal(e) =>
        logWarning(
          s"Copying checkpoint ${from.version} to version $version failed; " +
            "delta-spark writes it instead",
          e
        )
        try log.fs.delete(temp, false)
        catch { case NonFatal(_) => }
        checkpointLatest()
    }
  }
}
