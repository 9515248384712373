package io.github.deltalifecycle.features.redirect

import java.util.concurrent.ConcurrentHashMap

import io.github.deltalifecycle.core.{
  ActionReader,
  CommitCoordination,
  LifecycleErrors,
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
   * re-checking them with two file-status calls: the remembered latest commit file still has the
   * same modification time and length, and the next commit file does not exist. Otherwise it lists
   * and reads the log, and remembers what it found.
   */
  def read(hadoopConf: Configuration, path: Path): Option[RedirectInfo] = {
    val log = TableLog.forPath(hadoopConf, path)
    stillLatest(log).foreach(return _)
    if (!log.fs.exists(log.logPath)) return None
    val listing = scala.util.Try(log.tailListing()).toOption.getOrElse(return None)
    val latest = listing.latestVersion
    val stamp = listing.commit(latest).map(c => (c.status.getModificationTime, c.status.getLen))
    val (protocol, metadata) = latestProtocolAndMetadata(log, listing)
    val config = RedirectConfig.fromMetadata(metadata, path.toString)
    if (
      config.isEmpty && RedirectConfig.protocolNames(protocol).exists(_.endsWith("ReaderWriter"))
    ) {
      throw LifecycleErrors.invalidRedirect(
        path.toString,
        "the protocol names redirectReaderWriter but no redirect property is set, " +
          "so no client can tell where the table lives"
      )
    }
    val info = Some(RedirectInfo(log.tablePath, latest, protocol, metadata, config))
    if (latestFacts.size > MaxRemembered) latestFacts.clear()
    latestFacts.put(log.tablePath.toString, (latest, stamp, info))
    info
  }

  /**
   * The remembered facts, if they are still those of the latest version: its commit file is
   * unchanged and the next commit does not exist. Two file-status calls instead of a listing.
   */
  private def stillLatest(log: TableLog): Option[Option[RedirectInfo]] =
    Option(latestFacts.get(log.tablePath.toString)).flatMap { case (version, stamp, info) =>
      def status(v: Long) =
        scala.util.Try(log.fs.getFileStatus(FileNames.unsafeDeltaFile(log.logPath, v))).toOption
      val unchanged = stamp.isDefined &&
        status(version).map(s => (s.getModificationTime, s.getLen)) == stamp
      if (unchanged && status(version + 1).isEmpty) Some(info) else None
    }

  private val MaxRemembered = 1000
  private val latestFacts =
    new ConcurrentHashMap[String, (Long, Option[(Long, Long)], Option[RedirectInfo])]()

  /**
   * The latest protocol and metadata, reading as little as possible: the latest version's checksum;
   * else the commits after the newest checkpoint, newest first, until both are found (a redirect
   * state change carries both); else the log core's complete reading.
   */
  private def latestProtocolAndMetadata(
      log: TableLog,
      listing: LogListing
  ): (Protocol, Metadata) = {
    val latest = listing.latestVersion
    log.checksumAt(latest, listing).filter(c => c.protocol != null && c.metadata != null).foreach {
      c =>
        return (c.protocol, c.metadata)
    }
    val checkpointVersion =
      listing.checkpoints.filter(_.version <= latest).lastOption.map(_.version).getOrElse(-1L)
    var protocol: Protocol = null
    var metadata: Metadata = null
    var v = latest
    while (v > checkpointVersion && (protocol == null || metadata == null)) {
      listing.commit(v) match {
        case Some(commit) =>
          val actions =
            ActionReader.readJsonSelected(log.readFs, commit.status, Set("protocol", "metaData"))
          if (protocol == null)
            protocol = actions.collect { case p: Protocol => p }.lastOption.orNull
          if (metadata == null)
            metadata = actions.collect { case m: Metadata => m }.lastOption.orNull
        case None => v = checkpointVersion // a gap: let the complete reading judge it
      }
      v -= 1
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
    val listing: LogListing = log.listing()
    var v = info.version
    while (v > 0) {
      val commit = listing.commit(v).getOrElse(throw LifecycleErrors.invalidRedirect(
        info.path.toString,
        s"commit $v is missing, so the version before the redirect cannot be found"
      ))
      val actions = ActionReader.readJson(log.readFs, commit.status)
      if (
        !dataChangesAllowed && actions.exists(a =>
          a.isInstanceOf[AddFile] || a.isInstanceOf[RemoveFile] || a.isInstanceOf[AddCDCFile]
        )
      ) {
        throw LifecycleErrors.invalidRedirect(
          info.path.toString,
          s"version $v changed data after the redirect began, which the RFC forbids; " +
            "the source cannot be read safely"
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
    throw LifecycleErrors.invalidRedirect(
      info.path.toString,
      "no version before the redirect is retained in the log"
    )
  }
}
