package io.github.deltalifecycle.core

import org.apache.hadoop.fs.{FileStatus, Path}
import org.apache.spark.sql.delta.CheckpointInstance
import org.apache.spark.sql.delta.util.FileNames

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

/**
 * Names of the files in `_delta_log`, as delta-spark's `FileNames` spells and parses them; this
 * object only sorts them into the types above.
 */
object LogFiles {
  val LogDirName = "_delta_log"

  /** Classifies a listed file; None for files that are not part of the log protocol. */
  def classify(status: FileStatus): Option[LogFile] = status match {
    case FileNames.DeltaFile(_, v) => Some(CommitFile(v, status))
    case FileNames.ChecksumFile(_, v) => Some(ChecksumFile(v, status))
    // PROTOCOL.md, Log Compaction Files: a compaction spans at least two commits.
    case FileNames.CompactedDeltaFile(_, x, y) if x < y => Some(CompactionFile(x, y, status))
    case FileNames.CompactedDeltaFile(_, _, _) => None
    case FileNames.CheckpointFile(_, v) => Some(checkpointPart(v, status))
    case _ => None
  }

  private def checkpointPart(version: Long, status: FileStatus): CheckpointPartFile =
    CheckpointInstance(status.getPath).format match {
      case CheckpointInstance.Format.V2 =>
        CheckpointPartFile(version, CheckpointKind.V2, None, status)
      case CheckpointInstance.Format.WITH_PARTS =>
        val parts = FileNames.numCheckpointParts(status.getPath).get
        // <v>.checkpoint.<part>.<parts>.parquet: FileNames names the count, not the part.
        val part = status.getPath.getName.split('.')(2).toInt
        CheckpointPartFile(version, CheckpointKind.MultiPart, Some((part, parts)), status)
      case _ => CheckpointPartFile(version, CheckpointKind.Classic, None, status)
    }

  /** Groups checkpoint files into complete checkpoints; incomplete multi-part sets are dropped. */
  def completeCheckpoints(parts: Seq[CheckpointPartFile]): Seq[LogCheckpoint] = {
    val singles = parts.filter(_.part.isEmpty).map(p => LogCheckpoint(p.version, p.kind, Seq(p)))
    val multi = parts
      .filter(_.part.isDefined)
      .groupBy(p => (p.version, p.part.get._2))
      .collect {
        case ((v, n), ps) if ps.map(_.part.get._1).toSet == (1 to n).toSet =>
          LogCheckpoint(v, CheckpointKind.MultiPart, ps.sortBy(_.part.get._1))
      }
    (singles ++ multi).sortBy(_.version)
  }

  def logPath(tablePath: Path): Path = new Path(tablePath, LogDirName)
}

/** What a file of `_delta_log` is, for an inventory of the log. */
sealed abstract class LogFileKind(val name: String)
object LogFileKind {
  case object Commit extends LogFileKind("commit")
  case object Checkpoint extends LogFileKind("checkpoint")
  case object Compaction extends LogFileKind("compaction")
  case object Checksum extends LogFileKind("checksum")
  case object LastCheckpoint extends LogFileKind("last_checkpoint")

  /** Not part of the log protocol: a writer's leftover temporary file, say. */
  case object Other extends LogFileKind("other")

  val all: Seq[LogFileKind] = Seq(Commit, Checkpoint, Compaction, Checksum, LastCheckpoint, Other)
}

/**
 * Every file directly in a table's `_delta_log` (sub-folders such as `_sidecars` are not listed),
 * with the versions it belongs to: `version` to `endVersion` (a compaction spans several), none for
 * files that belong to no version.
 */
final case class LogInventoryEntry(
    kind: LogFileKind,
    version: Option[Long],
    endVersion: Option[Long],
    status: FileStatus
) {

  /** The file's path in `_delta_log`: its name, or `_staged_commits/<name>` for a staged commit. */
  def name: String = {
    val parent = status.getPath.getParent
    if (parent != null && parent.getName == LogInventory.StagedCommitsDirName)
      s"${parent.getName}/${status.getPath.getName}"
    else status.getPath.getName
  }
}

object LogInventory {
  private val LastCheckpointName = "_last_checkpoint"

  /** Where a catalog-managed table's writers stage commits before the catalog ratifies them. */
  val StagedCommitsDirName = "_staged_commits"

  /**
   * The whole log, listed once through the table's LogStore as a listing of its history is, in
   * version order (files of no version last). For a catalog-managed table read through its catalog,
   * the staged files of the commits the catalog ratified and `_delta_log` does not hold yet are
   * listed as those versions' commits.
   */
  def of(log: TableLog): Seq[LogInventoryEntry] = {
    val ratified = log.catalog.map(_.ratifiedFrom(0L)).getOrElse(Nil)
    val listed = LogListing.listFiles(log.store, log.hadoopConf, log.tablePath).map(entry)
    val backfilled =
      listed.collect { case e if e.kind == LogFileKind.Commit => e.version }.flatten.toSet
    val staged = ratified.filterNot(r => backfilled.contains(r.version))
      .map(r => versioned(LogFileKind.Commit, r.version, r.status))
    (listed ++ staged)
      .sortBy(e => (e.version.getOrElse(Long.MaxValue), e.kind.name, e.status.getPath.getName))
  }

  private def entry(status: FileStatus): LogInventoryEntry = LogFiles.classify(status) match {
    case Some(c: CommitFile) => versioned(LogFileKind.Commit, c.version, status)
    case Some(c: CheckpointPartFile) => versioned(LogFileKind.Checkpoint, c.version, status)
    case Some(c: ChecksumFile) => versioned(LogFileKind.Checksum, c.version, status)
    case Some(c: CompactionFile) =>
      LogInventoryEntry(LogFileKind.Compaction, Some(c.start), Some(c.end), status)
    case None if status.getPath.getName == LastCheckpointName =>
      LogInventoryEntry(LogFileKind.LastCheckpoint, None, None, status)
    case None => LogInventoryEntry(LogFileKind.Other, None, None, status)
  }

  private def versioned(kind: LogFileKind, version: Long, status: FileStatus) =
    LogInventoryEntry(kind, Some(version), Some(version), status)
}
