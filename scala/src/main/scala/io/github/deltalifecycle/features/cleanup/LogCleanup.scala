package io.github.deltalifecycle.features.cleanup

import io.github.deltalifecycle.core.{ErrorConditions, _}
import org.apache.hadoop.fs.Path
import org.apache.spark.internal.Logging
import org.apache.spark.sql.delta.{
  CheckpointProtectionTableFeature,
  DeltaConfigs,
  V2CheckpointTableFeature
}
import org.apache.spark.sql.delta.actions.{Metadata, Protocol}
import org.apache.spark.sql.delta.util.FileNames

/** One log file that cleanup deletes, or would delete but keeps, and why. */
final case class CleanupEntry(
    path: Path,
    kind: String,
    version: Long,
    sizeInBytes: Long,
    keptBecause: Option[String]
) {
  def deleted: Boolean = keptBecause.isEmpty
}

/**
 * What a cleanup does: `cutoffCheckpoint` is the newest checkpoint old enough to start the retained
 * history from; `entries` are the expired files in deletion order, with the ones checkpoint
 * protection keeps marked as kept.
 */
final case class CleanupPlan(
    cutoffCheckpoint: Option[Long],
    protectedBefore: Option[Long],
    entries: Vector[CleanupEntry]
) {
  def toDelete: Vector[CleanupEntry] = entries.filter(_.deleted)
}

/**
 * Metadata cleanup (PROTOCOL.md, "Metadata Cleanup") that obeys the Checkpoint Protection RFC's
 * writer rules:
 *   - (a) checkpoints before the protection boundary
 *     (`DeltaConfigs.REQUIRE_CHECKPOINT_PROTECTION_BEFORE_VERSION`) stay, unless the cleanup
 *     removes every version before it in one pass;
 *   - (c) versions whose protocol this client does not support are cleaned up only in such a single
 *     pass up to the boundary;
 *   - (d) commits go before the checkpoints they lead to.
 * Rule (b) does not arise: cleanup writes no checkpoint. Sidecar files that no remaining checkpoint
 * names go too, after the checkpoints.
 */
object LogCleanup extends Logging {

  /** The table's `delta.logRetentionDuration` (delta-spark's default: 30 days). */
  def tableRetentionMillis(metadata: Metadata): Long =
    DeltaConfigs.getMilliSeconds(DeltaConfigs.LOG_RETENTION.fromMetaData(metadata))

  /**
   * The checkpoint protection boundary, when the protocol has the feature and the property holds a
   * positive version (anything else protects nothing).
   */
  def protectedBefore(protocol: Protocol, metadata: Metadata): Option[Long] =
    if (!protocol.isFeatureSupported(CheckpointProtectionTableFeature)) None
    else metadata.configuration.get(
      DeltaConfigs.REQUIRE_CHECKPOINT_PROTECTION_BEFORE_VERSION.key
    ).flatMap(_.toLongOption).filter(_ > 0)

  def protectedBefore(head: SnapshotHead): Option[Long] =
    protectedBefore(head.protocol, head.metadata)

  /**
   * Plans the cleanup of everything older than `retentionMillis` before `nowMillis` (or the table's
   * own retention). Reads only the listing and, when protection could block the cleanup, the
   * protocols of the versions it would remove.
   */
  def plan(log: TableLog, retentionMillis: Option[Long], nowMillis: Long): CleanupPlan = {
    val listing = log.listing()
    val latest = listing.latestVersion
    val (protocol, metadata) = log.protocolAndMetadataAt(latest, listing)
    requireCleanable(log, latest, protocol, metadata)
    // A writer feature this client does not know may have its own rules for which log files must
    // stay (as checkpoint protection has), and delta-spark, which cleans a log after its own
    // checkpoints, does not write such a table: every file stays, and the plan says why.
    val unknownWriterFeatures = ClientSupport.unsupportedForWriting(protocol)
    val retention = retentionMillis.getOrElse(tableRetentionMillis(metadata))
    if (retention < 0) throw ErrorConditions.InvalidArgument.negativeRetention(retention)
    val protection = protectedBefore(protocol, metadata)
    val cutoffTime = nowMillis - retention
    cutoffCheckpoint(listing, cutoffTime) match {
      case None => CleanupPlan(None, protection, Vector.empty)
      case Some(checkpoint) =>
        val cut = checkpoint.version
        val keptBecause = keepRule(log, listing, latest, unknownWriterFeatures, protection, cut)
        val judged = expiredFiles(listing, cut).map(e => e.copy(keptBecause = keptBecause(e)))
        val sidecars = expiredSidecars(log, listing, protocol, cut, cutoffTime, judged)
        CleanupPlan(
          Some(cut),
          protection,
          judged ++ sidecars.map(e => e.copy(keptBecause = keptBecause(e)))
        )
    }
  }

  /**
   * Refuses a log whose commits another party coordinates, a catalog-managed table's log unless its
   * catalog or the administrator permits the cleanup, and a log whose protocol it cannot read.
   */
  private def requireCleanable(
      log: TableLog,
      latest: Long,
      protocol: Protocol,
      metadata: Metadata
  ): Unit = {
    val table = log.tablePath.toString
    CommitCoordination.requireWritable(log, table, protocol, metadata, "clean up the log of")
    log.catalog.foreach(_.requirePermission(table, MaintenanceOperation.MetadataCleanup))
    if (!ClientSupport.canRead(protocol))
      throw LogErrors.unsupportedProtocol(
        latest,
        ClientSupport.unsupportedForReading(protocol),
        "clean up the log"
      )
  }

  /**
   * The newest checkpoint at or before the newest commit such that it and every commit before it
   * are older than `cutoffTime`.
   */
  private def cutoffCheckpoint(listing: LogListing, cutoffTime: Long): Option[LogCheckpoint] = {
    // A commit its catalog ratified and no writer backfilled yet is never cut, nor anything
    // after it: only the catalog knows it.
    val cutoffCommit = listing.commits.takeWhile(c =>
      c.status.getModificationTime <= cutoffTime && c.version <= listing.backfilledThrough
    ).lastOption.map(_.version)
    cutoffCommit.flatMap(c => listing.checkpoints.filter(_.version <= c).lastOption)
  }

  /**
   * Why an expired file stays, if it does, for a cleanup up to checkpoint `cut`: none may go where
   * version `latest` has writer features this client does not know; under checkpoint protection
   * with `cut` before the boundary, none may go where a version before `cut` has a feature this
   * client does not support, and otherwise the checkpoints stay.
   */
  private def keepRule(
      log: TableLog,
      listing: LogListing,
      latest: Long,
      unknownWriterFeatures: Set[String],
      protection: Option[Long],
      cut: Long
  ): CleanupEntry => Option[String] = protection match {
    case _ if unknownWriterFeatures.nonEmpty =>
      val reason =
        s"version $latest uses ${unknownWriterFeatures.toSeq.sorted.mkString(", ")}, which " +
          "this client does not support for writing, so it deletes none of the log"
      _ => Some(reason)
    case Some(boundary) if cut < boundary =>
      unsupportedBefore(log, listing, cut) match {
        case Some((version, features)) =>
          val reason =
            s"checkpoint protection: version $version uses " +
              s"${features.toSeq.sorted.mkString(", ")}, which this client does not " +
              "support, so the cleanup must remove every version before " +
              s"$boundary in one pass; the retention keeps version $cut"
          _ => Some(reason)
        case None =>
          e =>
            if (e.kind == "checkpoint")
              Some(s"checkpoint protection: checkpoints before version $boundary stay")
            else None
      }
    case _ => _ => None
  }

  /** How many single deletes run at once on a file system without a bulk delete. */
  val DefaultDeleteThreads = 8

  /**
   * Deletes the plan's files group by group, in its order: all commits, then all checksums, all
   * compactions, all checkpoints, all sidecars, each group done before the next starts. Within a
   * group the files go in pages, oldest first, each page done before the next: through the file
   * system's bulk delete when it has one (`FileSystem.createBulkDelete`, a page being its page
   * size), otherwise as single deletes on `threads` threads. Files already gone (a re-run) count as
   * deleted; a file a bulk delete reports as not deleted is deleted again on its own, and fails the
   * cleanup if that fails too.
   */
  def execute(
      log: TableLog,
      plan: CleanupPlan,
      threads: Int = DefaultDeleteThreads
  ): Vector[CleanupEntry] = {
    val toDelete = plan.toDelete
    val step = math.max(1, toDelete.size / 10)
    val deleter = LogFileDeleter.open(log.fs, log.logPath, threads)
    try {
      var done = 0
      for (group <- groups(toDelete); page <- group.grouped(deleter.pageSize)) {
        deleter.delete(page.map(_.path))
        for (i <- done + 1 to done + page.size) {
          FaultInjection.step(s"cleanLog.afterDelete.$i")
          if (i % step == 0)
            logInfo(s"Log cleanup of ${log.tablePath}: deleted $i of ${toDelete.size} files")
        }
        done += page.size
      }
    } finally deleter.close()
    toDelete
  }

  /** The runs of entries of one kind, in order: the groups whose deletion order does not matter. */
  private def groups(entries: Vector[CleanupEntry]): Vector[Vector[CleanupEntry]] =
    entries.foldLeft(Vector.empty[Vector[CleanupEntry]]) { (runs, e) =>
      runs.lastOption match {
        case Some(run) if run.head.kind == e.kind => runs.init :+ (run :+ e)
        case _ => runs :+ Vector(e)
      }
    }

  /**
   * Files before the cut-off checkpoint, in the order they may be deleted: commits (oldest first),
   * checksums, compactions starting at or before it, then checkpoints, so a crash part-way leaves
   * the retained versions readable.
   */
  private def expiredFiles(listing: LogListing, cut: Long): Vector[CleanupEntry] = {
    def entry(f: LogFile, kind: String, version: Long) =
      CleanupEntry(f.status.getPath, kind, version, f.status.getLen, None)
    listing.commits.filter(_.version < cut).map(c => entry(c, "commit", c.version)) ++
      listing.checksums.values.toVector.filter(_.version < cut).sortBy(_.version).map(c =>
        entry(c, "checksum", c.version)
      ) ++
      listing.compactions.filter(_.start <= cut).map(c => entry(c, "compaction", c.start)) ++
      listing.checkpoints.filter(_.version < cut).flatMap(c =>
        c.files.map(f => entry(f, "checkpoint", c.version))
      )
  }

  /**
   * Sidecar files (`_delta_log/_sidecars`) that no checkpoint left after the cleanup names and that
   * are older than the cut-off time (a checkpoint being written names its sidecars only once they
   * are all written, and those are new). They go last, after the checkpoints naming them. A sidecar
   * is listed under the version of the expired checkpoint naming it, or under the cut-off
   * checkpoint's when none does (left by an interrupted checkpoint). Only tables that have or had
   * V2 checkpoints are looked at, so the others pay no extra listing.
   */
  private def expiredSidecars(
      log: TableLog,
      listing: LogListing,
      protocol: Protocol,
      cut: Long,
      cutoffTime: Long,
      judged: Vector[CleanupEntry]
  ): Vector[CleanupEntry] = {
    val v2 = listing.checkpoints.filter(_.kind == CheckpointKind.V2)
    if (v2.isEmpty && !protocol.isFeatureSupported(V2CheckpointTableFeature)) return Vector.empty
    val dir = FileNames.sidecarDirPath(log.logPath)
    if (!log.fs.exists(dir)) return Vector.empty
    val deleted = judged.filter(e => e.deleted && e.kind == "checkpoint").map(_.path).toSet
    val (expiring, staying) = v2.partition(_.files.forall(f => deleted(f.status.getPath)))
    val named = staying.flatMap(log.sidecarsOf).map(_.getName).toSet
    val namedByExpiring =
      expiring.flatMap(c => log.sidecarsOf(c).map(_.getName -> c.version)).toMap
    log.fs.listStatus(dir).toVector
      .filter(f => f.isFile && !f.getPath.getName.startsWith("."))
      .filter(f => !named(f.getPath.getName) && f.getModificationTime <= cutoffTime)
      .sortBy(_.getModificationTime)
      .map { f =>
        val version = namedByExpiring.getOrElse(f.getPath.getName, cut)
        CleanupEntry(f.getPath, "sidecar", version, f.getLen, None)
      }
  }

  /**
   * The oldest version before `cut` whose protocol this client does not support, with the features
   * it lacks.
   */
  private def unsupportedBefore(
      log: TableLog,
      listing: LogListing,
      cut: Long
  ): Option[(Long, Set[String])] = {
    def check(version: Long, p: Protocol): Option[(Long, Set[String])] =
      if (ClientSupport.canWrite(p)) None
      else Some((version, ClientSupport.unsupportedForWriting(p)))
    val earliest = listing.earliestReconstructableVersion
    val atEarliest =
      if (earliest < cut) check(earliest, log.protocolAndMetadataAt(earliest, listing)._1) else None
    atEarliest.orElse {
      listing.commits.iterator.filter(_.version < cut).flatMap { c =>
        ActionReader.readJsonSelected(log.readFs, c.status, Set("protocol")).iterator.collect {
          case p: Protocol => p
        }
          .flatMap(p => check(c.version, p))
      }.nextOption()
    }
  }
}
