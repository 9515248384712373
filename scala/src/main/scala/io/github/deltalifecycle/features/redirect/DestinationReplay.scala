package io.github.deltalifecycle.features.redirect

import io.github.deltalifecycle.core.{
  ActionReader,
  ErrorConditions,
  FaultInjection,
  LogCommitter,
  TableLog
}
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.delta.actions.{Action, CommitInfo, Metadata, Protocol}

/**
 * UNSET REDIRECT's replay of the destination's commits on the source `log` (the table
 * `displayName`): each one written while the table was redirected is committed again on the source,
 * in order, as a commit that names the destination version it replays, so a re-run after a crash
 * skips those an earlier run replayed.
 */
private[redirect] final class DestinationReplay(
    ctx: RoutingContext,
    log: TableLog,
    displayName: String
) {
  import DestinationReplay._

  /**
   * Commits, in order, each destination commit up to `lastDestinationData` that an earlier run did
   * not replay, as a source commit that keeps the source DROP-REDIRECT-IN-PROGRESS.
   *
   * The cost is linear in the commits replayed: the destination's log is listed once and each of
   * its commits read once; the source's state is read once, and each replayed commit's protocol and
   * metadata are carried to the next ([[LogCommitter.commitAfter]]) instead of read back.
   */
  def replay(
      source: RedirectInfo,
      destPath: Path,
      boundary: Long,
      lastDestinationData: Long,
      dropping: RedirectConfig,
      report: ProcedureReport
  ): Unit = {
    val replayedUpTo = lastReplayed(boundary).getOrElse(boundary)
    val destLog = TableLog.forPath(ctx.hadoopConf(destPath), destPath)
    val destListing = destLog.listing()
    var base = Option.empty[LogCommitter.CommitBase]
    for (k <- replayedUpTo + 1 to lastDestinationData) {
      val commit = destListing.commit(k).getOrElse(
        throw ErrorConditions.RedirectState.destinationCommitMissing(
          table = displayName,
          destination = destPath.toString,
          version = k
        )
      )
      val actions = ActionReader.readJson(destLog.readFs, commit.status)
      val operation =
        actions.collectFirst { case ci: CommitInfo => ci.operation }.getOrElse("UNKNOWN")
      val carried: Seq[Action] = actions.flatMap {
        case _: CommitInfo => None
        case p: Protocol => Some(RedirectProtocol.withFeature(p, dropping.mode))
        case m: Metadata => Some(RedirectProtocol.withProperty(m, dropping))
        case other => Some(other)
      }
      val written = LogCommitter.commitAfter(
        log,
        base.getOrElse(LogCommitter.baseAt(log, source.version)),
        carried,
        CopyBackOperation,
        Map(DestinationVersionKey -> k, "destinationOperation" -> operation)
      )
      base = Some(written)
      report.committed(written.readVersion)
      FaultInjection.step(s"unsetRedirect.afterReplay.$k")
    }
    if (lastDestinationData > replayedUpTo) {
      report.note(
        s"replayed destination versions ${replayedUpTo + 1} to $lastDestinationData on the source"
      )
    }
  }

  /** The newest destination version an earlier, interrupted run already replayed on the source. */
  def lastReplayed(boundary: Long): Option[Long] = {
    val listing = log.listingFrom(boundary + 1)
    (boundary + 1 to listing.latestVersion).flatMap { v =>
      listing.commit(v).toSeq.flatMap(c =>
        ActionReader.readJsonSelected(log.readFs, c.status, Set("commitInfo"))
      )
        .collect {
          case ci: CommitInfo if ci.operation == CopyBackOperation =>
            ci.operationParameters.get(DestinationVersionKey)
        }
        .flatten.map(_.toLong)
    }.lastOption
  }
}

object DestinationReplay {

  /** The operation of a commit that replays a destination commit on the source. */
  val CopyBackOperation = "REDIRECT COPY BACK"

  /** Its parameter naming the destination version it replays, so a re-run skips it. */
  val DestinationVersionKey = "redirectDestinationVersion"
}
