package io.github.deltalifecycle.features.redirect

import java.io.File
import java.nio.channels.FileChannel
import java.nio.file.{Files, NoSuchFileException, StandardCopyOption, StandardOpenOption}

import org.apache.hadoop.fs.{FileSystem, LocalFileSystem, Path, RawLocalFileSystem}
import org.apache.hadoop.io.IOUtils

/**
 * Copies one file's bytes between two Hadoop file systems, overwriting the target. Runs in tasks.
 *
 * Between two paths on Hadoop's local file system the bytes go through the kernel (a file channel's
 * transfer) instead of Hadoop's streams. Without Hadoop's native library (pyspark's distribution
 * has none), the local file system forks a `chmod` process for every file it creates and again for
 * its `.crc` sidecar, which made a copy of small files several times slower than `cp`. The source's
 * sidecar is carried across unchanged (the bytes are the same), so a reader of the target verifies
 * the same checksums a reader of the source does; the target's old sidecar goes first, so a copy
 * cut short never leaves a sidecar that does not match its file.
 */
private[redirect] object FileCopy {

  private val BufferSize = 1 << 20

  /** True when copied; false when the source does not exist. */
  def copy(fromFs: FileSystem, from: Path, toFs: FileSystem, to: Path): Boolean =
    (localFile(fromFs, from), localFile(toFs, to)) match {
      case (Some(source), Some(target)) =>
        copyLocal(source, target, sidecar(fromFs, from), sidecar(toFs, to))
      case _ => copyStreams(fromFs, from, toFs, to)
    }

  private def copyStreams(fromFs: FileSystem, from: Path, toFs: FileSystem, to: Path): Boolean = {
    val in =
      try fromFs.open(from)
      catch { case _: java.io.FileNotFoundException => return false }
    try {
      val out = toFs.create(to, true)
      IOUtils.copyBytes(in, out, BufferSize, false)
      out.close()
    } finally in.close()
    true
  }

  private def copyLocal(
      source: File,
      target: File,
      sourceSidecar: Option[File],
      targetSidecar: Option[File]
  ): Boolean = {
    targetSidecar.foreach(f => Files.deleteIfExists(f.toPath))
    try {
      Files.createDirectories(target.toPath.getParent)
      transfer(source, target)
    } catch { case _: NoSuchFileException if !source.exists() => return false }
    for {
      from <- sourceSidecar if from.exists()
      into <- targetSidecar
    } Files.copy(from.toPath, into.toPath, StandardCopyOption.REPLACE_EXISTING)
    true
  }

  /** The kernel copies the bytes (sendfile on Linux); they never enter the JVM. */
  private def transfer(source: File, target: File): Unit = {
    val in = FileChannel.open(source.toPath, StandardOpenOption.READ)
    try {
      val out = FileChannel.open(
        target.toPath,
        StandardOpenOption.CREATE,
        StandardOpenOption.WRITE,
        StandardOpenOption.TRUNCATE_EXISTING
      )
      try {
        val size = in.size()
        var done = 0L
        while (done < size) done += in.transferTo(done, size - done, out)
      } finally out.close()
    } finally in.close()
  }

  /** The file a path names, when the file system is Hadoop's local one. */
  private def localFile(fs: FileSystem, p: Path): Option[File] = fs match {
    case local: LocalFileSystem => Some(local.pathToFile(p))
    case raw: RawLocalFileSystem => Some(raw.pathToFile(p))
    case _ => None
  }

  /** The checksum sidecar Hadoop's checksummed local file system keeps next to a file. */
  private def sidecar(fs: FileSystem, p: Path): Option[File] = fs match {
    case local: LocalFileSystem => Some(local.pathToFile(local.getChecksumFile(p)))
    case _ => None
  }
}
