package io.github.deltalifecycle.core

import java.nio.file.FileAlreadyExistsException
import java.sql.Timestamp

import scala.util.control.NonFatal

import org.apache.spark.sql.delta.DeltaConfigs
import org.apache.spark.sql.delta.actions.{Action, AddFile, CommitInfo, Metadata, Protocol}
import org.apache.spark.sql.delta.util.JsonUtils
import org.apache.spark.sql.delta.util.FileNames

/**
 * Commits protocol and metadata actions to a table's log without delta-spark's transactions, for
 * the changes delta-spark refuses to make itself (protocols naming features outside its registry,
 * protocol downgrades with checkpoint protection). The commit is a put-if-absent of
 * `<readVersion + 1>.json` through delta-spark's LogStore, so a concurrent writer that took the
 * version first wins and this commit fails with `DELTA_LIFECYCLE_CONCURRENT_COMMIT`, changing
 * nothing.
 */
object LogCommitter {
  val EngineName = "delta-lifecycle"

  /* What commitInfo.engineInfo says of this project's commits, in delta-spark's "name/version"
   * form. */
  private val EngineInfo = s"Apache-Spark/${org.apache.spark.SPARK_VERSION} $EngineName"

  /**
   * What a commit needs to know about the version it is written after: the protocol and metadata in
   * force there, and its in-commit timestamp if it has one. [[commit]] reads it from the log; a
   * caller writing a run of commits gets each next one from [[commitAfter]] instead, so the run
   * costs one read per commit rather than a replay of the log for each.
   */
  final case class CommitBase(
      readVersion: Long,
      protocol: Protocol,
      metadata: Metadata,
      inCommitTimestamp: Option[Long]
  )

  /**
   * The state of `readVersion`, read from the log: one listing of its tail (which must end at
   * `readVersion`, or another writer got there first), the protocol and metadata, and the commit's
   * in-commit timestamp.
   */
  def baseAt(log: TableLog, readVersion: Long): CommitBase = {
    val listing = log.tailListing()
    if (listing.latestVersion != readVersion)
      throw ErrorConditions.concurrentCommit(
        table = log.tablePath.toString,
        version = readVersion + 1
      )
    val (protocol, metadata) = log.protocolAndMetadataAt(readVersion, listing)
    CommitBase(
      readVersion,
      protocol,
      metadata,
      previousInCommitTimestamp(log, listing, readVersion)
    )
  }

  /**
   * Writes `actions` as version `readVersion + 1` and returns that version. `operation` and
   * `parameters` go to `commitInfo`, encoded as delta-spark encodes them (so DESCRIBE HISTORY reads
   * them). When in-commit timestamps are enabled at the new version, `commitInfo` comes first and
   * carries a timestamp later than the previous commit's.
   */
  def commit(
      log: TableLog,
      readVersion: Long,
      actions: Seq[Action],
      operation: String,
      parameters: Map[String, Any]
  ): Long = commitAfter(log, baseAt(log, readVersion), actions, operation, parameters).readVersion

  /**
   * [[commit]] on a `base` the caller already knows (from [[baseAt]] or the previous
   * [[commitAfter]]), without reading the log: the put-if-absent alone detects another writer.
   * Returns the base of the version written, for the next commit of a run.
   */
  def commitAfter(
      log: TableLog,
      base: CommitBase,
      actions: Seq[Action],
      operation: String,
      parameters: Map[String, Any]
  ): CommitBase = {
    checkActions(actions)
    val readVersion = base.readVersion
    val version = readVersion + 1
    CommitCoordination.requireDirectCommits(
      log.tablePath.toString,
      base.protocol,
      base.metadata,
      s"commit $operation to"
    )
    val protocol = actions.collectFirst { case p: Protocol => p }.getOrElse(base.protocol)
    val metadata = actions.collectFirst { case m: Metadata => m }.getOrElse(base.metadata)
    val now = System.currentTimeMillis()
    val inCommitTimestamp =
      if (!DeltaConfigs.IN_COMMIT_TIMESTAMPS_ENABLED.fromMetaData(metadata)) None
      else Some(math.max(now, base.inCommitTimestamp.map(_ + 1).getOrElse(now)))
    val commitInfo = CommitInfo.empty().copy(
      inCommitTimestamp = inCommitTimestamp,
      timestamp = new Timestamp(inCommitTimestamp.getOrElse(now)),
      operation = operation,
      operationParameters = parameters.map { case (k, v) => k -> jsonParameter(v) },
      readVersion = Some(readVersion),
      isolationLevel = Some("Serializable"),
      isBlindAppend = Some(false),
      engineInfo = Some(EngineInfo),
      txnId = Some(java.util.UUID.randomUUID().toString)
    )
    val target = FileNames.unsafeDeltaFile(log.logPath, version)
    try log.store.write(
        target,
        (commitInfo +: actions).iterator.map(_.json),
        overwrite = false,
        log.hadoopConf
      )
    catch {
      case NonFatal(e) if alreadyExists(e) =>
        throw ErrorConditions.concurrentCommit(table = log.tablePath.toString, version = version)
    }
    CommitBase(version, protocol, metadata, inCommitTimestamp)
  }

  private def checkActions(actions: Seq[Action]): Unit = {
    require(!actions.exists(_.isInstanceOf[CommitInfo]), "commitInfo is written by the committer")
    require(
      actions.count(_.isInstanceOf[Protocol]) <= 1 && actions.count(_.isInstanceOf[Metadata]) <= 1,
      "a commit holds at most one protocol and one metaData action"
    )
  }

  /**
   * How many races for a version [[commitRebasing]] and [[commitReplanning]] lose before they give
   * up. Each lost race costs one listing and the read of the commits that won, so at a few appends
   * a second the limit is far beyond what a commit needs.
   */
  val MaxLostRaces = 100

  /** A commit planned on `readVersion`: its actions for whichever version it lands at. */
  final case class PlannedCommit(readVersion: Long, actionsAt: Long => Seq[Action])

  /**
   * [[commit]], moved past concurrent commits the way delta-spark's conflict checker lets a
   * metadata-only transaction through: when another writer takes the version, the commits that
   * landed since `readVersion` are read, and if `movesPast` accepts every one of them the actions
   * are rebuilt for the next free version (`actionsAt(version)`) and committed there. A commit it
   * does not accept, or `MaxLostRaces` lost races, ends in `DELTA_LIFECYCLE_CONCURRENT_COMMIT`,
   * with nothing written. Without this a table taking a few appends a second never lets a
   * multi-commit operation finish.
   */
  def commitRebasing(
      log: TableLog,
      readVersion: Long,
      operation: String,
      parameters: Map[String, Any],
      movesPast: Seq[Action] => Boolean = isBlindAppend
  )(actionsAt: Long => Seq[Action]): Long =
    commitRacing(
      log,
      operation,
      parameters,
      movesPast,
      PlannedCommit(readVersion, actionsAt)
    )(
      replan = None
    )

  /**
   * [[commitRebasing]] for a commit that can be decided again: when a commit lands that `movesPast`
   * does not accept, `plan` runs again on the new latest version (and may throw, if the commit no
   * longer holds) instead of giving up. The same `MaxLostRaces` limit covers both kinds of retry.
   */
  def commitReplanning(
      log: TableLog,
      operation: String,
      parameters: Map[String, Any],
      movesPast: Seq[Action] => Boolean = isBlindAppend
  )(plan: () => PlannedCommit): Long =
    commitRacing(log, operation, parameters, movesPast, plan())(replan = Some(plan))

  private def commitRacing(
      log: TableLog,
      operation: String,
      parameters: Map[String, Any],
      movesPast: Seq[Action] => Boolean,
      first: PlannedCommit
  )(replan: Option[() => PlannedCommit]): Long = {
    var planned = first
    var base = first.readVersion
    var lostRaces = 0
    while (true) {
      try return commit(log, base, planned.actionsAt(base + 1), operation, parameters)
      catch {
        case e: DeltaLifecycleException
            if e.condition == ConcurrentCommitCondition && lostRaces < MaxLostRaces =>
          lostRaces += 1
          val landed = commitsSince(log, base, e)
          base += landed.size
          if (!landed.forall(movesPast)) replan match {
            case Some(plan) =>
              planned = plan()
              base = planned.readVersion
            case None => throw e
          }
      }
    }
    throw new IllegalStateException("unreachable")
  }

  /**
   * The commits that landed after `base`, read for what a rebase checks; listed from `base + 1`
   * through the LogStore, so a store that completes half-done commits while listing does so. When
   * the LogStore refused `base + 1` as taken but listing shows no such commit, the entry holding
   * the version cannot be repaired by listing, and retrying would only lose the same race again.
   */
  private def commitsSince(
      log: TableLog,
      base: Long,
      lost: DeltaLifecycleException
  ): Seq[Seq[Action]] = {
    val listing = log.listingFrom(base + 1)
    val newer = listing.commits.map(_.version).filter(_ > base)
    if (newer.isEmpty)
      throw ErrorConditions.commitNotVisible(table = log.tablePath.toString, version = base + 1)
    (base + 1 to newer.max).map { v =>
      listing.commit(v).map(c =>
        ActionReader.readJsonSelected(log.readFs, c.status, RebaseRelevantKeys)
      ).getOrElse(throw lost)
    }
  }

  val ConcurrentCommitCondition = "DELTA_LIFECYCLE_CONCURRENT_COMMIT"
  private val RebaseRelevantKeys = Set("protocol", "metaData", "add", "remove", "domainMetadata")

  /**
   * A commit that only adds files without deletion vectors: it changes no protocol, metadata or
   * domain, removes nothing and marks no row deleted, so a protocol or property change decided
   * before it holds after it too.
   */
  def isBlindAppend(actions: Seq[Action]): Boolean = actions.forall {
    case add: AddFile => add.deletionVector == null
    case _ => false // protocol, metaData, remove, domainMetadata: the only other kinds read
  }

  /** For commits that depend on nothing another commit can change (an empty commit). */
  val movesPastAnything: Seq[Action] => Boolean = _ => true

  // delta-spark stores each parameter as JSON; maps and lists as a JSON string of their JSON.
  private def jsonParameter(value: Any): String = value match {
    case _: scala.collection.Map[_, _] | _: Iterable[_] => JsonUtils.toJson(JsonUtils.toJson(value))
    case other => JsonUtils.toJson(other)
  }

  private def previousInCommitTimestamp(
      log: TableLog,
      listing: LogListing,
      version: Long
  ): Option[Long] =
    listing.commit(version).flatMap { c =>
      ActionReader.readJsonSelected(log.readFs, c.status, Set("commitInfo"))
        .collectFirst { case ci: CommitInfo => ci.inCommitTimestamp }.flatten
    }

  /** LogStores differ in which exception says "already there". */
  def alreadyExists(e: Throwable): Boolean = e match {
    case null => false
    case _: FileAlreadyExistsException | _: org.apache.hadoop.fs.FileAlreadyExistsException => true
    case other => alreadyExists(other.getCause)
  }
}
