package io.github.deltalifecycle.features.redirect

import io.github.deltalifecycle.core.{ErrorConditions, LogListing, Progress}
import org.apache.hadoop.fs.{FileStatus, Path}
import org.apache.spark.SparkContext
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.deltalifecycle.SparkInternals

/**
 * Copies a table's files between locations (any two Hadoop file systems) as Spark jobs, under one
 * job group: `jobGroupId` (see [[TableCopy.jobGroupId]]) cancels them with
 * `SparkContext.cancelJobGroup`, and `label` starts their descriptions in the Spark UI.
 *
 * Executors copy and verify. A data file already at the target with the size of the source is kept,
 * so a copy cut short (crash, cancellation) resumes where it stopped; a file of another size (a
 * partial copy) is copied again. Each file is then checked at the target: its size, and the file
 * system's checksum when both sides give one of the same algorithm. Log files are never overwritten
 * and keep the source's modification time where the target file system can set it. How the bytes
 * move ([[CopyRoute]]: inside the store, through the kernel, or through streams) is decided once
 * per pair of locations, on the driver.
 */
final class TableCopy(
    spark: SparkSession,
    storage: StorageAccess,
    progress: Progress,
    jobGroupId: String,
    label: String
) {
  private val sc: SparkContext = spark.sparkContext
  private val routes = scala.collection.mutable.Map.empty[(Path, Path), CopyRoute]

  /**
   * Copies every file that the versions of the table at `fromRoot` up to `upTo` reference (see
   * [[ReferencedFiles]]) to the same relative path under `toRoot`; with `after`, only those the
   * commits after that version name (none when `after` is `upTo`: the log is not read). The log
   * files `logFiles` (listed on the driver) are copied in the same job, next to the data files.
   * `haltStep` is a fault-injection step a copy task halts at after its first copied file (tests
   * only; see [[CopyFaults]]).
   */
  def copyReferenced(
      fromRoot: Path,
      toRoot: Path,
      listing: LogListing,
      upTo: Long,
      haltStep: String,
      after: Option[Long] = None,
      logFiles: Seq[FileStatus] = Nil
  ): CopyStats = withJobGroup(s"$label: list the files versions up to $upTo reference") {
    val faults = CopyFaults.of(spark, Some(haltStep))
    val route = routeOf(fromRoot, toRoot, TableCopy.probeOf(listing, upTo))
    val log = logFiles.map(ReferencedFiles.logFile(qualify(fromRoot), _))
    if (after.contains(upTo)) {
      // Nothing committed since: the log files alone, which the driver holds (one job).
      if (log.isEmpty) CopyStats(0, 0, 0, route = Some(route))
      else run(new ListedOnDriver(sc, log), fromRoot, toRoot, "log files", faults, route)
    } else {
      val data = ReferencedFiles.of(spark, storage, qualify(fromRoot), listing, upTo, after)
      val files =
        if (log.isEmpty) data else data.union(sc.parallelize(log.map(Right(_)), 1))
      val what = if (log.isEmpty) "data files" else "data and log files"
      run(new ListedOnExecutors(sc, files), fromRoot, toRoot, what, faults, route)
    }
  }

  /** What [[copyReferenced]] would copy; it writes nothing (a HEAD of each file at the target). */
  def forecastReferenced(
      fromRoot: Path,
      toRoot: Path,
      listing: LogListing,
      upTo: Long,
      after: Option[Long] = None
  ): CopyForecast = withJobGroup(s"$label: list the files versions up to $upTo reference") {
    val files = ReferencedFiles.of(spark, storage, qualify(fromRoot), listing, upTo, after)
    val route = routeOf(fromRoot, toRoot, TableCopy.probeOf(listing, upTo))
    forecast(new ListedOnExecutors(sc, files), fromRoot, toRoot, route)
  }

  /** What copying the log files `files` would copy; it writes nothing. */
  def forecastLog(fromRoot: Path, toRoot: Path, files: Seq[FileStatus]): CopyForecast =
    withJobGroup(s"$label: check ${files.size} log files") {
      forecast(
        new ListedOnDriver(sc, files.map(ReferencedFiles.logFile(qualify(fromRoot), _))),
        fromRoot,
        toRoot,
        routeOf(fromRoot, toRoot, logProbe(fromRoot, files))
      )
    }

  /**
   * How files go from `fromRoot` to `toRoot`, decided once for the pair (see [[FileCopy.route]]).
   */
  private def routeOf(fromRoot: Path, toRoot: Path, probe: Path): CopyRoute =
    routes.getOrElseUpdate(
      (qualify(fromRoot), qualify(toRoot)),
      FileCopy.route(storage.conf(fromRoot), storage.conf(toRoot), fromRoot, toRoot, probe)
    )

  private def logProbe(fromRoot: Path, files: Seq[FileStatus]): Path =
    files.headOption.fold(fromRoot)(_.getPath)

  private def qualify(p: Path): Path = p.getFileSystem(storage.conf(p)).makeQualified(p)

  /**
   * One job over the files of `listed`: `body` gets the configurations of both sides for its tasks;
   * they and the files cached for it are released after it.
   */
  private def oneJob[T](listed: CopyPlan, fromRoot: Path, toRoot: Path)(body: SideConfs => T): T = {
    val confs = SideConfs(
      SparkInternals.broadcastHadoopConf(spark, storage.conf(fromRoot)),
      SparkInternals.broadcastHadoopConf(spark, storage.conf(toRoot))
    )
    try body(confs)
    finally {
      listed.release()
      confs.destroy()
    }
  }

  private def withJobGroup[T](description: String)(body: => T): T = {
    val saved = SparkInternals.JobGroupProperties.map(k => k -> sc.getLocalProperty(k))
    sc.setJobGroup(jobGroupId, description, interruptOnCancel = true)
    try body
    finally saved.foreach { case (k, v) => sc.setLocalProperty(k, v) }
  }

  private def run(
      listed: CopyPlan,
      fromRoot: Path,
      toRoot: Path,
      what: String,
      faults: CopyFaults,
      route: CopyRoute
  ): CopyStats = oneJob(listed, fromRoot, toRoot) { confs =>
    if (listed.inPlace > 0) {
      progress.info(
        s"${listed.inPlace} $what are outside the table root; they are not copied, " +
          "and the copy's log keeps naming them where they are"
      )
    }
    if (listed.count == 0) CopyStats(0, 0, 0, listed.inPlace, route = Some(route))
    else {
      val description = s"$label: copy ${listed.count} $what " +
        s"(${TableCopy.humanBytes(listed.bytes)}) in ${listed.tasks} tasks, ${route.mode.name}"
      progress.info(s"$description, to $toRoot")
      route.reason.foreach(r => progress.info(s"$what go through ${route.mode.name}: $r"))
      sc.setJobDescription(description)
      val toRootString = qualify(toRoot).toString
      val outcome = listed.balanced.mapPartitions { it =>
        Iterator.single(CopyTasks.copyTask(confs, new Path(toRootString), it, faults, route))
      }.fold(TaskOutcome.Zero)(_ + _)
      report(outcome, listed.count, toRoot, what)
      CopyStats(
        outcome.copied,
        outcome.bytes,
        outcome.alreadyThere,
        listed.inPlace,
        outcome.gone,
        outcome.moved,
        Some(route),
        outcome.refused,
        outcome.refusal,
        outcome.logCopied
      )
    }
  }

  /** Fails on mismatches; otherwise logs what the copy did. */
  private def report(outcome: TaskOutcome, count: Long, toRoot: Path, what: String): Unit = {
    if (outcome.problemCount > 0) {
      throw ErrorConditions.redirectCopyMismatch(
        s"${outcome.problemCount} of $count $what differ or are missing " +
          s"(${outcome.problems.mkString("; ")})"
      )
    }
    if (outcome.timesNotKept > 0) {
      progress.info(
        s"${outcome.timesNotKept} copied $what did not keep the source's modification time: " +
          s"the file system of $toRoot does not set it"
      )
    }
    outcome.refusal.foreach { r =>
      progress.info(
        s"the store refused ${outcome.refused} server-side copies of $what, which went " +
          s"through streams instead: $r"
      )
    }
    progress.info(
      s"$what: ${outcome.copied} copied (${outcome.bytes} bytes, ${outcome.moved} of them " +
        s"through the executors), ${outcome.alreadyThere} already there, " +
        s"${outcome.gone} no longer at the source"
    )
  }

  /** What a copy of `files` would do: one job that looks each file up at the target. */
  private def forecast(
      listed: CopyPlan,
      fromRoot: Path,
      toRoot: Path,
      route: CopyRoute
  ): CopyForecast = oneJob(listed, fromRoot, toRoot) { confs =>
    val toRootString = qualify(toRoot).toString
    val probed = listed.all.mapPartitions { it =>
      Iterator.single(CopyTasks.probeTask(confs, new Path(toRootString), it))
    }.fold(ProbeOutcome.Zero)(_ + _)
    CopyForecast(
      probed.toCopy,
      probed.bytes,
      probed.there,
      probed.bytesThere,
      listed.inPlace,
      probed.gone,
      probed.missing,
      probed.examples,
      if (listed.count == 0) 0 else listed.tasks,
      route
    )
  }
}

object TableCopy {

  /**
   * The job group of a copy of the table whose id (`metaData.id`, as DESCRIBE DETAIL shows it) is
   * `tableId`: `delta-lifecycle-copy-<table id>`. `sc.cancelJobGroup` with it stops the copy; run
   * the statement again to resume it.
   */
  def jobGroupId(tableId: String): String = s"delta-lifecycle-copy-$tableId"

  private[redirect] def humanBytes(n: Long): String = {
    val units = Seq("bytes", "KB", "MB", "GB", "TB", "PB")
    var v = n.toDouble
    var u = 0
    while (v >= 1024 && u < units.size - 1) { v /= 1024; u += 1 }
    if (u == 0) s"$n bytes" else f"$v%.1f ${units(u)}"
  }

  /**
   * A source object for [[FileCopy.route]] to probe: the newest commit (or checkpoint) up to
   * `upTo`, which exists.
   */
  private[redirect] def probeOf(listing: LogListing, upTo: Long): Path =
    listing.commits.filter(_.version <= upTo).lastOption.map(_.status.getPath)
      .orElse(listing.checkpoints.filter(_.version <= upTo).lastOption.map(_.files.head.status
        .getPath))
      .getOrElse(listing.logPath)
}
