package io.github.deltalifecycle.features.redirect

import java.util.concurrent.{ExecutionException, Executors}
import java.util.concurrent.atomic.AtomicReference

import scala.util.Try

import io.github.deltalifecycle.core.FaultInjection
import org.apache.hadoop.fs.{FileSystem, Path}
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.deltalifecycle.{BroadcastHadoopConf, SparkInternals}

/**
 * The Hadoop configurations a copy job's tasks open the source and the target with: each side opens
 * with its own, which for a governed table is what its catalog vends for that location.
 */
private[redirect] final case class SideConfs(from: BroadcastHadoopConf, to: BroadcastHadoopConf) {
  def destroy(): Unit = { from.destroy(); to.destroy() }
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

/**
 * The executor side of a [[TableCopy]]: the tasks that copy and verify a share of the files, or
 * (DRY RUN) look them up, and the threads a task runs its server-side copies on.
 */
private[redirect] object CopyTasks {

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
  private[redirect] def copyTask(
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
  private[redirect] def probeTask(confs: SideConfs, toRoot: Path, files: Iterator[CopyFile])
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
