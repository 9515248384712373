package io.github.deltalifecycle.features.redirect

import java.util.concurrent.ConcurrentHashMap

import scala.util.control.NonFatal

import io.github.deltalifecycle.core.{
  ActionReader,
  CommitCoordination,
  DeltaLifecycleException,
  ErrorConditions,
  LogErrors,
  LogListing,
  TableLog
}
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.catalyst.QueryPlanningTracker
import org.apache.spark.sql.delta.actions.{AddCDCFile, AddFile, Metadata, Protocol, RemoveFile}
import org.apache.spark.sql.delta.util.FileNames

/** The redirect facts of one table location at its latest version. */
final case class RedirectInfo(
    path: Path,
    version: Long,
    protocol: Protocol,
    metadata: Metadata,
    config: Option[RedirectConfig]
) {
  def state: String = config.map(_.state.name).getOrElse(RedirectState.Normal)

  /** Refuses `operation` on `table` (this location) when its commits go through a coordinator. */
  def requireDirectCommits(table: String, operation: String): Unit =
    CommitCoordination.requireDirectCommits(table, protocol, metadata, operation)
}

/**
 * Reads a table's redirect with this project's log core: one listing of `_delta_log`, then the
 * protocol and metadata of the latest version from its checksum, or from the commits after the
 * newest checkpoint (the checkpoint only when they do not hold them). It never asks delta-spark,
 * which cannot open a table whose protocol names a redirect feature.
 *
 * Results are cached for the query being planned (Spark's per-query planning tracker), so a query
 * that names a table several times reads the log once. Across queries, the facts of a table's
 * latest version are remembered and reused while that version is still the latest (its commit file
 * unchanged, no next commit file; commit files are written once), so a later query costs two
 * file-status calls.
 */
object RedirectLookup {
  private val perQuery = new java.util.WeakHashMap[QueryPlanningTracker, ConcurrentHashMap[
    String,
    Option[RedirectInfo]
  ]]()

  /**
   * The redirect facts of the Delta table at `path`, or None when there is no Delta table there.
   */
  def lookup(hadoopConf: Configuration, path: Path): Option[RedirectInfo] = {
    val cache = QueryPlanningTracker.get.map { tracker =>
      perQuery.synchronized(perQuery.computeIfAbsent(tracker, _ => new ConcurrentHashMap()))
    }
    val key = path.toString
    cache.flatMap(c => Option(c.get(key))).getOrElse {
      val info = read(hadoopConf, path)
      cache.foreach(_.put(key, info))
      info
    }
  }

  /**
   * Like [[lookup]] without the per-query cache, for commands that change the redirect. It does
   * reuse the facts remembered for the table's latest version (by any earlier read), but only after
   * re-checking them: the remembered latest commit file is unchanged and the next commit file does
   * not exist. When a few commits landed since, it reads them one by one; after more, it lists only
   * those and reads them newest first for a protocol or metadata change (the remembered ones still
   * hold otherwise). Without remembered facts it reads the log's tail, and remembers what it found.
   */
  def read(hadoopConf: Configuration, path: Path): Option[RedirectInfo] = {
    val log = TableLog.forPath(hadoopConf, path)
    // Facts whose commit file changed (a table deleted and created again) are not built on.
    val remembered = Option(latestFacts.get(log.tablePath.toString)).filter(commitUnchanged(log, _))
    val refreshed = remembered.flatMap {
      case (version, _, Some(info)) =>
        scala.util.Try(walkForward(log, version, info)).toOption.flatten
          .orElse(scala.util.Try(newerThan(log, version, info)).toOption.flatten)
      case _ => None
    }
    refreshed match {
      case Some(Unchanged(info)) => return Some(info)
      case _ =>
    }
    val Found(latest, stamp, protocol, metadata) = refreshed.getOrElse {
      val listing =
        try log.tailListing()
        catch {
          // Access refused is not "no table here": the table's catalog may hold one.
          case e: DeltaLifecycleException if e.condition == LogErrors.StorageAccessDenied =>
            throw e
          case NonFatal(_) => return None
        }
      val (protocol, metadata) = latestProtocolAndMetadata(log, listing)
      found(listing, protocol, metadata)
    }
    val config = RedirectConfig.fromMetadata(metadata, path.toString)
    if (
      config.isEmpty && RedirectConfig.protocolNames(protocol).exists(_.endsWith("ReaderWriter"))
    ) {
      throw ErrorConditions.InvalidRedirect.featureWithoutProperty(
        table = path.toString,
        feature = RedirectMode.ReaderWriter.feature
      )
    }
    val info = Some(RedirectInfo(log.tablePath, latest, protocol, metadata, config))
    if (latestFacts.size > MaxRemembered) latestFacts.clear()
    latestFacts.put(log.tablePath.toString, (latest, stamp, info))
    info
  }

  /**
   * Whether the facts last read for the table at `path` name a redirect (a property or a feature).
   * No I/O: it answers from what an earlier read remembered, so a caller that holds another
   * reader's view of the table knows whether to ask this lookup instead.
   */
  def rememberedRedirected(hadoopConf: Configuration, path: Path): Boolean =
    remembered(hadoopConf, path).flatMap(_._3)
      .exists(info => !RedirectConfig.absent(info.protocol, info.metadata))

  /** Whether any facts of the table at `path` are remembered, i.e. whether it was ever read. */
  def remembers(hadoopConf: Configuration, path: Path): Boolean =
    remembered(hadoopConf, path).isDefined

  private def remembered(hadoopConf: Configuration, path: Path): Option[Remembered] =
    Option(latestFacts.get(TableLog.forPath(hadoopConf, path).tablePath.toString))

  /** What a refresh found: the remembered facts still hold, or those of a newer version. */
  private sealed trait Refresh
  private final case class Unchanged(info: RedirectInfo) extends Refresh
  private final case class Found(
      latest: Long,
      stamp: Option[(Long, Long)],
      protocol: Protocol,
      metadata: Metadata
  ) extends Refresh

  private def found(listing: LogListing, protocol: Protocol, metadata: Metadata): Found =
    Found(
      listing.latestVersion,
      listing.commit(listing.latestVersion).map(c => stampOf(c.status)),
      protocol,
      metadata
    )

  /** How many new commits a refresh reads one by one before it lists them instead. */
  private val MaxWalk = 8

  /**
   * The commits after `version`, read in order by opening each until the next is missing: no
   * listing, which on S3 costs a page per 1,000 log files (delta-spark's default S3 LogStore lists
   * the whole directory), so the usual refresh after one commit costs a few requests. None after
   * [[MaxWalk]] commits: then a listing is cheaper.
   */
  private def walkForward(log: TableLog, version: Long, known: RedirectInfo): Option[Refresh] = {
    var protocol = known.protocol
    var metadata = known.metadata
    var latest = version
    while (latest - version <= MaxWalk) {
      val next = FileNames.unsafeDeltaFile(log.logPath, latest + 1)
      val actions =
        try ActionReader.readJsonSelected(log.readFs, next, Set("protocol", "metaData"))
        catch {
          case _: java.io.FileNotFoundException =>
            if (latest == version) return Some(Unchanged(known))
            val stamp =
              stampOf(log.fs.getFileStatus(FileNames.unsafeDeltaFile(log.logPath, latest)))
            return Some(Found(latest, Some(stamp), protocol, metadata))
        }
      actions.foreach {
        case p: Protocol => protocol = p
        case m: Metadata => metadata = m
        case _ =>
      }
      latest += 1
    }
    None
  }

  /**
   * The commits after `version`, and the protocol and metadata after them, found from `known`
   * (those at `version`) and the newest of those commits that changes them. None when the newer
   * files are not a plain run of commits (a gap, or none at all): then the tail is read again.
   */
  private def newerThan(log: TableLog, version: Long, known: RedirectInfo): Option[Refresh] = {
    val listing = log.listingFrom(version + 1)
    val newer = listing.commits.map(_.version)
    if (newer.isEmpty || newer != (version + 1 to newer.max)) return None
    val (protocol, metadata) =
      latestProtocolAndMetadata(log, listing, fallback = Some((known.protocol, known.metadata)))
    Some(found(listing, protocol, metadata))
  }

  /**
   * Whether the remembered latest commit file is still the one the facts were read at: one
   * file-status call. Whether it is still the latest is then one open of the next commit file,
   * because on S3A a missing file costs an open one HEAD, where a file-status call adds a LIST.
   */
  private def commitUnchanged(log: TableLog, remembered: Remembered): Boolean =
    remembered match {
      case (version, stamp, _) =>
        stamp.isDefined && scala.util.Try(
          log.fs.getFileStatus(FileNames.unsafeDeltaFile(log.logPath, version))
        ).toOption.map(stampOf) == stamp
    }

  /**
   * What identifies a commit file between two looks: its length and modification time in whole
   * seconds, because object stores give the time in milliseconds in a listing but in seconds in a
   * file-status call (commit files are written once, so this only has to tell a table that was
   * deleted and created again).
   */
  private def stampOf(status: org.apache.hadoop.fs.FileStatus): (Long, Long) =
    (status.getModificationTime / 1000, status.getLen)

  private val MaxRemembered = 1000

  /** The latest version seen, the stamp of its commit file, and the facts read at it. */
  private type Remembered = (Long, Option[(Long, Long)], Option[RedirectInfo])
  private val latestFacts = new ConcurrentHashMap[String, Remembered]()

  /**
   * The latest protocol and metadata, reading as little as possible: the latest version's checksum;
   * else the commits after the newest checkpoint, newest first, until both are found (a redirect
   * state change carries both); else the log core's complete reading.
   */
  private def latestProtocolAndMetadata(
      log: TableLog,
      listing: LogListing,
      fallback: Option[(Protocol, Metadata)] = None
  ): (Protocol, Metadata) = {
    val latest = listing.latestVersion
    if (fallback.isEmpty) {
      log.checksumAt(latest, listing).filter(c => c.protocol != null && c.metadata != null)
        .foreach(c => return (c.protocol, c.metadata))
    }
    // Below this version the checkpoint (or, on a refresh, the remembered facts) answers.
    val floor =
      if (fallback.isDefined) listing.listedFrom - 1
      else listing.checkpoints.filter(_.version <= latest).lastOption.map(_.version)
        .getOrElse(listing.listedFrom - 1)
    var protocol: Protocol = null
    var metadata: Metadata = null
    var v = latest
    while (v > floor && (protocol == null || metadata == null)) {
      listing.commit(v) match {
        case Some(commit) =>
          val actions =
            ActionReader.readJsonSelected(log.readFs, commit.status, Set("protocol", "metaData"))
          if (protocol == null)
            protocol = actions.collect { case p: Protocol => p }.lastOption.orNull
          if (metadata == null)
            metadata = actions.collect { case m: Metadata => m }.lastOption.orNull
        case None => v = floor // a gap: let the complete reading judge it
      }
      v -= 1
    }
    fallback.foreach { case (p, m) =>
      if (protocol == null) protocol = p
      if (metadata == null) metadata = m
    }
    if (protocol != null && metadata != null) (protocol, metadata)
    else log.protocolAndMetadataAt(latest, listing)
  }

  /**
   * The newest version of a source in ENABLE-REDIRECT-IN-PROGRESS that delta-spark can read: the
   * one before the commit that added the redirect feature. Its rows are the table's current rows,
   * because that state accepts no writes and the redirect commits change only protocol and
   * metadata; this is checked, not assumed.
   */
  def versionBeforeRedirect(
      hadoopConf: Configuration,
      info: RedirectInfo,
      dataChangesAllowed: Boolean = false
  ): Long = {
    val log = TableLog.forPath(hadoopConf, info.path)
    versionBeforeRedirect(log, log.listing(), info.version, dataChangesAllowed)
  }

  /**
   * The version before the newest commit at or below `from` that added a redirect feature to a
   * protocol without one: the last version the redirect's source and destination share. With
   * `dataChangesAllowed`, commits that change data may lie above it (an UNSET REDIRECT's replays).
   */
  def versionBeforeRedirect(
      log: TableLog,
      listing: LogListing,
      from: Long,
      dataChangesAllowed: Boolean
  ): Long = {
    var v = from
    while (v > 0) {
      val commit = listing.commit(v).getOrElse(
        throw ErrorConditions.InvalidRedirect.commitMissing(
          table = log.tablePath.toString,
          version = v
        )
      )
      val actions = ActionReader.readJson(log.readFs, commit.status)
      if (
        !dataChangesAllowed && actions.exists(a =>
          a.isInstanceOf[AddFile] || a.isInstanceOf[RemoveFile] || a.isInstanceOf[AddCDCFile]
        )
      ) {
        throw ErrorConditions.InvalidRedirect.dataChanged(
          table = log.tablePath.toString,
          version = v
        )
      }
      val addsRedirectFeature = actions.exists {
        case p: Protocol => RedirectConfig.protocolNames(p).nonEmpty
        case _ => false
      }
      if (addsRedirectFeature) {
        val (before, _) = log.protocolAndMetadataAt(v - 1, listing)
        if (RedirectConfig.protocolNames(before).isEmpty) return v - 1
      }
      v -= 1
    }
    throw ErrorConditions.InvalidRedirect.noVersionBeforeRedirect(log.tablePath.toString)
  }
}
