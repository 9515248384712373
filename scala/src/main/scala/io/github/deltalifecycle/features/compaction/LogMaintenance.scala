package io.github.deltalifecycle.features.compaction

import java.util.concurrent.{ConcurrentHashMap, Executors, ThreadFactory, TimeUnit}
import java.util.concurrent.atomic.AtomicInteger

import scala.util.control.NonFatal

import io.github.deltalifecycle.core.{FaultInjection, TableLog}
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.spark.internal.Logging
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.delta.DeltaLog
import org.apache.spark.sql.delta.storage.LogStore

/**
 * Runs [[LogMaintenancePolicy]] after commits, on one background thread, so a commit returns as
 * soon as its file is written. Requests for a table that already has one queued are merged: the
 * queued run looks at the newest version anyway. A failed run is logged and changes nothing the log
 * depends on; the next commit retries.
 */
object LogMaintenance extends Logging {

  /**
   * The extension's class name; the policy runs only for commits made in a session that loads it.
   */
  val ExtensionClassName = "io.github.deltalifecycle.sql.DeltaLifecycleSparkSessionExtension"

  private val executor = Executors.newSingleThreadExecutor(new ThreadFactory {
    override def newThread(r: Runnable): Thread = {
      val t = new Thread(r, "delta-lifecycle-log-maintenance")
      t.setDaemon(true)
      t
    }
  })
  private val queued = ConcurrentHashMap.newKeySet[String]()
  private val running = new AtomicInteger(0)

  /** Called once a commit file is in place. Never throws, never blocks on the log. */
  def onCommit(commitFile: Path, store: LogStore, hadoopConf: Configuration): Unit =
    try {
      SparkSession.getActiveSession.filter(enabledIn).foreach { spark =>
        val tablePath = commitFile.getParent.getParent
        val key = tablePath.toString
        if (queued.add(key)) {
          running.incrementAndGet()
          executor.execute { () =>
            queued.remove(key)
            try run(spark, TableLog.forPath(hadoopConf, tablePath), store)
            catch {
              case NonFatal(e) =>
                logWarning(s"Log maintenance of $tablePath failed; the next commit retries", e)
            } finally running.decrementAndGet()
          }
        }
      }
    } catch {
      case NonFatal(e) => logWarning(s"Log maintenance was not scheduled after $commitFile", e)
    }

  def enabledIn(spark: SparkSession): Boolean =
    spark.conf.getOption(
      "spark.sql.extensions"
    ).exists(_.split(",").map(_.trim).contains(ExtensionClassName)) &&
      !spark.conf.getOption(
        PolicySettings.EnabledSessionKey
      ).exists(_.trim.equalsIgnoreCase("false"))

  /**
   * Applies the policy to the newest version of the table; returns what it did. The
   * `logMaintenance.*` fault-injection steps read `spark`'s settings, because this runs on the
   * maintenance thread, not the thread that committed.
   */
  def run(spark: SparkSession, log: TableLog, store: LogStore): MaintenanceAction = {
    def step(name: String): Unit = FaultInjection.step(s"logMaintenance.$name", Some(spark))
    step("beforeDecision")
    val listing = log.listing()
    val latest = listing.latestVersion
    val (protocol, metadata) = log.protocolAndMetadataAt(latest, listing)
    val settings = PolicySettings.resolve(metadata.configuration, spark.conf.getOption)
    val action = LogMaintenancePolicy.decide(listing, settings)
    action match {
      case MaintenanceAction.Compact(start, end) =>
        step("beforeCompaction")
        LogCompaction.compact(log, store, listing, start, end, Some(protocol))
        step("afterCompaction")
      case MaintenanceAction.Checkpoint(version) =>
        step("beforeCheckpoint")
        /* delta-spark writes the checkpoint; building the snapshot checks that it supports the
         * protocol. */
        SparkSession.setActiveSession(spark)
        val deltaLog = DeltaLog.forTable(spark, log.tablePath)
        deltaLog.checkpoint(deltaLog.getSnapshotAt(version), None)
        step("afterCheckpoint")
        logInfo(s"Checkpointed ${log.tablePath} at version $version after a large commit")
      case MaintenanceAction.Nothing =>
    }
    action
  }

  /** Waits until no maintenance is queued or running; for tests and benchmarks. */
  def awaitIdle(timeoutMillis: Long): Boolean = {
    val deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis)
    while (running.get() > 0 && System.nanoTime() < deadline) Thread.sleep(10)
    running.get() == 0
  }
}
