package io.github.deltalifecycle.features.redirect

import io.github.deltalifecycle.core.{FaultInjection, Progress, TableLog}
import org.apache.hadoop.fs.{FileStatus, Path}
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.delta.util.FileNames

/**
 * The copies SET REDIRECT makes of its source (`log`): the pre-copy of the data files while the
 * source still accepts writes, then the data files committed since and the log up to the version
 * before the redirect, verified at the destination; and DRY RUN's forecast of both. What each copy
 * did goes to `report`.
 */
private[redirect] final class SetRedirectCopy(
    spark: SparkSession,
    ctx: RoutingContext,
    log: TableLog,
    displayName: String,
    report: ProcedureReport,
    checks: DestinationChecks
) {
  // A fault-injection step inside a copy task, after its first copied file (tests only).
  private val MidDataCopyStep = "setRedirect.midDataCopy"

  /**
   * The online part of the copy: the data files of version `current.version` and its retained
   * history, with the destination marked as this source's pre-copy first. Returns what was copied.
   */
  def preCopy(current: RedirectInfo, destPath: Path, progress: Progress): CopyStats = {
    PreCopyMarker.write(ctx.hadoopConf(destPath), destPath, log.tablePath)
    val stats = tableCopy(current.metadata.id, progress).copyReferenced(
      log.tablePath,
      destPath,
      log.listing(),
      current.version,
      MidDataCopyStep
    )
    report.note(
      s"pre-copied ${stats.filesCopied} data files (${stats.bytesCopied} bytes) of the versions " +
        s"up to ${current.version} while the source accepted writes " +
        s"(${stats.route.fold("")(_.describe)})"
    )
    noteReferencedInPlace(stats)
    stats
  }

  /**
   * Copies the data files (with a pre-copy, only those the commits after it name) and the log up to
   * the version before the redirect, in one job; verifies the destination is a table at that
   * version, and removes the pre-copy marker.
   */
  def copyTable(
      enabled: RedirectInfo,
      destPath: Path,
      progress: Progress,
      preCopiedUpTo: Option[Long]
  ): CopyStats = {
    val copiedUpTo = RedirectLookup.versionBeforeRedirect(ctx.hadoopConf(enabled.path), enabled)
    val stats = tableCopy(enabled.metadata.id, progress).copyReferenced(
      log.tablePath,
      destPath,
      log.listing(),
      copiedUpTo,
      MidDataCopyStep,
      after = preCopiedUpTo,
      logFiles = logFilesUpTo(copiedUpTo)
    )
    FaultInjection.step("setRedirect.afterFileCopy")
    checks.verifyCopy(destPath, copiedUpTo)
    PreCopyMarker.remove(ctx.hadoopConf(destPath), destPath)
    report.note(
      s"copied ${stats.filesCopied - stats.logFilesCopied} data files and " +
        s"${stats.logFilesCopied} log files (${stats.bytesCopied} bytes) up to version " +
        s"$copiedUpTo (${stats.route.fold("")(_.mode.name)}); " +
        s"${stats.filesAlreadyThere} were already there"
    )
    noteReferencedInPlace(stats)
    stats
  }

  /**
   * DRY RUN: what copying the data files and the log files of versions up to `upTo` would copy,
   * found by the Spark jobs that would list them, with one look-up per file at `destPath`.
   */
  def forecast(
      tableId: String,
      destPath: Path,
      upTo: Long,
      progress: Progress
  ): (CopyForecast, CopyForecast) = {
    val copy = tableCopy(tableId, progress)
    progress.start(s"list the data files of versions up to $upTo, and look them up at $destPath")
    val data = copy.forecastReferenced(log.tablePath, destPath, log.listing(), upTo)
    progress.start(s"look the log files up to version $upTo up at $destPath")
    (data, copy.forecastLog(log.tablePath, destPath, logFilesUpTo(upTo)))
  }

  private def tableCopy(tableId: String, progress: Progress): TableCopy = new TableCopy(
    spark,
    ctx.storage,
    progress,
    TableCopy.jobGroupId(tableId),
    s"SET REDIRECT on $displayName"
  )

  private def noteReferencedInPlace(stats: CopyStats): Unit =
    if (stats.filesReferencedInPlace > 0) {
      report.note(
        s"${stats.filesReferencedInPlace} files the log references by absolute paths " +
          s"outside ${log.tablePath} were not copied: the destination reads them where they are"
      )
    }

  /** The log files a reader of versions up to `version` may use, and none written after it. */
  private def logFilesUpTo(version: Long): Seq[FileStatus] = {
    val listing = log.listing()
    val commits = listing.commits.filter(_.version <= version).map(_.status)
    val checksums = listing.checksums.values.filter(_.version <= version).map(_.status)
    val compactions = listing.compactions.filter(_.end <= version).map(_.status)
    val checkpoints =
      listing.checkpoints.filter(_.version <= version).flatMap(_.files.map(_.status))
    val fs = log.fs
    val sidecarDir = FileNames.sidecarDirPath(log.logPath)
    val sidecars =
      if (fs.exists(sidecarDir)) fs.listStatus(sidecarDir).toSeq.filter(_.isFile) else Nil
    val lastCheckpoint =
      scala.util.Try(fs.getFileStatus(new Path(
        log.logPath,
        TableLog.LastCheckpointFileName
      ))).toOption
        .filter(_ => listing.checkpoints.exists(_.version <= version))
    commits ++ checksums ++ compactions ++ checkpoints ++ sidecars ++ lastCheckpoint
  }
}
