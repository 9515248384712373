package io.github.deltalifecycle.core

import org.apache.hadoop.fs.{FileStatus, Path}

/** The kinds of checkpoint the Delta protocol defines. */
sealed abstract class CheckpointKind(val name: String)
object CheckpointKind {
  case object Classic extends CheckpointKind("classic")
  case object MultiPart extends CheckpointKind("multi-part")
  case object V2 extends CheckpointKind("v2")
}

/** A file in `_delta_log`, classified by its name alone. */
sealed trait LogFile {
  def status: FileStatus
  def name: String = status.getPath.getName
}

final case class CommitFile(version: Long, status: FileStatus) extends LogFile
final case class ChecksumFile(version: Long, status: FileStatus) extends LogFile

/** `<start>.<end>.compacted.json`: the reconciled actions of commits start..end. */
final case class CompactionFile(start: Long, end: Long, status: FileStatus) extends LogFile {
  def covers(version: Long): Boolean = start <= version && version <= end
}

/** One file of a checkpoint; `part` is (index, count) for multi-part checkpoints. */
final case class CheckpointPartFile(
    version: Long,
    kind: CheckpointKind,
    part: Option[(Int, Int)],
    status: FileStatus
) extends LogFile

/** A checkpoint as a unit: one file, or all parts of a multi-part checkpoint. */
final case class LogCheckpoint(
    version: Long,
    kind: CheckpointKind,
    files: Seq[CheckpointPartFile]
) {
  def description: String = files.map(_.name).mkString(", ")
  def sizeInBytes: Long = files.map(_.status.getLen).sum
}

object LogFiles {
  val LogDirName = "_delta_log"
  val SidecarDirName = "_sidecars"
  val LastCheckpointName = "_last_checkpoint"

  private val Commit = """(\d{20})\.json""".r
  private val Checksum = """(\d{20})\.crc""".r
  private val Compaction = """(\d{20})\.(\d{20})\.compacted\.json""".r
  private val ClassicCheckpoint = """(\d{20})\.checkpoint\.parquet""".r
  private val MultiPartCheckpoint = """(\d{20})\.checkpoint\.(\d{10})\.(\d{10})\.parquet""".r
  private val V2Checkpoint = """(\d{20})\.checkpoint\.([^.]+)\.(json|parquet)""".r

  /** Classifies a listed file; None for files that are not part of the log protocol. */
  def classify(status: FileStatus): Option[LogFile] = status.getPath.getName match {
    case Commit(v) => Some(CommitFile(v.toLong, status))
    case Checksum(v) => Some(ChecksumFile(v.toLong, status))
    case Compaction(x, y) if x.toLong < y.toLong => Some(CompactionFile(x.toLong, y.toLong, status))
    case ClassicCheckpoint(v) =>
      Some(CheckpointPartFile(v.toLong, CheckpointKind.Classic, None, status))
    case MultiPartCheckpoint(v, i, n) =>
      Some(CheckpointPartFile(v.toLong, CheckpointKind.MultiPart, Some((i.toInt, n.toInt)), status))
    case V2Checkpoint(v, _, _) =>
      Some(CheckpointPartFile(v.toLong, CheckpointKind.V2, None, status))
    case _ => None
  }

  /** Groups checkpoint files into complete checkpoints; incomplete multi-part sets are dropped. */
  def completeCheckpoints(parts: Seq[CheckpointPartFile]): Seq[LogCheckpoint] = {
    val singles = parts.filter(_.part.isEmpty).map(p => LogCheckpoint(p.version, p.kind, Seq(p)))
    val multi = parts.filter(_.part.isDefined)
      .groupBy(p => (p.version, p.part.get._2))
      .collect {
        case ((v, n), ps) if ps.map(_.part.get._1).toSet == (1 to n).toSet =>
          LogCheckpoint(v, CheckpointKind.MultiPart, ps.sortBy(_.part.get._1))
      }
    (singles ++ multi).sortBy(_.version)
  }

  def logPath(tablePath: Path): Path = new Path(tablePath, LogDirName)

  def commitFileName(version: Long): String = f"$version%020d.json"

  def compactionFileName(start: Long, end: Long): String = f"$start%020d.$end%020d.compacted.json"

  def isCommitFileName(name: String): Boolean = Commit.matches(name)
}
