package io.github.deltalifecycle.features.redirect

import io.github.deltalifecycle.core.{
  ActionReader,
  FaultInjection,
  LifecycleErrors,
  LogCommitter,
  Progress,
  TableLog
}
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.delta.actions.{Action, CommitInfo, Metadata, Protocol}
import org.apache.spark.sql.delta.storage.LogStore

/**
 * The RFC's disable procedure, and the cancel of an unfinished enable.
 *
 * From READY: READY -> DROP-REDIRECT-IN-PROGRESS on the source, then the destination marks itself
 * (writer-only feature, role DESTINATION), so every client stops writing either table; the data
 * files written at the destination are copied back and each destination commit since the redirect
 * is replayed on the source, in order; the last commit takes the destination's protocol and
 * metadata without the redirect (-> NORMAL). Stock clients read the source again, and it holds
 * every row. Each step is recorded in the logs themselves, so a re-run after a crash continues from
 * the first step not yet done.
 *
 * From ENABLE-REDIRECT-IN-PROGRESS: one commit back to NORMAL with the protocol the table had
 * before; whatever was copied to the destination stays there (reported) for the user to delete.
 */
final class UnsetRedirect(
    spark: SparkSession,
    ctx: RoutingContext,
    sourcePath: Path,
    displayName: String,
    copyThreads: Int
) {
  private lazy val store = LogStore(spark)
  import UnsetRedirect._
  private val log = TableLog.forPath(ctx.hadoopConf, sourcePath)

  def run(): RedirectResult = {
    val info = fresh(sourcePath, displayName)
    info.config match {
      case None => throw LifecycleErrors.redirectState(
          displayName,
          "it has no redirect; there is nothing to unset"
        )
      case Some(c) if c.isDestinationMarker =>
        throw LifecycleErrors.redirectState(
          displayName,
          s"it is the destination of a redirect from ${c.spec.describe}; run UNSET REDIRECT on that table"
        )
      case Some(c) if c.state == RedirectState.EnableInProgress => cancel(info, c)
      case Some(c) => drop(info, c)
    }
  }

  private def cancel(info: RedirectInfo, c: RedirectConfig): RedirectResult = {
    val progress = new Progress(spark, s"UNSET REDIRECT on $displayName", 1)
    progress.start("cancel the unfinished redirect")
    val before = RedirectLookup.versionBeforeRedirect(ctx.hadoopConf, info)
    val (protocolBefore, _) = log.protocolAndMetadataAt(before, log.listing())
    val version = LogCommitter.commit(
      log,
      store,
      info.version,
      Seq(protocolBefore, RedirectProtocol.withoutProperty(info.metadata)),
      "UNSET REDIRECT",
      Map("state" -> RedirectState.Normal, "cancelled" -> true)
    )
    progress.done()
    RedirectResult.describe(displayName, fresh(sourcePath, displayName)).copy(
      commitVersions = Seq(version),
      steps = Seq(
        s"committed version $version: ENABLE-REDIRECT-IN-PROGRESS -> NORMAL (cancelled)",
        s"files already copied to ${c.spec.describe} were left in place; delete them if you do not need them"
      )
    )
  }

  private def drop(initial: RedirectInfo, c: RedirectConfig): RedirectResult = {
    val progress = new Progress(spark, s"UNSET REDIRECT on $displayName", 4)
    val commits = Vector.newBuilder[Long]
    val steps = Vector.newBuilder[String]
    val dropping = c.withState(RedirectState.DropInProgress)

    progress.start("enter DROP-REDIRECT-IN-PROGRESS on the source")
    var info = initial
    if (c.state == RedirectState.Ready) {
      val v = LogCommitter.commit(
        log,
        store,
        info.version,
        Seq(RedirectProtocol.withProperty(info.metadata, dropping)),
        "UNSET REDIRECT",
        Map("state" -> dropping.state.name)
      )
      commits += v
      steps += s"committed version $v on the source: READY -> DROP-REDIRECT-IN-PROGRESS"
      info = fresh(sourcePath, displayName)
    } else steps += "resuming: the source is already DROP-REDIRECT-IN-PROGRESS"
    FaultInjection.step("unsetRedirect.afterSourceDrop")

    progress.start("mark the destination")
    val destPath = RedirectRouting.destinationPath(ctx, displayName, c.spec)
    val destLog = TableLog.forPath(ctx.hadoopConf, destPath)
    var destInfo = fresh(destPath, destPath.toString)
    val markerVersion = destInfo.config match {
      case None =>
        val marker = RedirectConfig(
          RedirectMode.WriterOnly,
          RedirectConfig.ObjectStoreType,
          RedirectState.DropInProgress,
          RedirectSpec.Location(log.tablePath.toString),
          Nil,
          isDestinationMarker = true
        )
        val mark = Seq(
          RedirectProtocol.withFeature(destInfo.protocol, RedirectMode.WriterOnly),
          RedirectProtocol.withProperty(destInfo.metadata, marker)
        )
        val v = LogCommitter.commitRebasing(
          destLog,
          store,
          destInfo.version,
          "UNSET REDIRECT",
          Map("state" -> marker.state.name, "role" -> "destination")
        )(_ => mark)
        steps +=
          s"committed version $v on the destination: marked read-only (DROP-REDIRECT-IN-PROGRESS)"
        destInfo = fresh(destPath, destPath.toString)
        v
      case Some(d)
          if d.isDestinationMarker && d.destinationLocation.exists(RedirectRouting.sameLocation(
            ctx,
            _,
            log.tablePath.toString
          )) =>
        steps += "resuming: the destination is already marked"
        RedirectLookup.versionBeforeRedirect(ctx.hadoopConf, destInfo) + 1
      case Some(_) =>
        throw LifecycleErrors.redirectChain(Seq(log.tablePath.toString, destPath.toString, "..."))
    }
    FaultInjection.step("unsetRedirect.afterDestinationMark")

    progress.start("copy back the data written at the destination")
    val copy = new TableCopy(ctx.hadoopConf, progress, copyThreads)
    val stats = copy.copy(destPath, sourcePath, copy.dataFiles(destPath), "data files")
    steps +=
      s"copied ${stats.filesCopied} data files (${stats.bytesCopied} bytes) back; ${stats.filesAlreadyThere} were already there"
    FaultInjection.step("unsetRedirect.afterDataCopy")

    progress.start("replay the destination's commits on the source")
    val boundary =
      RedirectLookup.versionBeforeRedirect(ctx.hadoopConf, info, dataChangesAllowed = true)
    val replayedUpTo = lastReplayed(boundary).getOrElse(boundary)
    val destListing = destLog.listing()
    val lastDestData = markerVersion - 1
    for (k <- replayedUpTo + 1 to lastDestData) {
      val commit = destListing.commit(k).getOrElse(throw LifecycleErrors.redirectState(
        displayName,
        s"the destination's commit $k is no longer in its log (cleaned up?), so its changes cannot be replayed; " +
          "copy the destination's files over the source by hand, or restore the commit"
      ))
      val actions = ActionReader.readJson(destLog.readFs, commit.status)
      val operation =
        actions.collectFirst { case ci: CommitInfo => ci.operation }.getOrElse("UNKNOWN")
      val carried: Seq[Action] = actions.flatMap {
        case _: CommitInfo => None
        case p: Protocol => Some(RedirectProtocol.withFeature(p, c.mode))
        case m: Metadata => Some(RedirectProtocol.withProperty(m, dropping))
        case other => Some(other)
      }
      val v = LogCommitter.commit(
        log,
        store,
        info.version,
        carried,
        CopyBackOperation,
        Map(DestinationVersionKey -> k, "destinationOperation" -> operation)
      )
      commits += v
      info = info.copy(version = v)
      FaultInjection.step(s"unsetRedirect.afterReplay.$k")
    }
    if (lastDestData > replayedUpTo) steps +=
      s"replayed destination versions ${replayedUpTo + 1} to $lastDestData on the source"

    progress.start("leave DROP-REDIRECT-IN-PROGRESS: the source is NORMAL")
    info = fresh(sourcePath, displayName)
    val (destProtocol, destMetadata) = destLog.protocolAndMetadataAt(lastDestData, destListing)
    val v = LogCommitter.commit(
      log,
      store,
      info.version,
      Seq(
        RedirectProtocol.withoutFeatures(destProtocol),
        RedirectProtocol.withoutProperty(destMetadata)
      ),
      "UNSET REDIRECT",
      Map("state" -> RedirectState.Normal)
    )
    commits += v
    steps += s"committed version $v on the source: DROP-REDIRECT-IN-PROGRESS -> NORMAL"
    progress.done()
    RedirectResult.describe(displayName, fresh(sourcePath, displayName)).copy(
      filesCopied = stats.filesCopied,
      bytesCopied = stats.bytesCopied,
      commitVersions = commits.result(),
      steps = steps.result()
    )
  }

  /** The newest destination version an earlier, interrupted run already replayed on the source. */
  private def lastReplayed(boundary: Long): Option[Long] = {
    val listing = log.listing()
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

  private def fresh(path: Path, name: String): RedirectInfo =
    RedirectLookup.read(
      ctx.hadoopConf,
      path
    ).getOrElse(throw LifecycleErrors.notADeltaTable(path.toString, s"$name has no Delta log"))
}

object UnsetRedirect {

  /** The operation of a commit that replays a destination commit on the source. */
  val CopyBackOperation = "REDIRECT COPY BACK"

  /** Its parameter naming the destination version it replays, so a re-run skips it. */
  val DestinationVersionKey = "redirectDestinationVersion"
}
