package io.github.deltalifecycle.features.redirect

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
import org.apache.spark.sql.{Dataset, Encoders, SparkSession}
import org.apache.spark.sql.deltalifecycle.{BroadcastHadoopConf, SparkInternals}
import org.apache.spark.storage.StorageLevel

/**
 * What a copy did: files and bytes copied now, files found already copied (a resumed run), files
 * the log references outside the table root (not copied: the destination's log names them where
 * they are), and files that older retained versions reference but that no longer exist (vacuumed).
 */
final case class CopyStats(
    filesCopied: Long,
    bytesCopied: Long,
    filesAlreadyThere: Long,
    filesReferencedInPlace: Long = 0L,
    filesGone: Long = 0L
) {
  def +(o: CopyStats): CopyStats =
    CopyStats(
      filesCopied + o.filesCopied,
      bytesCopied + o.bytesCopied,
      filesAlreadyThere + o.filesAlreadyThere,
      filesReferencedInPlace + o.filesReferencedInPlace,
      filesGone + o.filesGone
    )
}

/**
 * What one copy task did; `problems` holds the first few mismatches it found (of `problemCount`),
 * which the driver turns into one error.
 */
private[redirect] final case class TaskOutcome(
    copied: Long,
    bytes: Long,
    alreadyThere: Long,
    gone: Long,
    timesNotKept: Long,
    problemCount: Long,
    problems: Vector[String]
) {
  def +(o: TaskOutcome): TaskOutcome = TaskOutcome(
    copied + o.copied,
    bytes + o.bytes,
    alreadyThere + o.alreadyThere,
    gone + o.gone,
    timesNotKept + o.timesNotKept,
    problemCount + o.problemCount,
    (problems ++ o.problems).take(TaskOutcome.Examples)
  )
}

private[redirect] object TaskOutcome {
  val Examples = 3
  val Zero: TaskOutcome = TaskOutcome(0, 0, 0, 0, 0, 0, Vector.empty)
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
 * and keep the source's modification time where the target file system can set it.
 */
final class TableCopy(
    spark: SparkSession,
    hadoopConf: org.apache.hadoop.conf.Configuration,
    progress: Progress,
    jobGroupId: String,
    label: String
) {
  private val sc: SparkContext = spark.sparkContext

  /**
   * Copies every file that the versions of the table at `fromRoot` up to `upTo` reference (see
   * [[ReferencedFiles]]) to the same relative path under `toRoot`; with `after`, only those the
   * commits after that version name. `haltStep` is a fault-injection step a copy task halts at
   * after its first copied file (tests only; see [[CopyFaults]]).
   */
  def copyReferenced(
      fromRoot: Path,
      toRoot: Path,
      listing: LogListing,
      upTo: Long,
      haltStep: String,
      after: Option[Long] = None
  ): CopyStats = withJobGroup(s"$label: list the files versions up to $upTo reference") {
    val files = ReferencedFiles.of(spark, qualify(fromRoot), listing, upTo, after)
    run(files, toRoot, "data files", CopyFaults.of(spark, Some(haltStep)))
  }

  /** Copies log files (already listed, on the driver) under the same rules, as one Spark job. */
  def copyLog(fromRoot: Path, toRoot: Path, files: Seq[FileStatus]): CopyStats =
    withJobGroup(s"$label: copy ${files.size} log files") {
      val root = qualify(fromRoot)
      val items = files.map(f => ReferencedFiles.logFile(root, f))
      val ds = spark.createDataset(items)(Encoders.product[CopyFile])
      run(ds, toRoot, "log files", CopyFaults.of(spark, None))
    }

  private def qualify(p: Path): Path = p.getFileSystem(hadoopConf).makeQualified(p)

  private def withJobGroup[T](description: String)(body: => T): T = {
    val saved = SparkInternals.JobGroupProperties.map(k => k -> sc.getLocalProperty(k))
    sc.setJobGroup(jobGroupId, description, interruptOnCancel = true)
    try body
    finally saved.foreach { case (k, v) => sc.setLocalProperty(k, v) }
  }

  private def run(
      files: Dataset[CopyFile],
      toRoot: Path,
      what: String,
      faults: CopyFaults
  ): CopyStats = {
    // Cached in the list's partitions, which ReferencedFiles bounds; tasks that run out of heap,
    // listing or reading the cache back, fail as tasks (OutOfMemory.guarded).
    val cached = OutOfMemory.guarded(files.rdd).persist(StorageLevel.MEMORY_AND_DISK)
    val rdd = OutOfMemory.guarded(cached)
    val conf = SparkInternals.broadcastHadoopConf(spark, hadoopConf)
    try {
      // Pass 1: per input partition, the count, bytes and weight of the files to copy, and the
      // count of files referenced in place. One small row per partition reaches the driver.
      val sums = rdd.mapPartitions { it =>
        var n, bytes, weight, inPlace = 0L
        it.foreach { f =>
          if (f.target == null) inPlace += 1
          else {
            n += 1; bytes += math.max(f.size, 0L); weight += TableCopy.weight(f)
          }
        }
        Iterator.single((n, bytes, weight, inPlace))
      }.collect()
      val count = sums.map(_._1).sum
      val totalBytes = sums.map(_._2).sum
      val totalWeight = sums.map(_._3).sum
      val inPlace = sums.map(_._4).sum
      if (inPlace > 0) {
        progress.info(
          s"$inPlace $what are outside the table root; they are not copied, " +
            "and the copy's log keeps naming them where they are"
        )
      }
      if (count == 0) return CopyStats(0, 0, 0, inPlace)
      val tasks = TableCopy.taskCount(count, totalWeight, sc.defaultParallelism)
      val perTask = math.max(1L, (totalWeight + tasks - 1) / tasks)
      val offsets = sums.map(_._3).scanLeft(0L)(_ + _)
      val description =
        s"$label: copy $count $what (${TableCopy.humanBytes(totalBytes)}) in $tasks tasks"
      progress.info(s"$description, to $toRoot")
      sc.setJobDescription(description)
      // Pass 2: each file goes to the task its cumulative weight falls in, so each task gets about
      // `perTask` of the weight (bytes plus a per-file cost).
      val balanced = rdd.mapPartitionsWithIndex { (i, it) =>
        var cumulative = offsets(i)
        it.filter(_.target != null).map { f =>
          val w = TableCopy.weight(f)
          val task = math.min(tasks - 1L, (cumulative + w / 2) / perTask).toInt
          cumulative += w
          task -> f
        }
      }.partitionBy(new TableCopy.ExactPartitioner(tasks)).values
      val toRootString = qualify(toRoot).toString
      val outcome = balanced.mapPartitions { it =>
        Iterator.single(TableCopy.copyTask(conf, new Path(toRootString), it, faults))
      }.fold(TaskOutcome.Zero)(_ + _)
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
      progress.info(
        s"$what: ${outcome.copied} copied (${outcome.bytes} bytes), " +
          s"${outcome.alreadyThere} already there, ${outcome.gone} no longer at the source"
      )
      CopyStats(outcome.copied, outcome.bytes, outcome.alreadyThere, inPlace, outcome.gone)
    } finally {
      cached.unpersist(blocking = false)
      conf.destroy()
    }
  }
}

/**
 * TEST ONLY: what a copy's tasks do besides copying, decided on the driver from the session's test
 * settings (tasks see no session). `haltAt`: the fault-injection step to halt at after a task's
 * first copied file, when the session arms it. `delayMillis`: a wait before each file, so a test
 * can watch a copy run and cancel it (`FaultInjection.CopyDelayKey`). Both are off outside tests:
 * the driver hands a task none unless it runs in a test JVM, and the task acts on them only if its
 * executor's JVM is one too.
 */
private[redirect] final case class CopyFaults(haltAt: Option[String], delayMillis: Long)

private[redirect] object CopyFaults {
  def of(spark: SparkSession, haltStep: Option[String]): CopyFaults = CopyFaults(
    haltStep.filter(FaultInjection.armed(_, Some(spark))),
    FaultInjection.copyDelayMillis(Some(spark))
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

  /** Partition `k` for key `k`: the balanced assignment is computed, not hashed. */
  private[redirect] final class ExactPartitioner(n: Int) extends Partitioner {
    override def numPartitions: Int = n
    override def getPartition(key: Any): Int = key.asInstanceOf[Int]
  }

  /** Runs on an executor: copies and verifies one task's files. */
  private def copyTask(
      conf: BroadcastHadoopConf,
      toRoot: Path,
      files: Iterator[CopyFile],
      faults: CopyFaults
  ): TaskOutcome = {
    val hadoopConf = conf.value
    var out = TaskOutcome.Zero
    def problem(what: String): Unit =
      out = out.copy(
        problemCount = out.problemCount + 1,
        problems = (out.problems :+ what).take(TaskOutcome.Examples)
      )
    files.foreach { f =>
      FaultInjection.delay(faults.delayMillis)
      val from = new Path(f.source)
      val to = new Path(toRoot, new Path(null, null, f.target))
      val fromFs = from.getFileSystem(hadoopConf)
      val toFs = to.getFileSystem(hadoopConf)
      // A required file whose size the log gives needs no request to the source before copying.
      val fromLen: Option[Long] =
        if (f.required && f.size >= 0 && !f.isLog) Some(f.size)
        else Try(fromFs.getFileStatus(from)).toOption.map(_.getLen)
      fromLen match {
        case None if f.required => problem(s"${f.source} is missing at the source")
        case None => out = out.copy(gone = out.gone + 1)
        case Some(len) =>
          val present = Try(toFs.getFileStatus(to)).toOption
          val there =
            if (present.exists(_.getLen == len)) {
              out = out.copy(alreadyThere = out.alreadyThere + 1)
              true
            } else {
              val copied =
                if (f.isLog) copyLogFile(fromFs, from, len, toFs, to, present)
                else copyDataFile(fromFs, from, toFs, to, f.required)
              copied match {
                case Left(p) => problem(p); false
                case Right(false) => out = out.copy(gone = out.gone + 1); false
                case Right(true) =>
                  out = out.copy(copied = out.copied + 1, bytes = out.bytes + len)
                  faults.haltAt.foreach(FaultInjection.halt)
                  true
              }
            }
          if (there) {
            verify(fromFs, from, len, toFs, to).foreach(problem)
            if (f.isLog && !keepTime(toFs, to, f.modificationTime)) {
              out = out.copy(timesNotKept = out.timesNotKept + 1)
            }
          }
      }
    }
    out
  }

  /** Right(true) when copied, Right(false) when the (optional) source vanished meanwhile. */
  private def copyDataFile(
      fromFs: FileSystem,
      from: Path,
      toFs: FileSystem,
      to: Path,
      required: Boolean
  ): Either[String, Boolean] =
    if (FileCopy.copy(fromFs, from, toFs, to)) Right(true)
    else if (required) Left(s"$from is missing at the source")
    else Right(false)

  /**
   * A log file is never overwritten: a reader of the destination may already trust it. It is copied
   * under a hidden temporary name and renamed into place, so a copy cut short leaves no partial
   * file under a log file's name; one already there with other content is a mismatch.
   */
  private def copyLogFile(
      fromFs: FileSystem,
      from: Path,
      len: Long,
      toFs: FileSystem,
      to: Path,
      present: Option[FileStatus]
  ): Either[String, Boolean] = {
    def mismatch(there: Long) =
      Left(
        s"$to already holds $there bytes, not the $len of $from; log files are never overwritten"
      )
    present match {
      case Some(p) => mismatch(p.getLen)
      case None =>
        val temp = new Path(to.getParent, s".${to.getName}.${java.util.UUID.randomUUID()}.tmp")
        try {
          toFs.mkdirs(to.getParent)
          copyDataFile(fromFs, from, toFs, temp, required = true) match {
            case Left(p) => Left(p)
            case Right(_) =>
              val renamed =
                try toFs.rename(temp, to)
                catch { case _: org.apache.hadoop.fs.FileAlreadyExistsException => false }
              if (renamed) Right(true)
              else {
                val there = Try(toFs.getFileStatus(to)).toOption
                if (there.exists(_.getLen == len)) Right(true)
                else mismatch(there.fold(-1L)(_.getLen))
              }
          }
        } finally Try(toFs.delete(temp, false))
    }
  }

  /** Size, then the file systems' checksums when both give one of the same algorithm. */
  private def verify(
      fromFs: FileSystem,
      from: Path,
      len: Long,
      toFs: FileSystem,
      to: Path
  ): Option[String] =
    Try(toFs.getFileStatus(to)).toOption match {
      case None => Some(s"$to is missing after the copy")
      case Some(s) if s.getLen != len => Some(s"$to has ${s.getLen} bytes, expected $len")
      case _ =>
        val a = Try(fromFs.getFileChecksum(from)).toOption.orNull
        val b = if (a == null) null else Try(toFs.getFileChecksum(to)).toOption.orNull
        if (a != null && b != null && a.getAlgorithmName == b.getAlgorithmName && a != b) {
          Some(s"$to has checksum $b, but $from has $a (${a.getAlgorithmName})")
        } else None
    }

  /**
   * Gives a copied log file the source's modification time (delta-spark dates commits by it when
   * the table has no in-commit timestamps). False when the file system did not keep it (S3A and
   * other object stores ignore or refuse `setTimes`).
   */
  private def keepTime(fs: FileSystem, p: Path, mtime: Long): Boolean =
    Try {
      val now = fs.getFileStatus(p).getModificationTime
      now == mtime || {
        fs.setTimes(p, mtime, -1)
        fs.getFileStatus(p).getModificationTime == mtime
      }
    }.getOrElse(false)
}
