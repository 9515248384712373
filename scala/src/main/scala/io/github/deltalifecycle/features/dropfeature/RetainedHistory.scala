package io.github.deltalifecycle.features.dropfeature

import io.github.deltalifecycle.core.{OutOfMemory, TableLog}
import org.apache.spark.sql.{Column, Dataset, SparkSession}
import org.apache.spark.sql.delta.Snapshot
import org.apache.spark.sql.delta.actions.{Action, AddFile, Metadata}

/**
 * The history a client can still read, checked for a feature's traces the way delta-spark checks
 * its removable features before a history-truncating downgrade: the earliest reliable checkpoint's
 * metadata and live files, then every retained commit up to the downgrade's read version. Both
 * scans are Spark jobs that stop at the first trace; only the commit files' names reach the driver.
 */
object RetainedHistory {

  def uses(
      spark: SparkSession,
      snapshot: Snapshot,
      live: Dataset[AddFile] => Dataset[AddFile],
      actions: Column,
      metadata: Metadata => Boolean
  ): Boolean = {
    val deltaLog = snapshot.deltaLog
    val earliest = deltaLog.getSnapshotAt(deltaLog.findEarliestReliableCheckpoint.getOrElse(0L))
    if (metadata(earliest.metadata) || !OutOfMemory.guarded(live(earliest.allFiles).rdd).isEmpty())
      return true
    val commits = TableLog.forPath(deltaLog.newDeltaHadoopConf(), deltaLog.dataPath).listing()
      .commits.filter(_.version <= snapshot.version).map(_.status.getPath.toString)
    commits.nonEmpty &&
    !spark.read.options(deltaLog.options).schema(Action.logSchema).json(commits: _*)
      .filter(actions).isEmpty
  }
}
