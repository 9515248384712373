package io.github.deltalifecycle.core

import java.io.FileNotFoundException
import java.nio.file.AccessDeniedException

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileStatus, Path}
import org.apache.spark.sql.delta.storage.LogStore
import org.apache.spark.sql.delta.util.FileNames

/**
 * One listing of a table's `_delta_log`, classified. Everything that decides which files make up a
 * version (checkpoint choice, compaction choice, contiguity) works on this value, so it can be
 * tested without touching storage again.
 *
 * `listedFrom` is the first version listed: 0 for the whole history, a checkpoint's version for a
 * listing of the log's tail (which plans only versions from that checkpoint on). `unbackfilled` are
 * the versions whose commit is a catalog-ratified staged file rather than `_delta_log/<v>.json`
 * ([[withRatified]]).
 */
final case class LogListing(
    tablePath: Path,
    logPath: Path,
    commits: Vector[CommitFile],
    checkpoints: Vector[LogCheckpoint],
    compactions: Vector[CompactionFile],
    checksums: Map[Long, ChecksumFile],
    listedFrom: Long = 0L,
    unbackfilled: Set[Long] = Set.empty
) {

  def isEmpty: Boolean = commits.isEmpty && checkpoints.isEmpty

  private lazy val commitsByVersion: Map[Long, CommitFile] = commits.map(c => c.version -> c).toMap

  def commit(version: Long): Option[CommitFile] = commitsByVersion.get(version)

  def latestVersion: Long =
    (commits.lastOption.map(_.version) ++ checkpoints.lastOption.map(_.version)).max

  /** Commits missing between `from` (exclusive) and `to` (inclusive). */
  def missingCommits(
      from: Long,
      to: Long
  ): Seq[Long] = (from + 1 to to).filterNot(commitsByVersion.contains)

  /**
   * The oldest version whose full state can be rebuilt: version 0 if every commit from 0 is here,
   * otherwise the oldest complete checkpoint followed by an unbroken run of commits.
   */
  lazy val earliestReconstructableVersion: Long = {
    val latest = latestVersion
    val bases = (if (commitsByVersion.contains(0)) Seq(-1L) else Nil) ++ checkpoints.map(_.version)
    bases.distinct.sorted
      .find(base => missingCommits(base, latest).isEmpty)
      .map(base => math.max(base, 0L))
      .getOrElse(throw LogErrors.nonContiguousVersions(
        logPath.toString,
        missingCommits(checkpoints.lastOption.map(_.version).getOrElse(-1L), latest)
      ))
  }

  def checkpointsAt(version: Long): Seq[LogCheckpoint] = checkpoints.filter(_.version == version)

  def compactionsCovering(version: Long): Seq[CompactionFile] =
    compactions.filter(_.covers(version))

  /**
   * The newest version whose commit is in `_delta_log` itself and every commit before it too: what
   * any client may checkpoint, compact or clean up on a catalog-managed table. Ratified commits are
   * published in order, so this is the version before the first unbackfilled one.
   */
  def backfilledThrough: Long =
    if (unbackfilled.isEmpty) latestVersion else unbackfilled.min - 1

  /**
   * This listing with the catalog's `ratified` commits added where `_delta_log` does not hold them
   * yet (a backfilled `<v>.json` and the staged file of a ratified version hold the same commit;
   * the backfilled one is listed). Versions before `listedFrom` stay out, as any listed file would.
   */
  def withRatified(ratified: Seq[RatifiedCommit]): LogListing = {
    val added =
      ratified.filter(r => r.version >= listedFrom && !commitsByVersion.contains(r.version))
        .map(r => CommitFile(r.version, r.status))
    if (added.isEmpty) this
    else copy(
      commits = (commits ++ added).sortBy(_.version),
      unbackfilled = unbackfilled ++ added.map(_.version)
    )
  }
}

object LogListing {

  /**
   * Lists the log of the table at `tablePath` from `fromVersion` on, through `store` (so a store
   * that repairs half-done commits while listing, like S3DynamoDBLogStore, does so). Fails clearly
   * if there is no Delta log; listing the whole history (`fromVersion` 0) also fails on a log with
   * no commit or checkpoint.
   */
  def list(
      store: LogStore,
      hadoopConf: Configuration,
      tablePath: Path,
      fromVersion: Long = 0L
  ): LogListing = {
    val listing =
      classify(tablePath, listFiles(store, hadoopConf, tablePath, fromVersion), fromVersion)
    if (fromVersion == 0 && listing.isEmpty) {
      throw ErrorConditions.notADeltaTable(
        path = tablePath.toString,
        reason = s"${LogFiles.LogDirName} holds no commit or checkpoint files"
      )
    }
    listing
  }

  /** The files of the log from `fromVersion` on, as `store` lists them; folders are left out. */
  def listFiles(
      store: LogStore,
      hadoopConf: Configuration,
      tablePath: Path,
      fromVersion: Long = 0L
  ): Vector[FileStatus] = {
    val logPath = LogFiles.logPath(tablePath)
    try store.listFrom(FileNames.listingPrefix(logPath, fromVersion), hadoopConf)
        .filter(_.isFile).toVector
    catch {
      case _: FileNotFoundException =>
        throw ErrorConditions.notADeltaTable(
          path = tablePath.toString,
          reason = s"there is no ${LogFiles.LogDirName} directory"
        )
      // A log the storage will not show may well be there: never "not a Delta table".
      case e: AccessDeniedException =>
        throw LogErrors.storageAccessDenied(logPath.toString, e)
    }
  }

  def classify(tablePath: Path, statuses: Seq[FileStatus], listedFrom: Long = 0L): LogListing = {
    val files = statuses.iterator.filter(_.isFile).flatMap(LogFiles.classify).toVector
    LogListing(
      tablePath = tablePath,
      logPath = LogFiles.logPath(tablePath),
      commits = files.collect { case c: CommitFile => c }.sortBy(_.version),
      checkpoints =
        LogFiles.completeCheckpoints(files.collect { case c: CheckpointPartFile => c }).toVector,
      compactions = files.collect { case c: CompactionFile => c }.sortBy(c => (c.start, c.end)),
      checksums = files.collect { case c: ChecksumFile => c.version -> c }.toMap,
      listedFrom = listedFrom
    )
  }
}

/**
 * The files that rebuild one version: a checkpoint (or none, meaning replay from version 0), then
 * the commits after it. `compactions` are the non-overlapping compaction files chosen to stand in
 * for runs of those commits; the commits stay listed so a bad compaction can fall back to them.
 */
final case class LogSegment(
    version: Long,
    checkpoint: Option[LogCheckpoint],
    commits: Vector[CommitFile],
    compactions: Vector[CompactionFile]
) {

  def checkpointVersion: Long = checkpoint.map(_.version).getOrElse(-1L)

  /**
   * The last version a reader gets from the checkpoint or chosen compactions rather than single
   * commits.
   */
  def maintainedThrough: Long = (checkpointVersion +: compactions.map(_.end)).max

  /** The replay plan after the checkpoint: each step is a compaction or a single commit. */
  def steps: Vector[Either[CompactionFile, CommitFile]] = {
    val byStart = compactions.map(c => c.start -> c).toMap
    val out = Vector.newBuilder[Either[CompactionFile, CommitFile]]
    var i = 0
    while (i < commits.length) {
      byStart.get(commits(i).version) match {
        case Some(c) =>
          out += Left(c)
          i += (c.end - c.start + 1).toInt
        case None =>
          out += Right(commits(i))
          i += 1
      }
    }
    out.result()
  }
}

object LogSegment {

  /**
   * Plans the segment for `version`: the newest complete checkpoint at or before it (other than
   * those in `exclude`, which failed to read), the commits after it, and compactions chosen
   * greedily (at each position the one reaching furthest without passing `version`), so chosen
   * compactions never overlap each other or the checkpoint.
   */
  def plan(
      listing: LogListing,
      version: Long,
      exclude: Set[LogCheckpoint] = Set.empty
  ): LogSegment = {
    val latest = listing.latestVersion
    if (version < 0 || version > latest) {
      throw ErrorConditions.versionNotFound(
        version = version,
        earliest = listing.earliestReconstructableVersion,
        latest = latest
      )
    }
    val checkpoint = listing.checkpoints.filter(c => c.version <= version && !exclude(c)).lastOption
    val base = checkpoint.map(_.version).getOrElse(-1L)
    val missing = listing.missingCommits(base, version)
    if (missing.nonEmpty) {
      scala.util.Try(listing.earliestReconstructableVersion).toOption match {
        case Some(earliest) if version < earliest && exclude.isEmpty =>
          throw ErrorConditions.versionNotFound(
            version = version,
            earliest = earliest,
            latest = latest
          )
        case _ =>
          throw LogErrors.nonContiguousVersions(listing.logPath.toString, missing)
      }
    }
    val commits = (base + 1 to version).map(v => listing.commit(v).get).toVector
    LogSegment(version, checkpoint, commits, chooseCompactions(listing.compactions, base, version))
  }

  /**
   * The compactions a reader uses between `base` (exclusive) and `version`: at each version the one
   * starting there and reaching furthest without passing `version`.
   */
  def chooseCompactions(
      all: Vector[CompactionFile],
      base: Long,
      version: Long
  ): Vector[CompactionFile] = {
    val usable = all.filter(c => c.start > base && c.end <= version)
    val out = Vector.newBuilder[CompactionFile]
    var cursor = base + 1
    while (cursor <= version) {
      usable.filter(_.start == cursor).maxByOption(_.end) match {
        case Some(c) => out += c; cursor = c.end + 1
        case None => cursor += 1
      }
    }
    out.result()
  }
}
