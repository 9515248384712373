package io.github.deltalifecycle.features.redirect

import java.util.concurrent.{ExecutionException, Executors}
import java.util.concurrent.atomic.AtomicReference

import scala.util.Try

import io.github.deltalifecycle.core.{
  FaultInjection,
  LifecycleErrors,
  LogListing,
  OutOfMemory,
  Progress
}
import org.apache.hadoop.fs.{FileStatus, FileSystem, Path}
import org.apache.spark.{Partitioner, SparkContext}
import org.apache.spark.rdd.RDD
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.deltalifecycle.{BroadcastHadoopConf, SparkInternals}
import org.apache.spark.storage.StorageLevel

/**
 * What a copy did: files and bytes copied now, files found already copied (a resumed run), files
 * the log references outside the table root (not copied: the destination's log names them where
 * they are), and files that older retained versions reference but that no longer exist (vacuumed).
 * `route` is how the files were copied; `bytesThroughExecutors` the bytes the executors read and
 * wrote themselves (0 when the store copied every file); `refusedServerSide` the files the store
 * refused to copy itself, which went through streams instead (`refusal`: the store's first answer);
 * `logFilesCopied` how many of the files copied were log files.
 */
final case class CopyStats(
    filesCopied: Long,
    bytesCopied: Long,
    filesAlreadyThere: Long,
    filesReferencedInPlace: Long = 0L,
    filesGone: Long = 0L,
    bytesThroughExecutors: Long = 0L,
    route: Option[CopyRoute] = None,
    refusedServerSide: Long = 0L,
    refusal: Option[String] = None,
    logFilesCopied: Long = 0L
) {
  def +(o: CopyStats): CopyStats =
    CopyStats(
      filesCopied + o.filesCopied,
      bytesCopied + o.bytesCopied,
      filesAlreadyThere + o.filesAlreadyThere,
      filesReferencedInPlace + o.filesReferencedInPlace,
      filesGone + o.filesGone,
      bytesThroughExecutors + o.bytesThroughExecutors,
      route.orElse(o.route),
      refusedServerSide + o.refusedServerSide,
      refusal.orElse(o.refusal),
      logFilesCopied + o.logFilesCopied
    )
}

/**
 * What a copy would do (DRY RUN; nothing written): the files and bytes to copy, those already at
 * the destination with the source's size, those referenced in place or gone (as [[CopyStats]]), the
 * files the copied version reads that are missing at the source (the copy would fail; a few
 * `missingExamples`), the number of copy tasks, and the route.
 */
final case class CopyForecast(
    files: Long,
    bytes: Long,
    filesAlreadyThere: Long,
    bytesAlreadyThere: Long,
    filesReferencedInPlace: Long,
    filesGone: Long,
    filesMissing: Long,
    missingExamples: Vector[String],
    tasks: Int,
    route: CopyRoute
)

/**
 * What one copy task did; `problems` holds the first few mismatches it found (of `problemCount`),
 * which the driver turns into one error. `moved` counts the bytes that passed through the task;
 * `refused` the files the store refused to copy itself (`refusal`: its first answer); `logCopied`
 * the log files among those copied.
 */
private[redirect] final case class TaskOutcome(
    copied: Long,
    bytes: Long,
    alreadyThere: Long,
    gone: Long,
    timesNotKept: Long,
    problemCount: Long,
    problems: Vector[String],
    moved: Long = 0L,
    refused: Long = 0L,
    refusal: Option[String] = None,
    logCopied: Long = 0L
) {
  def +(o: TaskOutcome): TaskOutcome = TaskOutcome(
    copied + o.copied,
    bytes + o.bytes,
    alreadyThere + o.alreadyThere,
    gone + o.gone,
    timesNotKept + o.timesNotKept,
    problemCount + o.problemCount,
    (problems ++ o.problems).take(TaskOutcome.Examples),
    moved + o.moved,
    refused + o.refused,
    refusal.orElse(o.refusal),
    logCopied + o.logCopied
  )

  def problem(what: String): TaskOutcome =
    copy(problemCount = problemCount + 1, problems = (problems :+ what).take(TaskOutcome.Examples))
}

private[redirect] object TaskOutcome {
  val Examples = 3
  val Zero: TaskOutcome = TaskOutcome(0, 0, 0, 0, 0, 0, Vector.empty)
}

/**
 * What a DRY RUN's probe task found: files to copy and their bytes, files already there and their
 * bytes, files gone, and files the copied version reads that are missing (a few named).
 */
private[redirect] final case class ProbeOutcome(
    toCopy: Long,
    bytes: Long,
    there: Long,
    bytesThere: Long,
    gone: Long,
    missing: Long,
    examples: Vector[String]
) {
  def +(o: ProbeOutcome): ProbeOutcome = ProbeOutcome(
    toCopy + o.toCopy,
    bytes + o.bytes,
    there + o.there,
    bytesThere + o.bytesThere,
    gone + o.gone,
    missing + o.missing,
    (examples ++ o.examples).take(TaskOutcome.Examples)
  )
}

private[redirect] object ProbeOutcome {
  val Zero: ProbeOutcome = ProbeOutcome(0, 0, 0, 0, 0, 0, Vector.empty)
}

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
      else run(new ListedOnDriver(log), fromRoot, toRoot, "log files", faults, route)
    } else {
      val data = ReferencedFiles.of(spark, storage, qualify(fromRoot), listing, upTo, after)
      val files =
        if (log.isEmpty) data else data.union(sc.parallelize(log.map(Right(_)), 1))
      val what = if (log.isEmpty) "data files" else "data and log files"
      run(new ListedOnExecutors(files), fromRoot, toRoot, what, faults, route)
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
    forecast(new ListedOnExecutors(files), fromRoot, toRoot, route)
  }

  /** What copying the log files `files` would copy; it writes nothing. */
  def forecastLog(fromRoot: Path, toRoot: Path, files: Seq[FileStatus]): CopyForecast =
    withJobGroup(s"$label: check ${files.size} log files") {
      forecast(
        new ListedOnDriver(files.map(ReferencedFiles.logFile(qualify(fromRoot), _))),
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

  /** The configurations of both sides, for the tasks of one job (released after it). */
  private def broadcastConfs(fromRoot: Path, toRoot: Path): SideConfs = SideConfs(
    SparkInternals.broadcastHadoopConf(spark, storage.conf(fromRoot)),
    SparkInternals.broadcastHadoopConf(spark, storage.conf(toRoot))
  )

  private def withJobGroup[T](description: String)(body: => T): T = {
    val saved = SparkInternals.JobGroupProperties.map(k => k -> sc.getLocalProperty(k))
    sc.setJobGroup(jobGroupId, description, interruptOnCancel = true)
    try body
    finally saved.foreach { case (k, v) => sc.setLocalProperty(k, v) }
  }

  /** The files of a copy: how many, their bytes, and how they go to the copy tasks. */
  private sealed trait Listed {
    def count: Long
    def bytes: Long
    def inPlace: Long
    def tasks: Int

    /** Every file, those referenced in place too (a DRY RUN looks each one up). */
    def all: RDD[CopyFile]

    /**
     * The files to copy, partition k holding task k's files: each file goes to the task its
     * cumulative weight falls in, so each task gets about the same share of the weight (bytes plus
     * a per-file cost).
     */
    def balanced: RDD[CopyFile]

    def release(): Unit
  }

  /**
   * Files a Spark job lists, persisted, with what pass 1 found: per input partition the count,
   * bytes and weight of the files to copy, and the count of files referenced in place (one small
   * row per partition reaches the driver). Files referenced in place are neither copied nor looked
   * up, so each partition keeps only their number: a table whose files live elsewhere (a shallow
   * clone's) caches nothing per file; the listing itself may have counted such files already
   * (Left).
   */
  private final class ListedOnExecutors(files: RDD[Either[Long, CopyFile]]) extends Listed {
    // Cached in the list's partitions, which ReferencedFiles bounds; tasks that run out of heap,
    // listing or reading the cache back, fail as tasks (OutOfMemory.guarded).
    private val cached = OutOfMemory.guarded(files.mapPartitions { it =>
      var inPlace = 0L
      val kept = it.filter {
        case Left(counted) => inPlace += counted; false
        case Right(f) if f.target == null => inPlace += 1; false
        case Right(_) => true
      }
      kept ++ Iterator.single(Left(inPlace))
    }).persist(StorageLevel.MEMORY_AND_DISK)
    private val listed = OutOfMemory.guarded(cached)
    val all: RDD[CopyFile] = listed.flatMap(_.toOption)
    private val sums = listed.mapPartitions { it =>
      var n, bytes, weight, inPlace = 0L
      it.foreach {
        case Left(elsewhere) => inPlace += elsewhere
        case Right(f) => n += 1; bytes += math.max(f.size, 0L); weight += TableCopy.weight(f)
      }
      Iterator.single((n, bytes, weight, inPlace))
    }.collect()
    val count: Long = sums.map(_._1).sum
    val bytes: Long = sums.map(_._2).sum
    val inPlace: Long = sums.map(_._4).sum
    private val totalWeight = sums.map(_._3).sum
    val tasks: Int = TableCopy.taskCount(count, totalWeight, sc.defaultParallelism)

    def balanced: RDD[CopyFile] = {
      val perTask = TableCopy.perTask(totalWeight, tasks)
      val offsets = sums.map(_._3).scanLeft(0L)(_ + _)
      val n = tasks
      all.mapPartitionsWithIndex((i, it) => TableCopy.assign(it, offsets(i), perTask, n))
        .partitionBy(new TableCopy.ExactPartitioner(n)).values
    }

    def release(): Unit = cached.unpersist(blocking = false)
  }

  /**
   * Files the driver holds already (log files, a few thousand at most where a checkpoint keeps the
   * log short): summed and given to their tasks here, so their copy is one job of one stage.
   */
  private final class ListedOnDriver(files: Seq[CopyFile]) extends Listed {
    private val toCopy = files.filter(_.target != null)
    val count: Long = toCopy.size.toLong
    val bytes: Long = toCopy.map(f => math.max(f.size, 0L)).sum
    val inPlace: Long = (files.size - toCopy.size).toLong
    private val totalWeight = toCopy.map(TableCopy.weight).sum
    val tasks: Int = TableCopy.taskCount(count, totalWeight, sc.defaultParallelism)

    def all: RDD[CopyFile] = sc.parallelize(files, math.max(1, tasks))

    def balanced: RDD[CopyFile] = {
      val byTask =
        TableCopy.assign(toCopy.iterator, 0L, TableCopy.perTask(totalWeight, tasks), tasks)
          .toSeq.groupBy(_._1)
      // One element per task: parallelize puts element k in partition k.
      sc.parallelize((0 until tasks).map(k => byTask.getOrElse(k, Nil).map(_._2)), tasks)
        .flatMap(identity)
    }

    def release(): Unit = ()
  }

  private def run(
      listed: Listed,
      fromRoot: Path,
      toRoot: Path,
      what: String,
      faults: CopyFaults,
      route: CopyRoute
  ): CopyStats = {
    val conf = broadcastConfs(fromRoot, toRoot)
    try {
      if (listed.inPlace > 0) {
        progress.info(
          s"${listed.inPlace} $what are outside the table root; they are not copied, " +
            "and the copy's log keeps naming them where they are"
        )
      }
      if (listed.count == 0) return CopyStats(0, 0, 0, listed.inPlace, route = Some(route))
      val description = s"$label: copy ${listed.count} $what " +
        s"(${TableCopy.humanBytes(listed.bytes)}) in ${listed.tasks} tasks, ${route.mode.name}"
      progress.info(s"$description, to $toRoot")
      route.reason.foreach(r => progress.info(s"$what go through ${route.mode.name}: $r"))
      sc.setJobDescription(description)
      val toRootString = qualify(toRoot).toString
      val outcome = listed.balanced.mapPartitions { it =>
        Iterator.single(TableCopy.copyTask(conf, new Path(toRootString), it, faults, route))
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
    } finally {
      listed.release()
      conf.destroy()
    }
  }

  /** Fails on mismatches; otherwise logs what the copy did. */
  private def report(outcome: TaskOutcome, count: Long, toRoot: Path, what: String): Unit = {
    if (outcome.problemCount > 0) {
      throw LifecycleErrors.redirectCopyMismatch(
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
      listed: Listed,
      fromRoot: Path,
      toRoot: Path,
      route: CopyRoute
  ): CopyForecast = {
    val conf = broadcastConfs(fromRoot, toRoot)
    try {
      val toRootString = qualify(toRoot).toString
      val probed = listed.all.mapPartitions { it =>
        Iterator.single(TableCopy.probeTask(conf, new Path(toRootString), it))
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
    } finally {
      listed.release()
      conf.destroy()
    }
  }
}

/**
 * TEST ONLY: what a copy's tasks do besides copying, decided on the driver from the session's test
 * settings (tasks see no session). `haltAt`: the fault-injection step to halt at after a task's
 * first copied file, when the session arms it. `delayMillis`: a wait before each file, so a test
 * can watch a copy run and cancel it (`FaultInjection.CopyDelayKey`). `limits`: when a server-side
 * copy goes in parts, lowered by a test to copy small objects in parts
 * (`FaultInjection.ServerSideCopyPartKey`). All are off outside tests: the driver hands a task none
 * unless it runs in a test JVM, and the task acts on the first two only if its executor's JVM is
 * one too.
 */
/**
 * The Hadoop configurations a copy job's tasks open the source and the target with: each side opens
 * with its own, which for a governed table is what its catalog vends for that location.
 */
private[redirect] final case class SideConfs(from: BroadcastHadoopConf, to: BroadcastHadoopConf) {
  def destroy(): Unit = { from.destroy(); to.destroy() }
}

private[redirect] final case class CopyFaults(
    haltAt: Option[String],
    delayMillis: Long,
    limits: S3Copy.Limits = S3Copy.Limits.Default
)

private[redirect] object CopyFaults {
  def of(spark: SparkSession, haltStep: Option[String]): CopyFaults = CopyFaults(
    haltStep.filter(FaultInjection.armed(_, Some(spark))),
    FaultInjection.copyDelayMillis(Some(spark)),
    FaultInjection.serverSideCopyPartBytes(Some(spark))
      .fold(S3Copy.Limits.Default)(bytes => S3Copy.Limits(bytes, Some(bytes)))
  )
}

object TableCopy {

  /**
   * The job group of a copy of the table whose id (`metaData.id`, as DESCRIBE DETAIL shows it) is
   * `tableId`: `delta-lifecycle-copy-<table id>`. `sc.cancelJobGroup` with it stops the copy; run
   * the statement again to resume it.
   */
  def jobGroupId(tableId: String): String = s"delta-lifecycle-copy-$tableId"

  /** What a file costs a task: its bytes plus a fixed cost per file (opening, checks). */
  private val PerFileWeight: Long = 1L << 20
  private val TaskWeight: Long = 256L << 20
  private val MaxTasks = 10000

  private[redirect] def weight(f: CopyFile): Long = math.max(f.size, 0L) + PerFileWeight

  /**
   * About 256 MB of weight per task, at least two tasks per core while there are files for them,
   * and at most 10,000 tasks.
   */
  private[redirect] def taskCount(files: Long, weight: Long, cores: Int): Int = {
    val byWeight = (weight + TaskWeight - 1) / TaskWeight
    math.max(1L, math.min(files, math.min(MaxTasks.toLong, math.max(byWeight, 2L * cores))))
      .toInt
  }

  private[redirect] def humanBytes(n: Long): String = {
    val units = Seq("bytes", "KB", "MB", "GB", "TB", "PB")
    var v = n.toDouble
    var u = 0
    while (v >= 1024 && u < units.size - 1) { v /= 1024; u += 1 }
    if (u == 0) s"$n bytes" else f"$v%.1f ${units(u)}"
  }

  private[redirect] def perTask(totalWeight: Long, tasks: Int): Long =
    math.max(1L, (totalWeight + tasks - 1) / tasks)

  /**
   * The task of each file to copy (files referenced in place are left out): the one its cumulative
   * weight, from `start`, falls in.
   */
  private[redirect] def assign(
      files: Iterator[CopyFile],
      start: Long,
      perTask: Long,
      tasks: Int
  ): Iterator[(Int, CopyFile)] = {
    var cumulative = start
    files.filter(_.target != null).map { f =>
      val w = weight(f)
      val task = math.min(tasks - 1L, (cumulative + w / 2) / perTask).toInt
      cumulative += w
      task -> f
    }
  }

  /** Partition `k` for key `k`: the balanced assignment is computed, not hashed. */
  private[redirect] final class ExactPartitioner(n: Int) extends Partitioner {
    override def numPartitions: Int = n
    override def getPartition(key: Any): Int = key.asInstanceOf[Int]
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

  /**
   * How many server-side copies a task has in flight: they wait on the store, not on the task's
   * core, so one at a time would leave the store idle between requests.
   */
  private[redirect] val ServerSideCopiesPerTask = 8

  /** A file of a copy: where it is and where it goes, with their file systems. */
  private final class Item(f: CopyFile, toRoot: Path, confs: SideConfs) {
    val from = new Path(f.source)
    val to = new Path(toRoot, new Path(null, null, f.target))
    val fromFs: FileSystem = from.getFileSystem(confs.from.value)
    val toFs: FileSystem = to.getFileSystem(confs.to.value)

    /**
     * The source's size, or None when it is not there. A required file whose size the log gives
     * needs no request to the source.
     */
    val fromLen: Option[Long] =
      if (f.required && f.size >= 0 && !f.isLog) Some(f.size)
      else Try(fromFs.getFileStatus(from)).toOption.map(_.getLen)

    /** The target's size, or None when it is not there (on S3, one HEAD request). */
    def targetLen: Option[Long] =
      if (S3Copy.isS3A(toFs)) S3Copy.length(toFs, to)
      else Try(toFs.getFileStatus(to)).toOption.map(_.getLen)
  }

  /**
   * Runs on an executor: copies and verifies one task's files; server-side copies several at a time
   * ([[ServerSideCopiesPerTask]]; one at a time when a test slows each file down). The bytes that
   * passed through the task go to its input and output metrics.
   */
  private def copyTask(
      confs: SideConfs,
      toRoot: Path,
      files: Iterator[CopyFile],
      faults: CopyFaults,
      planned: CopyRoute
  ): TaskOutcome = {
    // After the store refuses one server-side copy, the task's other files go through streams.
    val route = new AtomicReference(planned)
    val copyOne = (f: CopyFile) => copyFile(new Item(f, toRoot, confs), f, route, faults)
    val outcomes =
      if (planned.mode == CopyMode.ServerSide && faults.delayMillis == 0)
        inParallel(files, ServerSideCopiesPerTask)(copyOne)
      else files.map(copyOne)
    val out = outcomes.foldLeft(TaskOutcome.Zero)(_ + _)
    SparkInternals.recordTaskBytes(out.moved)
    out
  }

  /** Copies one file unless it is there already, then verifies it. */
  private def copyFile(
      item: Item,
      f: CopyFile,
      route: AtomicReference[CopyRoute],
      faults: CopyFaults
  ): TaskOutcome = {
    FaultInjection.delay(faults.delayMillis)
    item.fromLen match {
      case None if f.required => TaskOutcome.Zero.problem(s"${f.source} is missing at the source")
      case None => TaskOutcome.Zero.copy(gone = 1)
      case Some(len) =>
        val present = item.targetLen
        val out =
          if (present.contains(len)) TaskOutcome.Zero.copy(alreadyThere = 1)
          else copyMissing(item, f, len, present, route, faults)
        if (out.copied + out.alreadyThere == 0) out else checkCopied(item, f, len, out)
    }
  }

  /**
   * Copies a file that is not at the target (or not whole). When the store refuses a server-side
   * copy, this file and the task's later ones go through streams.
   */
  private def copyMissing(
      item: Item,
      f: CopyFile,
      len: Long,
      present: Option[Long],
      route: AtomicReference[CopyRoute],
      faults: CopyFaults
  ): TaskOutcome = {
    import item.{from, fromFs, to, toFs}
    def once() =
      if (f.isLog) copyLogFile(route.get, item, len, present, faults.limits)
      else Right(FileCopy.copy(route.get, fromFs, from, toFs, to, len, faults.limits))
    val (copied, refusedFirst) = once() match {
      case Right(FileCopy.Refused(reason)) =>
        route.set(CopyRoute(CopyMode.Streams, Some(s"the store refused: $reason")))
        (once(), TaskOutcome.Zero.copy(refused = 1, refusal = Some(reason)))
      case other => (other, TaskOutcome.Zero)
    }
    refusedFirst +
      (copied match {
        case Left(p) => TaskOutcome.Zero.problem(p)
        case Right(FileCopy.SourceMissing) if f.required =>
          TaskOutcome.Zero.problem(s"$from is missing at the source")
        case Right(FileCopy.SourceMissing) => TaskOutcome.Zero.copy(gone = 1)
        case Right(FileCopy.Refused(reason)) => TaskOutcome.Zero.problem(reason)
        case Right(FileCopy.Copied(moved)) =>
          faults.haltAt.foreach(FaultInjection.halt)
          TaskOutcome.Zero.copy(
            copied = 1,
            bytes = len,
            moved = moved,
            logCopied = if (f.isLog) 1 else 0
          )
      })
  }

  /** Verifies a file at the target; a log file also keeps the source's modification time. */
  private def checkCopied(item: Item, f: CopyFile, len: Long, out: TaskOutcome): TaskOutcome = {
    val verified = verify(item, len).fold(out)(out.problem)
    if (f.isLog && !keepTime(item.toFs, item.to, f.modificationTime))
      verified.copy(timesNotKept = verified.timesNotKept + 1)
    else verified
  }

  /**
   * `f` of each item on `threads` threads of the task's own, in order. A cancelled task (its thread
   * interrupted) stops them.
   */
  private def inParallel[A, B](items: Iterator[A], threads: Int)(f: A => B): Seq[B] = {
    val pool = Executors.newFixedThreadPool(
      threads,
      (r: Runnable) => {
        val t = new Thread(r, "delta-lifecycle-copy")
        t.setDaemon(true)
        t
      }
    )
    try {
      val running = items.map(a => pool.submit(() => f(a))).toVector
      running.map { r =>
        try r.get()
        catch { case e: ExecutionException => throw e.getCause }
      }
    } finally pool.shutdownNow()
  }

  /** Runs on an executor (DRY RUN): looks each file up at the source and the target; no writes. */
  private def probeTask(confs: SideConfs, toRoot: Path, files: Iterator[CopyFile])
      : ProbeOutcome = {
    files.filter(_.target != null).foldLeft(ProbeOutcome.Zero) { (out, f) =>
      val item = new Item(f, toRoot, confs)
      item.fromLen match {
        case None if f.required =>
          out + ProbeOutcome(0, 0, 0, 0, 0, 1, Vector(s"${f.source} is missing at the source"))
        case None => out.copy(gone = out.gone + 1)
        case Some(len) if item.targetLen.contains(len) =>
          out.copy(there = out.there + 1, bytesThere = out.bytesThere + len)
        case Some(len) => out.copy(toCopy = out.toCopy + 1, bytes = out.bytes + len)
      }
    }
  }

  /**
   * A log file is never overwritten: a reader of the destination may already trust it. It is copied
   * under a hidden temporary name and renamed into place, so a copy cut short leaves no partial
   * file under a log file's name; one already there with other content is a mismatch. A server-side
   * copy goes straight to the name: the store makes an object appear whole or not at all, and on S3
   * a rename is a copy too.
   */
  private def copyLogFile(
      route: CopyRoute,
      item: Item,
      len: Long,
      present: Option[Long],
      limits: S3Copy.Limits
  ): Either[String, FileCopy.Outcome] = {
    import item.{from, fromFs, to, toFs}
    def mismatch(there: Long) =
      Left(
        s"$to already holds $there bytes, not the $len of $from; log files are never overwritten"
      )
    present match {
      case Some(there) => mismatch(there)
      case None if route.mode == CopyMode.ServerSide =>
        Right(FileCopy.copy(route, fromFs, from, toFs, to, len, limits))
      case None =>
        val temp = new Path(to.getParent, s".${to.getName}.${java.util.UUID.randomUUID()}.tmp")
        try {
          toFs.mkdirs(to.getParent)
          FileCopy.copy(route, fromFs, from, toFs, temp, len, limits) match {
            case copied: FileCopy.Copied =>
              val renamed =
                try toFs.rename(temp, to)
                catch { case _: org.apache.hadoop.fs.FileAlreadyExistsException => false }
              if (renamed) Right(copied)
              else {
                val there = item.targetLen
                if (there.contains(len)) Right(copied) else mismatch(there.getOrElse(-1L))
              }
            case other => Right(other)
          }
        } finally Try(toFs.delete(temp, false))
    }
  }

  /** Size, then the file systems' checksums when both give one of the same algorithm. */
  private def verify(item: Item, len: Long): Option[String] = {
    import item.{from, fromFs, to, toFs}
    item.targetLen match {
      case None => Some(s"$to is missing after the copy")
      case Some(there) if there != len => Some(s"$to has $there bytes, expected $len")
      case _ =>
        val a = Try(fromFs.getFileChecksum(from)).toOption.orNull
        val b = if (a == null) null else Try(toFs.getFileChecksum(to)).toOption.orNull
        if (a != null && b != null && a.getAlgorithmName == b.getAlgorithmName && a != b) {
          Some(s"$to has checksum $b, but $from has $a (${a.getAlgorithmName})")
        } else None
    }
  }

  /**
   * Gives a copied log file the source's modification time (delta-spark dates commits by it when
   * the table has no in-commit timestamps). False when the file system did not keep it (S3A and
   * other object stores ignore or refuse `setTimes`; S3A is not asked).
   */
  private def keepTime(fs: FileSystem, p: Path, mtime: Long): Boolean =
    !S3Copy.isS3A(fs) && Try {
      val now = fs.getFileStatus(p).getModificationTime
      now == mtime || {
        fs.setTimes(p, mtime, -1)
        fs.getFileStatus(p).getModificationTime == mtime
      }
    }.getOrElse(false)
}
