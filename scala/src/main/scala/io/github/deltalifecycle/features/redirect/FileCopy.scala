package io.github.deltalifecycle.features.redirect

import java.io.File
import java.nio.file.{Files, NoSuchFileException, StandardCopyOption}

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{
  FileSystem,
  FilterFileSystem,
  LocalFileSystem,
  Path,
  RawLocalFileSystem
}
import org.apache.hadoop.io.IOUtils

/** How a copy moves a file's bytes; its `name` is what the result rows and progress say. */
sealed abstract class CopyMode(val name: String) extends Serializable
object CopyMode {

  /** Inside an S3-compatible store (CopyObject, UploadPartCopy): no bytes through executors. */
  case object ServerSide extends CopyMode("server-side")

  /** Between two local paths, through the kernel (the JDK's file copy). */
  case object Local extends CopyMode("local")

  /** Through Hadoop's streams: each executor reads each file and writes it again. */
  case object Streams extends CopyMode("streams")

  val All: Seq[CopyMode] = Seq(ServerSide, Local, Streams)
}

/**
 * How a copy between two locations moves its files, decided once on the driver: the mode, and why
 * it is not a server-side copy when it is not.
 */
final case class CopyRoute(mode: CopyMode, reason: Option[String]) {
  def describe: String = mode.name + reason.fold("")(r => s" ($r)")
}

/**
 * Copies one file's bytes between two Hadoop file systems, overwriting the target. Runs in tasks.
 *
 * Between two `s3a://` locations of the same store the store copies the object itself ([[S3Copy]]):
 * no bytes pass through the executor. Between two paths on Hadoop's local file system the bytes go
 * through the kernel (the JDK's file copy) instead of Hadoop's streams. Without Hadoop's native
 * library (pyspark's distribution has none), the local file system forks a `chmod` process for
 * every file it creates and again for its `.crc` sidecar, which made a copy of small files several
 * times slower than `cp`. The source's sidecar is carried across unchanged (the bytes are the
 * same), so a reader of the target verifies the same checksums a reader of the source does; the
 * target's old sidecar goes first, so a copy cut short never leaves a sidecar that does not match
 * its file. Anything else goes through Hadoop's streams.
 */
private[redirect] object FileCopy {

  private val BufferSize = 1 << 20

  /** What one copy did. */
  sealed trait Outcome

  /** The source does not exist. */
  case object SourceMissing extends Outcome

  /** Copied; `bytesMoved` passed through the executor (0 for a server-side copy). */
  final case class Copied(bytesMoved: Long) extends Outcome

  /** The store refused a server-side copy (`reason`); nothing was written. */
  final case class Refused(reason: String) extends Outcome

  /**
   * How files go from `fromRoot` to `toRoot`. `probe` is an object of the source that the
   * destination's S3 client must be able to read for a server-side copy (a HEAD, nothing written).
   */
  def route(
      fromConf: Configuration,
      toConf: Configuration,
      fromRoot: Path,
      toRoot: Path,
      probe: Path
  ): CopyRoute = {
    val (fromFs, toFs) = (fromRoot.getFileSystem(fromConf), toRoot.getFileSystem(toConf))
    if (localFile(fromFs, fromRoot).isDefined && localFile(toFs, toRoot).isDefined)
      CopyRoute(CopyMode.Local, None)
    else (s3a(fromFs), s3a(toFs)) match {
      case (Some(from), Some(to)) =>
        S3Copy.refusal(from, to, probe) match {
          case None => CopyRoute(CopyMode.ServerSide, None)
          case reason => CopyRoute(CopyMode.Streams, reason)
        }
      case _ =>
        CopyRoute(
          CopyMode.Streams,
          Some(
            s"server-side copies are made between s3a:// locations only; this copy is from " +
              s"${schemeOf(fromFs, fromRoot)}:// to ${schemeOf(toFs, toRoot)}://"
          )
        )
    }
  }

  // The location's own scheme: a wrapping file system (a catalog's) may not name one.
  private def schemeOf(fs: FileSystem, location: Path): String =
    Option(location.toUri.getScheme).getOrElse(fs.getUri.getScheme)

  /**
   * The S3A file system `fs` is or wraps: a catalog's credential-scoped file system (Unity
   * Catalog's) filters one of the credentials it vends.
   */
  private def s3a(fs: FileSystem): Option[FileSystem] = fs match {
    case s if S3Copy.isS3A(s) => Some(s)
    case f: FilterFileSystem => s3a(f.getRawFileSystem)
    case _ => None
  }

  /** Copies `from` (of `length` bytes) to `to` the way `route` says. */
  def copy(
      route: CopyRoute,
      fromFs: FileSystem,
      from: Path,
      toFs: FileSystem,
      to: Path,
      length: Long,
      limits: S3Copy.Limits
  ): Outcome = route.mode match {
    case CopyMode.ServerSide =>
      (s3a(fromFs), s3a(toFs)) match {
        case (Some(s3From), Some(s3To)) => S3Copy.copy(s3From, from, s3To, to, length, limits)
        case _ => copyStreams(fromFs, from, toFs, to)
      }
    case _ =>
      (localFile(fromFs, from), localFile(toFs, to)) match {
        case (Some(source), Some(target)) =>
          copyLocal(source, target, sidecar(fromFs, from), sidecar(toFs, to))
        case _ => copyStreams(fromFs, from, toFs, to)
      }
  }

  private def copyStreams(fromFs: FileSystem, from: Path, toFs: FileSystem, to: Path): Outcome = {
    val in =
      try fromFs.open(from)
      catch { case _: java.io.FileNotFoundException => return SourceMissing }
    val moved =
      try {
        val out = toFs.create(to, true)
        IOUtils.copyBytes(in, out, BufferSize, false)
        out.close()
        in.getPos
      } finally in.close()
    Copied(moved)
  }

  private def copyLocal(
      source: File,
      target: File,
      sourceSidecar: Option[File],
      targetSidecar: Option[File]
  ): Outcome = {
    targetSidecar.foreach(f => Files.deleteIfExists(f.toPath))
    val moved =
      try {
        Files.createDirectories(target.toPath.getParent)
        transfer(source, target)
      } catch { case _: NoSuchFileException if !source.exists() => return SourceMissing }
    for {
      from <- sourceSidecar if from.exists()
      into <- targetSidecar
    } Files.copy(from.toPath, into.toPath, StandardCopyOption.REPLACE_EXISTING)
    Copied(moved)
  }

  /**
   * The kernel copies the bytes (sendfile on Linux); they never enter the JVM. Not through
   * `FileChannel.transferTo`: after one transfer into a channel opened to append (Spark's shuffle
   * writer makes them), JDK 17 stops using sendfile between files for the whole JVM and maps and
   * writes instead, three to five times slower. `Files.copy` always asks the kernel.
   */
  private def transfer(source: File, target: File): Long = {
    Files.copy(source.toPath, target.toPath, StandardCopyOption.REPLACE_EXISTING)
    Files.size(target.toPath)
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
