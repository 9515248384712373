package io.github.deltalifecycle.features.compaction

import java.util.concurrent.{ConcurrentHashMap, Executors, ThreadFactory, TimeUnit}
import java.util.concurrent.atomic.AtomicInteger

import scala.util.control.NonFatal

import io.github.deltalifecycle.core.{
  CommitCoordination,
  CompactionFile,
  FaultInjection,
  LogListing,
  LogSegment,
  TableLog
}
import org.apache.spark.internal.Logging
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.delta.{DeltaLog, Snapshot}
import org.apache.spark.sql.delta.util.FileNames
import org.apache.spark.sql.deltalifecycle.SparkInternals

/**
 * Runs [[LogMaintenancePolicy]] after delta-spark's commits, on one background thread, so a commit
 * returns as soon as its file is written. Each commit is first judged on delta-spark's in-memory
 * snapshot of the table after it, which costs no request; only when that calls for maintenance does
 * the background run list the log (from the last checkpoint) and decide again on what it finds.
 * Requests for a table that already has one queued are merged: the queued run looks at the newest
 * version anyway. A failed run is logged and changes nothing the log depends on; the next commit
 * retries.
 */
object LogMaintenance extends Logging {

  private val executor = Executors.newSingleThreadExecutor(new ThreadFactory {
    override def newThread(r: Runnable): Thread = {
      val t = new Thread(r, "delta-lifecycle-log-maintenance")
      t.setDaemon(true)
      t
    }
  })
  private val queued = ConcurrentHashMap.newKeySet[String]()
  private val running = new AtomicInteger(0)

  /**
   * The newest version maintained by this process (a compaction's end, a checkpoint), per table.
   * delta-spark's snapshot after a commit extends the segment it listed earlier, so it does not
   * know about maintenance done since; without this each later commit would look due again.
   */
  private val maintainedHere = new ConcurrentHashMap[String, java.lang.Long]()
  private val MaxRemembered = 10000

  /**
   * Called after an execution of `spark` (a session that loads the extension) that may have
   * committed to `deltaLog`. Never throws, never blocks on storage.
   */
  def onCommitted(spark: SparkSession, deltaLog: DeltaLog): Unit =
    try {
      if (enabledIn(spark)) {
        val snapshot = deltaLog.unsafeVolatileSnapshot
        val key = deltaLog.dataPath.toString
        val settings = PolicySettings.resolve(snapshot.metadata.configuration, spark.conf.getOption)
        val due = snapshot.version > 0 &&
          LogMaintenancePolicy.decide(tailOf(snapshot, key), settings) != MaintenanceAction.Nothing
        if (due && queued.add(key)) {
          val checkpointVersion = snapshot.logSegment.checkpointProvider.version
          running.incrementAndGet()
          executor.execute { () =>
            queued.remove(key)
            try {
              val log = TableLog.forPath(
                deltaLog.newDeltaHadoopConf(),
                deltaLog.dataPath,
                deltaLog.options
              )
              run(spark, log, fromCheckpoint = checkpointVersion)
            } catch {
              case NonFatal(e) =>
                logWarning(s"Log maintenance of $key failed; the next commit retries", e)
            } finally running.decrementAndGet()
          }
        }
      }
    } catch {
      case NonFatal(e) =>
        logWarning(s"Log maintenance was not scheduled for ${deltaLog.dataPath}", e)
    }

  /** The policy's view of a table from delta-spark's snapshot, plus maintenance done here. */
  private def tailOf(snapshot: Snapshot, key: String): LogTail = {
    val segment = snapshot.logSegment
    val compactionEnds = segment.deltas.collect { case FileNames.CompactedDeltaFile(_, _, end) =>
      end
    }
    val base =
      (Seq(
        segment.checkpointProvider.version,
        Option(maintainedHere.get(key)).map(_.longValue).getOrElse(-1L)
      ) ++ compactionEnds).max
    val pending = segment.deltas.collect {
      case FileNames.DeltaFile(status, version) if version > base => (version, status.getLen)
    }
    LogTail(snapshot.version, base, pending, segment.checkpointProvider.version)
  }

  def enabledIn(spark: SparkSession): Boolean =
    !spark.conf.getOption(PolicySettings.EnabledSessionKey).exists(_.trim.equalsIgnoreCase("false"))

  /**
   * Applies the policy to the newest version of the table; returns what it did. The
   * `logMaintenance.*` fault-injection steps read `spark`'s settings, because this runs on the
   * maintenance thread, not the thread that committed.
   */
  def run(spark: SparkSession, log: TableLog, fromCheckpoint: Long = -1L): MaintenanceAction = {
    def step(name: String): Unit = FaultInjection.step(s"logMaintenance.$name", Some(spark))
    step("beforeDecision")
    val listing = withoutEmptyCompactions(
      log,
      if (fromCheckpoint > 0) log.listingFrom(fromCheckpoint) else log.tailListing()
    )
    val latest = listing.latestVersion
    val (protocol, metadata) = log.protocolAndMetadataAt(latest, listing)
    if (CommitCoordination.skipsBackgroundWrites(log.tablePath.toString, protocol, metadata))
      return MaintenanceAction.Nothing
    val settings = PolicySettings.resolve(metadata.configuration, spark.conf.getOption)
    val action = LogMaintenancePolicy.decide(listing, settings)
    action match {
      case MaintenanceAction.Compact(ranges) =>
        var current = listing
        ranges.foreach { case (start, end) =>
          // A range with narrower compactions inside is a merge of the level below.
          val merges =
            LogSegment.chooseCompactions(current.compactions, start - 1, end).nonEmpty
          val kind = if (merges) "Merge" else "Compaction"
          step(s"before$kind")
          // Never fails the writer's commit for its size: a range too big shrinks, or is skipped.
          val outcome = LogCompaction.compact(
            log,
            current,
            start,
            end,
            Some((protocol, metadata)),
            spark.conf.getOption,
            shrinkToFit = true
          )
          outcome.file.filter(_ => outcome.status == CompactionStatus.Written).foreach { file =>
            val written = CompactionFile(outcome.start, outcome.end, log.fs.getFileStatus(file))
            current = current.copy(compactions =
              (current.compactions :+ written).sortBy(c => (c.start, c.end))
            )
          }
          remember(log, outcome.end)
          step(s"after$kind")
        }
        removeCovered(spark, log, current, settings)
      case MaintenanceAction.Checkpoint(version) =>
        step("beforeCheckpoint")
        /* delta-spark writes the checkpoint; building the snapshot checks that it supports the
         * protocol. */
        SparkSession.setActiveSession(spark)
        val deltaLog = DeltaLog.forTable(spark, log.tablePath, log.storageOptions)
        deltaLog.checkpoint(deltaLog.getSnapshotAt(version), None)
        remember(log, version)
        step("afterCheckpoint")
        logInfo(s"Checkpointed ${log.tablePath} at version $version after a large commit")
      case MaintenanceAction.Nothing =>
    }
    action
  }

  /**
   * Deletes compactions of zero bytes (delta-kernel-rs#2336 wrote such files): no writer that
   * writes atomically leaves one, readers that trust it lose the actions of its commits, and with
   * it gone every reader replays the commits, and the policy writes that level again.
   */
  private def withoutEmptyCompactions(log: TableLog, listing: LogListing): LogListing = {
    val empty = listing.compactions.filter(_.status.getLen == 0)
    if (empty.isEmpty) listing
    else {
      val names = empty.map(_.name).mkString(", ")
      logWarning(s"Deleting the empty compactions $names of ${log.tablePath}")
      CoveredCompactions.remove(log, empty, "empty", () => ())
      listing.copy(compactions = listing.compactions.filterNot(empty.contains))
    }
  }

  /** Deletes the compactions that wider ones cover, once their retention period has passed. */
  private def removeCovered(
      spark: SparkSession,
      log: TableLog,
      listing: LogListing,
      settings: PolicySettings
  ): Unit = {
    val expired =
      CoveredCompactions.expired(
        listing,
        settings.coveredRetentionHours,
        System.currentTimeMillis()
      )
    if (expired.nonEmpty) {
      FaultInjection.step("logMaintenance.beforeRemoval", Some(spark))
      CoveredCompactions.remove(
        log,
        expired,
        "covered by wider ones",
        () => FaultInjection.step("logMaintenance.afterFirstRemoval", Some(spark))
      )
    }
  }

  private def remember(log: TableLog, version: Long): Unit = {
    if (maintainedHere.size > MaxRemembered) maintainedHere.clear()
    maintainedHere.merge(log.tablePath.toString, version, (a, b) => math.max(a, b))
  }

  /**
   * Waits until every finished execution has been seen and no maintenance is queued or running; for
   * tests and benchmarks.
   */
  def awaitIdle(timeoutMillis: Long): Boolean = {
    val deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis)
    SparkSession.getActiveSession.orElse(SparkSession.getDefaultSession).foreach { spark =>
      SparkInternals.awaitListeners(spark, timeoutMillis)
    }
    while (running.get() > 0 && System.nanoTime() < deadline) Thread.sleep(10)
    running.get() == 0
  }
}
