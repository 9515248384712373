package io.github.deltalifecycle.features.cleanup

import java.io.{Closeable, FileNotFoundException, IOException}
import java.util.concurrent.{ExecutionException, Executors, ThreadFactory, TimeUnit}
import java.util.concurrent.atomic.AtomicInteger

import io.github.deltalifecycle.shims.BulkDeleteShim
import org.apache.hadoop.fs.{FileSystem, Path}

/**
 * Deletes log files a page at a time; `delete` returns once every file of the page is gone (or was
 * already gone), and throws otherwise.
 */
private[cleanup] sealed trait LogFileDeleter extends Closeable {
  def pageSize: Int
  def delete(paths: Seq[Path]): Unit
}

private[cleanup] object LogFileDeleter {

  /** How many files one page of single deletes holds, per thread. */
  private val FilesPerThread = 8

  /**
   * Hadoop's bulk delete under `base` when the file system has a real one (a page size above 1:
   * S3A's multi-object delete, for example); otherwise single deletes on `threads` threads.
   */
  def open(fs: FileSystem, base: Path, threads: Int): LogFileDeleter = {
    BulkDeleteShim.open(fs, base) match {
      case Some(b) if b.pageSize > 1 => new Bulk(fs, b)
      case other =>
        other.foreach(_.close())
        new Parallel(fs, math.max(1, threads))
    }
  }

  /** One delete of a file that may already be gone; true when it is gone. */
  private def deleteOne(fs: FileSystem, path: Path): Boolean =
    try fs.delete(path, false) || !fs.exists(path)
    catch { case _: FileNotFoundException => true }

  private final class Bulk(fs: FileSystem, bulk: BulkDeleteShim.Handle) extends LogFileDeleter {
    override val pageSize: Int = bulk.pageSize

    override def delete(paths: Seq[Path]): Unit = {
      val failures = bulk.delete(paths)
      // What the store reports as not deleted gets one more try on its own; files a bulk delete
      // finds missing are not failures.
      for ((path, reason) <- failures if !deleteOne(fs, path)) {
        throw new IOException(s"Could not delete $path (the bulk delete reported: $reason)")
      }
    }

    override def close(): Unit = bulk.close()
  }

  private final class Parallel(fs: FileSystem, threads: Int) extends LogFileDeleter {
    override val pageSize: Int = threads * FilesPerThread
    private val pool = Executors.newFixedThreadPool(
      threads,
      new ThreadFactory {
        private val n = new AtomicInteger()
        override def newThread(r: Runnable): Thread = {
          val t = new Thread(r, s"delta-lifecycle-log-cleanup-${n.incrementAndGet()}")
          t.setDaemon(true)
          t
        }
      }
    )

    override def delete(paths: Seq[Path]): Unit = {
      val futures = paths.map(p => p -> pool.submit(() => deleteOne(fs, p)))
      // Every delete of the page finishes before the first failure is reported.
      val outcomes = futures.map { case (p, f) =>
        p ->
          (try Right(f.get())
          catch { case e: ExecutionException => Left(Option(e.getCause).getOrElse(e)) })
      }
      outcomes.foreach {
        case (_, Left(e)) => throw e
        case (p, Right(false)) => throw new IOException(s"Could not delete $p")
        case _ =>
      }
    }

    override def close(): Unit = {
      pool.shutdownNow()
      pool.awaitTermination(10, TimeUnit.SECONDS)
    }
  }
}
