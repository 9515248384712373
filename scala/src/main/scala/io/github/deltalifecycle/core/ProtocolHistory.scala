package io.github.deltalifecycle.core

import scala.util.control.NonFatal

import org.apache.spark.sql.delta.DeltaConfigs
import org.apache.spark.sql.delta.actions.{Action, CommitInfo, Metadata, Protocol}

/** The protocol in force at one version, with what the log holds for that version. */
final case class ProtocolVersionInfo(
    version: Long,
    timestampMillis: Option[Long],
    operation: Option[String],
    protocol: Protocol,
    checkpointKinds: Seq[CheckpointKind],
    compactions: Seq[String],
    requireCheckpointProtectionBeforeVersion: Option[Long]
)

object ProtocolHistory {
  val ProtectionProperty: String = DeltaConfigs.REQUIRE_CHECKPOINT_PROTECTION_BEFORE_VERSION.key

  private val historyActions = Set("protocol", "metaData", "commitInfo")

  /**
   * One entry per retained version, oldest first, in a single streaming pass: the oldest
   * reconstructable version's protocol and metadata come from its checkpoint (only those two
   * columns are read), later versions apply the protocol, metaData and commitInfo lines of each
   * commit. Memory holds one prefetch window of commits, not the history.
   */
  def scan(log: TableLog): Iterator[ProtocolVersionInfo] = {
    val listing = log.listing()
    val latest = listing.latestVersion
    val (start, initial) = startingState(log, listing)
    requireStateInCheckpoints(log, listing, from = start)
    var protocol: Protocol = initial.map(_._1).orNull
    var metadata: Metadata = initial.map(_._2).orNull

    val versions = (start to latest).iterator
    val commitsRead = OrderedPrefetch.map(versions) { v =>
      v -> listing.commit(v).map(c =>
        ActionReader.readJsonSelected(log.readFs, c.status, historyActions)
      )
    }
    commitsRead.map { case (v, actions) =>
      val commitActions = actions.getOrElse(Vector.empty[Action])
      // At a checkpoint base the checkpoint already holds the state as of v.
      if (initial.isEmpty || v > start) {
        commitActions.foreach {
          case p: Protocol => protocol = p
          case m: Metadata => metadata = m
          case _ =>
        }
      }
      if (protocol == null) {
        throw LogErrors.invalidProtocol(
          v,
          "no protocol action is found in the log up to this version"
        )
      }
      if (metadata == null) {
        throw ErrorConditions.corruptLog(
          file = listing.logPath.toString,
          reason = s"no metaData action is found in the log up to version $v"
        )
      }
      ProtocolChecks.validate(protocol, v)
      val commitInfo = commitActions.collectFirst { case c: CommitInfo => c }
      val fileTime = listing.commit(v).map(_.status.getModificationTime)
        .orElse(listing.checkpointsAt(v).headOption.map(_.files.head.status.getModificationTime))
      ProtocolVersionInfo(
        version = v,
        timestampMillis = commitInfo.flatMap(_.inCommitTimestamp).orElse(fileTime),
        operation = commitInfo.map(_.operation).filter(_ != null),
        protocol = protocol,
        checkpointKinds = listing.checkpointsAt(v).map(_.kind).distinct,
        compactions = listing.compactionsCovering(v).map(_.name),
        requireCheckpointProtectionBeforeVersion =
          Option(metadata).flatMap(_.configuration.get(ProtectionProperty)).flatMap(_.toLongOption)
      )
    }
  }

  /**
   * Every checkpoint from version `from` holds the protocol and metadata of its version, as a
   * reader that starts from it needs: a history rebuilt from the commits alone would otherwise
   * report a state those readers cannot rebuild (delta-spark refuses such a table). Each checkpoint
   * is read only until both are found, which a checkpoint writer puts first.
   */
  private def requireStateInCheckpoints(log: TableLog, listing: LogListing, from: Long): Unit =
    listing.checkpoints.filter(_.version >= from).foreach { checkpoint =>
      var (hasProtocol, hasMetadata) = (false, false)
      // A checkpoint that cannot be read at all is one readers skip, falling back to an older
      // one or the commits (TableLog); only one that reads without its state misleads them.
      val readable =
        try {
          val actions = log.readCheckpoint(checkpoint, Set("protocol", "metaData"))
          while (actions.hasNext && !(hasProtocol && hasMetadata)) actions.next() match {
            case _: Protocol => hasProtocol = true
            case _: Metadata => hasMetadata = true
            case _ =>
          }
          true
        } catch { case NonFatal(e) if !e.isInstanceOf[DeltaLifecycleException] => false }
      if (readable && (!hasProtocol || !hasMetadata)) {
        val missing = Seq("protocol" -> hasProtocol, "metaData" -> hasMetadata)
          .collect { case (name, false) => name }.mkString(" and ")
        throw ErrorConditions.corruptLog(
          file = checkpoint.description,
          reason =
            s"the checkpoint of version ${checkpoint.version} holds no $missing action, so a " +
              "reader that starts from it cannot rebuild that version"
        )
      }
    }

  /**
   * Where the history starts: version 0 when every commit from 0 is retained, otherwise the oldest
   * checkpoint that is followed by an unbroken run of commits and reads cleanly.
   */
  private def startingState(
      log: TableLog,
      listing: LogListing
  ): (Long, Option[(Protocol, Metadata)]) = {
    val earliest = listing.earliestReconstructableVersion
    if (earliest == 0 && listing.commit(0).isDefined) return (0L, None)
    val candidates = listing.checkpoints.filter(c => c.version >= earliest)
    var lastError: Throwable = null
    for (checkpoint <- candidates) {
      try {
        val actions = log.readCheckpoint(checkpoint, Set("protocol", "metaData")).toVector
        val p = actions.collectFirst { case p: Protocol => p }
        val m = actions.collectFirst { case m: Metadata => m }
        if (p.isDefined && m.isDefined) return (checkpoint.version, Some((p.get, m.get)))
        lastError = new IllegalStateException("it holds no protocol or no metaData action")
      } catch {
        case NonFatal(e) => lastError = e
      }
    }
    throw LogErrors.unreadableCheckpoint(
      candidates.headOption.map(_.description).getOrElse(listing.logPath.toString),
      lastError
    )
  }
}
