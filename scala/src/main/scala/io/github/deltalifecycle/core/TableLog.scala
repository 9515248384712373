package io.github.deltalifecycle.core

import scala.util.control.NonFatal

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{ChecksumFileSystem, FileSystem, Path}
import org.apache.spark.internal.Logging
import org.apache.spark.sql.delta.VersionChecksum
import org.apache.spark.sql.delta.actions.{Action, Metadata, Protocol, SidecarFile}
import org.apache.spark.sql.delta.storage.LogStore
import org.apache.spark.sql.delta.util.JsonUtils
import org.apache.spark.sql.delta.util.FileNames

/**
 * The Delta log of one table, read by this project's own core: listing, snapshot reconstruction at
 * any retained version (compaction-aware), and the checkpoint readers. It never asks delta-spark to
 * build a snapshot, so it also reads tables whose protocol delta-spark refuses (for example ones
 * that name features it does not know). A catalog-managed table reached through its catalog has
 * `catalog`: its listings add the commits the catalog ratified that `_delta_log` does not hold yet,
 * so nothing read from it is behind the table.
 */
final class TableLog private (
    val tablePath: Path,
    val hadoopConf: Configuration,
    val catalog: Option[ManagingCatalog],
    val storageOptions: Map[String, String]
) extends Logging {
  val fs: FileSystem = tablePath.getFileSystem(hadoopConf)

  /**
   * Reads bypass Hadoop's client-side `.crc` sidecar checks (local file systems): log files copied
   * or edited by other tools often carry stale sidecars, and delta-spark does not trust them
   * either. Delta's own checksums (`<v>.crc`) are a different thing.
   */
  val readFs: FileSystem = fs match {
    case c: ChecksumFileSystem => c.getRawFileSystem
    case other => other
  }
  val logPath: Path = LogFiles.logPath(tablePath)

  /** The LogStore every listing and commit of this log goes through (see [[LogStores]]). */
  lazy val store: LogStore = LogStores.shared(hadoopConf)

  /**
   * The whole history: every log file from version 0. For operations that must read it all
   * (protocol history, truncation, cleanup); everything about the latest version uses
   * [[tailListing]].
   */
  def listing(): LogListing = listedWithRatified(0L)

  /** The log files from `version` on; empty when there are none yet. */
  def listingFrom(version: Long): LogListing = listedWithRatified(version)

  // The catalog is asked before the files are listed: a commit backfilled in between is then
  // listed from one or the other. Asked after, the catalog could already have forgotten a commit
  // that the listing missed.
  private def listedWithRatified(from: Long): LogListing = {
    val fromCatalog = catalog.map(_.ratifiedFrom(from))
    val listing = LogListing.list(store, hadoopConf, tablePath, from)
    fromCatalog.fold(listing)(listing.withRatified)
  }

  /** This table's log, reached through `catalog`, the catalog that manages its commits. */
  def throughCatalog(catalog: ManagingCatalog): TableLog =
    new TableLog(tablePath, hadoopConf, Some(catalog), storageOptions)

  /**
   * The log from the newest checkpoint on, which is all the latest version needs: one read of
   * `_last_checkpoint`, then one listing from the version it names, as delta-spark does. A missing
   * or damaged `_last_checkpoint`, or one naming a checkpoint that is not complete, must not
   * mislead: then the whole log is listed.
   */
  def tailListing(): LogListing =
    lastCheckpointVersion()
      .flatMap { version =>
        val tail = scala.util.Try(listingFrom(version)).toOption
        tail.filter(_.checkpointsAt(version).nonEmpty)
      }
      .getOrElse(listing())

  /** The checkpoint version `_last_checkpoint` names, if it exists and can be parsed. */
  def lastCheckpointVersion(): Option[Long] =
    scala.util.Try {
      val in = readFs.open(new Path(logPath, TableLog.LastCheckpointFileName))
      try JsonUtils.mapper.readTree(in: java.io.InputStream)
      finally in.close()
    }.toOption
      .flatMap(json => Option(json).flatMap(j => Option(j.get("version"))))
      .filter(_.canConvertToLong)
      .map(_.asLong)
      .filter(_ >= 0)

  /** A listing that plans `version`: the log's tail if it holds the version, else all of it. */
  def listingFor(version: Long): LogListing = {
    val tail = tailListing()
    if (version >= tail.listedFrom) tail else listing()
  }

  def latestSnapshot(): LogSnapshot = {
    val l = tailListing()
    snapshotAt(l.latestVersion, l)
  }

  /** The protocol and metadata of the latest version, from the log's tail. */
  def latestHead(): SnapshotHead = {
    val l = tailListing()
    val (protocol, metadata) = protocolAndMetadataAt(l.latestVersion, l)
    SnapshotHead(l.latestVersion, protocol, metadata)
  }

  def snapshotAt(version: Long): LogSnapshot = snapshotAt(version, listingFor(version))

  def snapshotAt(version: Long, listing: LogListing): LogSnapshot =
    fromReadableCheckpoint(version, listing) { checkpoint =>
      val replay = new StateReconciler(fs, tablePath)
      checkpoint.foreach(c =>
        replay.applyAll(readCheckpoint(c, ParquetActionReader.AllActionColumns))
      )
      replay
    } { (replay, segment, _) =>
      stepActions(segment).foreach(replay.applyAll)

      val protocol = replay.currentProtocol.getOrElse(
        throw LogErrors.invalidProtocol(
          version,
          "no protocol action is found in the log up to this version"
        )
      )
      ProtocolChecks.validate(protocol, version)
      val metadata = replay.currentMetadata.getOrElse(
        throw ErrorConditions.corruptLog(
          file = logPath.toString,
          reason = s"no metaData action is found in the log up to version $version"
        )
      )
      LogSnapshot(
        tablePath,
        version,
        protocol,
        metadata,
        replay.activeFiles,
        replay.tombstoneFiles,
        replay.setTransactions,
        replay.domainMetadata,
        segment
      )
    }

  /**
   * The segment that rebuilds `version`, planned on `listing`, whose checkpoint opens: its Parquet
   * footers and, for a V2 checkpoint, its manifest's sidecars. An unreadable checkpoint is replaced
   * as [[snapshotAt]] replaces it; the listing the segment was planned on comes with it.
   */
  def readableSegment(version: Long, listing: LogListing): (LogSegment, LogListing) =
    fromReadableCheckpoint(version, listing) { checkpoint =>
      checkpoint.foreach { c =>
        c.files.filterNot(_.name.endsWith(".json"))
          .foreach(part => ParquetActionReader.checkReadable(readFs, part.status))
        sidecarsOf(c)
      }
    } { (_, segment, plannedOn) => (segment, plannedOn) }

  /**
   * `finish` of `version` from the segment `listing` plans, after `start` of its checkpoint (with
   * none, `start` of None). When `start` fails on the checkpoint, it is left out as unreadable
   * ([[withoutUnreadable]]) and the segment planned again, `start` and all; `finish` has the
   * listing the segment was planned on.
   */
  private def fromReadableCheckpoint[S, T](version: Long, listing: LogListing)(
      start: Option[LogCheckpoint] => S
  )(finish: (S, LogSegment, LogListing) => T): T = {
    def attempt(listing: LogListing, excluded: Set[LogCheckpoint]): T = {
      val segment = LogSegment.plan(listing, version, excluded)
      val started =
        try Right(start(segment.checkpoint))
        catch { case NonFatal(e) if segment.checkpoint.isDefined => Left(e) }
      started match {
        case Right(state) => finish(state, segment, listing)
        case Left(e) =>
          val (whole, fallback) =
            withoutUnreadable(segment.checkpoint.get, e, listing, version, excluded)
          attempt(whole, fallback)
      }
    }
    attempt(listing, Set.empty)
  }

  /**
   * How to read `version` again without a checkpoint that failed: the listing to plan from (what
   * can replace the checkpoint lies before it, outside a listing of the log's tail) and the
   * checkpoints to leave out. Fails with the checkpoint's error when nothing can replace it.
   */
  private def withoutUnreadable(
      checkpoint: LogCheckpoint,
      error: Throwable,
      listing: LogListing,
      version: Long,
      excluded: Set[LogCheckpoint]
  ): (LogListing, Set[LogCheckpoint]) = {
    val fallback = excluded + checkpoint
    val whole = if (listing.listedFrom > 0) this.listing() else listing
    if (scala.util.Try(LogSegment.plan(whole, version, fallback)).isFailure) {
      throw LogErrors.unreadableCheckpoint(checkpoint.description, error)
    }
    logWarning(s"Checkpoint ${checkpoint.description} is unreadable (${error.getMessage}); " +
      "reading from an older checkpoint or the commits instead")
    (whole, fallback)
  }

  /**
   * The protocol and metadata in force at `version`, without reconstructing the file state: from
   * the version checksum when it has them, otherwise from only those two columns of the checkpoint
   * and those two action types of the commits after it. An unreadable checkpoint is replaced the
   * way a snapshot replaces it (an older checkpoint, or the commits), still reading only those two.
   */
  def protocolAndMetadataAt(version: Long, listing: LogListing): (Protocol, Metadata) = {
    checksumAt(version, listing).filter(c => c.protocol != null && c.metadata != null).foreach {
      c =>
        return (c.protocol, c.metadata)
    }
    val wanted = Set("protocol", "metaData")
    // The last protocol and metadata of `actions`, or those `before` them.
    def last(actions: Iterator[Action], before: (Protocol, Metadata)) = actions.foldLeft(before) {
      case ((_, metadata), p: Protocol) => (p, metadata)
      case ((protocol, _), m: Metadata) => (protocol, m)
      case (found, _) => found
    }
    val none: (Protocol, Metadata) = (null, null)
    val (protocol, metadata) = fromReadableCheckpoint(version, listing) { checkpoint =>
      checkpoint.fold(none)(c => last(readCheckpoint(c, wanted), none))
    } { (fromCheckpoint, segment, _) =>
      segment.commits.foldLeft(fromCheckpoint) { (found, c) =>
        last(ActionReader.readJsonSelected(readFs, c.status, wanted).iterator, found)
      }
    }
    if (protocol == null) throw LogErrors.invalidProtocol(
      version,
      "no protocol action is found in the log up to this version"
    )
    ProtocolChecks.validate(protocol, version)
    if (metadata == null) throw ErrorConditions.corruptLog(
      file = logPath.toString,
      reason = s"no metaData action is found in the log up to version $version"
    )
    (protocol, metadata)
  }

  /**
   * The actions of the commits after `segment`'s checkpoint, one element per step in version order:
   * a chosen compaction's actions, or a commit's.
   */
  def stepActions(segment: LogSegment): Iterator[Vector[Action]] =
    OrderedPrefetch.map(segment.steps.iterator) {
      case Right(commit) => ActionReader.readJson(readFs, commit.status)
      case Left(compaction) => readCompactionOrCommits(compaction, segment)
    }

  /**
   * A compaction file stands in for its commits only if it reads cleanly and is not empty;
   * otherwise (zero bytes, a truncated or corrupt line) the commits are replayed instead.
   */
  private def readCompactionOrCommits(
      compaction: CompactionFile,
      segment: LogSegment
  ): Vector[Action] = {
    val fromCompaction =
      if (compaction.status.getLen == 0) None
      else
        scala.util.Try(ActionReader.readJson(readFs, compaction.status)).toOption.filter(_.nonEmpty)
    fromCompaction.getOrElse {
      logWarning(
        s"Compaction ${compaction.name} is empty or unreadable; replaying its commits instead"
      )
      segment.commits.filter(c => compaction.covers(c.version)).flatMap(c =>
        ActionReader.readJson(readFs, c.status)
      )
    }
  }

  /**
   * The version checksum (`<v>.crc`) written for `version`, if there is one and it parses.
   * Checksums are optional and advisory (PROTOCOL.md), so an unreadable one is just absent.
   */
  def checksumAt(version: Long, listing: LogListing): Option[VersionChecksum] =
    listing.checksums.get(version).flatMap { file =>
      scala.util.Try {
        val in = readFs.open(file.status.getPath)
        try JsonUtils.mapper.readValue(in: java.io.InputStream, classOf[VersionChecksum])
        finally in.close()
      }.toOption
    }

  /**
   * All actions of a checkpoint limited to `columns`: every part of a multi-part checkpoint, the
   * manifest of a V2 checkpoint (JSON or Parquet) and the sidecars it names.
   */
  def readCheckpoint(checkpoint: LogCheckpoint, columns: Set[String]): Iterator[Action] = {
    val topLevel = checkpoint.files.iterator.flatMap { part =>
      if (part.name.endsWith(".json")) {
        ActionReader.readJson(readFs, part.status).iterator.filter(a =>
          // Sidecars are followed below whatever the columns, as in a Parquet manifest.
          columns.contains(actionColumn(a)) || actionColumn(a) == "sidecar"
        )
      } else {
        ParquetActionReader.read(readFs, part.status, columns + "sidecar")
      }
    }
    val wantsFiles = columns.contains("add") || columns.contains("remove")
    topLevel.flatMap {
      case s: SidecarFile =>
        if (wantsFiles) ParquetActionReader.read(readFs, fs.getFileStatus(sidecarPath(s)), columns)
        else Iterator.empty
      case other => Iterator.single(other)
    }
  }

  /**
   * The sidecar files a checkpoint names (only V2 checkpoints have any), read from its manifest's
   * `sidecar` column alone.
   */
  def sidecarsOf(checkpoint: LogCheckpoint): Seq[Path] =
    if (checkpoint.kind != CheckpointKind.V2) Nil
    else checkpoint.files.flatMap { part =>
      val actions =
        if (part.name.endsWith(".json"))
          ActionReader.readJsonSelected(readFs, part.status, Set("sidecar")).iterator
        else ParquetActionReader.read(readFs, part.status, Set("sidecar"))
      actions.collect { case s: SidecarFile => sidecarPath(s) }.toSeq
    }

  private def sidecarPath(sidecar: SidecarFile): Path = {
    val p = new Path(new java.net.URI(sidecar.path))
    if (p.isAbsolute) p else new Path(FileNames.sidecarDirPath(logPath), p)
  }

  private def actionColumn(action: Action): String = action.wrap match {
    case s if s.add != null => "add"
    case s if s.remove != null => "remove"
    case s if s.metaData != null => "metaData"
    case s if s.protocol != null => "protocol"
    case s if s.txn != null => "txn"
    case s if s.domainMetadata != null => "domainMetadata"
    case s if s.checkpointMetadata != null => "checkpointMetadata"
    case s if s.sidecar != null => "sidecar"
    case _ => "other"
  }
}

object TableLog {
  val LastCheckpointFileName = "_last_checkpoint"

  /**
   * The log of the table at `path`, opened with `hadoopConf`. `storageOptions` are what that
   * configuration holds beyond the session's (what a governing catalog vends for the table), which
   * Spark reads of the table and delta-spark's `DeltaLog` take as options.
   */
  def forPath(
      hadoopConf: Configuration,
      path: Path,
      storageOptions: Map[String, String] = Map.empty
  ): TableLog = {
    val fs = path.getFileSystem(hadoopConf)
    new TableLog(fs.makeQualified(path), hadoopConf, None, storageOptions)
  }

  def forPath(hadoopConf: Configuration, path: String): TableLog =
    forPath(hadoopConf, new Path(path))
}
