package io.github.deltalifecycle.features.redirect

import java.util.concurrent.{Executors, TimeUnit}
import java.util.concurrent.atomic.{AtomicInteger, AtomicLong}

import scala.concurrent.{Await, ExecutionContext, Future}
import scala.concurrent.duration.Duration

import io.github.deltalifecycle.core.{LifecycleErrors, LogFiles, Progress}
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileStatus, FileSystem, FileUtil, Path}

/** What a copy did: files and bytes copied now, and files found already copied (a resumed run). */
final case class CopyStats(filesCopied: Long, bytesCopied: Long, filesAlreadyThere: Long) {
  def +(o: CopyStats): CopyStats =
    CopyStats(
      filesCopied + o.filesCopied,
      bytesCopied + o.bytesCopied,
      filesAlreadyThere + o.filesAlreadyThere
    )
}

/**
 * Copies a table's files between locations (any two Hadoop file systems), in parallel. A file
 * already at the target with the same size is kept, so a copy cut short by a crash resumes where it
 * stopped; a file of another size (a partial copy) is copied again. After copying, every file is
 * checked at the target by size, and the counts must match.
 */
final class TableCopy(hadoopConf: Configuration, progress: Progress, threads: Int) {

  /** Every file under `from` except the Delta log: data files, deletion vectors, change data. */
  def dataFiles(from: Path): Seq[FileStatus] = {
    val fs = from.getFileSystem(hadoopConf)
    val out = Vector.newBuilder[FileStatus]
    val it = fs.listFiles(from, true)
    val logPrefix = LogFiles.logPath(fs.makeQualified(from)).toString + "/"
    while (it.hasNext) {
      val f = it.next()
      val p = f.getPath.toString
      if (!p.startsWith(logPrefix) && !isHadoopChecksumSidecar(f.getPath)) out += f
    }
    out.result()
  }

  /* Hadoop's client-side `.<file>.crc` checksums are rewritten with each copied file, not table
   * content. */
  private def isHadoopChecksumSidecar(p: Path): Boolean = {
    val name = p.getName
    name.startsWith(".") && name.endsWith(".crc")
  }

  /**
   * Copies `files` (under `fromRoot`) to the same relative paths under `toRoot`, then verifies
   * them. `what` names the files in progress messages.
   */
  def copy(fromRoot: Path, toRoot: Path, files: Seq[FileStatus], what: String): CopyStats = {
    val fromFs = fromRoot.getFileSystem(hadoopConf)
    val toFs = toRoot.getFileSystem(hadoopConf)
    val qualifiedFrom = fromFs.makeQualified(fromRoot).toString.stripSuffix("/") + "/"
    def target(f: FileStatus): Path = {
      val p = f.getPath.toString
      require(p.startsWith(qualifiedFrom), s"$p is not under $qualifiedFrom")
      new Path(toRoot, p.substring(qualifiedFrom.length))
    }
    val total = files.size
    val totalBytes = files.map(_.getLen).sum
    val done = new AtomicInteger()
    val copied = new AtomicInteger()
    val copiedBytes = new AtomicLong()
    val reportEvery = math.max(1, total / 20)
    progress.info(
      s"copying $total $what ($totalBytes bytes) from $fromRoot to $toRoot with $threads threads"
    )
    val pool = Executors.newFixedThreadPool(math.max(1, threads))
    implicit val ec: ExecutionContext = ExecutionContext.fromExecutorService(pool)
    try {
      val work = files.map { f =>
        Future {
          val to = target(f)
          val present = scala.util.Try(toFs.getFileStatus(to)).toOption
          if (!present.exists(_.getLen == f.getLen)) {
            toFs.mkdirs(to.getParent)
            if (isLogFile(to)) copyLogFile(fromFs, f, toFs, to, present)
            else if (!FileUtil.copy(fromFs, f.getPath, toFs, to, false, true, hadoopConf)) {
              throw new java.io.IOException(s"copying ${f.getPath} to $to failed")
            }
            copied.incrementAndGet()
            copiedBytes.addAndGet(f.getLen)
          }
          val n = done.incrementAndGet()
          if (n % reportEvery == 0 || n == total) progress.info(s"$what: $n of $total files done")
        }
      }
      Await.result(Future.sequence(work), Duration.Inf)
    } finally {
      pool.shutdown()
      pool.awaitTermination(1, TimeUnit.MINUTES)
    }
    verify(files, toFs, target)
    CopyStats(copied.get, copiedBytes.get, total - copied.get)
  }

  private def isLogFile(p: Path): Boolean =
    Iterator.iterate(p.getParent)(_.getParent).takeWhile(_ != null)
      .exists(_.getName == LogFiles.LogDirName)

  /**
   * A log file is never overwritten: a reader of the destination may already trust it. It is copied
   * under a hidden temporary name and renamed into place, so a copy cut short leaves no partial
   * file under a log file's name; one already there with other content is a mismatch.
   */
  private def copyLogFile(
      fromFs: FileSystem,
      from: FileStatus,
      toFs: FileSystem,
      to: Path,
      present: Option[FileStatus]
  ): Unit = {
    def mismatch(len: Long) = LifecycleErrors.redirectCopyMismatch(
      s"$to already holds $len bytes, not the ${from.getLen} of ${from.getPath}; " +
        "log files are never overwritten"
    )
    present.foreach(p => throw mismatch(p.getLen))
    val temp = new Path(to.getParent, s".${to.getName}.${java.util.UUID.randomUUID()}.tmp")
    try {
      if (!FileUtil.copy(fromFs, from.getPath, toFs, temp, false, false, hadoopConf)) {
        throw new java.io.IOException(s"copying ${from.getPath} to $temp failed")
      }
      val renamed =
        try toFs.rename(temp, to)
        catch { case _: org.apache.hadoop.fs.FileAlreadyExistsException => false }
      if (!renamed) {
        val there = scala.util.Try(toFs.getFileStatus(to)).toOption
        if (!there.exists(_.getLen == from.getLen)) throw mismatch(there.fold(-1L)(_.getLen))
      }
    } finally scala.util.Try(toFs.delete(temp, false))
  }

  private def verify(files: Seq[FileStatus], toFs: FileSystem, target: FileStatus => Path): Unit = {
    val wrong = files.flatMap { f =>
      val to = target(f)
      scala.util.Try(toFs.getFileStatus(to)).toOption match {
        case None => Some(s"$to is missing")
        case Some(s) if s.getLen != f.getLen =>
          Some(s"$to has ${s.getLen} bytes, expected ${f.getLen}")
        case _ => None
      }
    }
    if (wrong.nonEmpty) {
      throw LifecycleErrors.redirectCopyMismatch(
        s"${wrong.size} of ${files.size} files differ (${wrong.take(3).mkString("; ")})"
      )
    }
  }
}
