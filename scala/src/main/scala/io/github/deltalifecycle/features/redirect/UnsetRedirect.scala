package io.github.deltalifecycle.features.redirect

import io.github.deltalifecycle.sql.routing.Router
import io.github.deltalifecycle.core.{
  DeltaLifecycleException,
  DeltaState,
  ErrorConditions,
  FaultInjection,
  IncrementalCheckpoint,
  LogCommitter,
  Progress,
  TableLog
}
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.delta.catalog.DeltaTableV2

/**
 * The RFC's disable procedure, and the cancel of an unfinished enable.
 *
 * From READY: READY -> DROP-REDIRECT-IN-PROGRESS on the source, then the destination marks itself
 * (writer-only feature, role DESTINATION), so every client stops writing either table; the data
 * files written at the destination are copied back and each destination commit since the redirect
 * is replayed on the source, in order ([[DestinationReplay]]); the last commit takes the
 * destination's protocol and metadata without the redirect (-> NORMAL), and a checkpoint follows
 * it. Stock clients read the source again, and it holds every row. Each step is recorded in the
 * logs themselves, so a re-run after a crash continues from the first step not yet done.
 *
 * From ENABLE-REDIRECT-IN-PROGRESS: one commit back to NORMAL with the protocol the table had
 * before; whatever was copied to the destination stays there (reported) for the user to delete.
 */
final class UnsetRedirect(
    spark: SparkSession,
    ctx: RoutingContext,
    sourcePath: Path,
    displayName: String
) {
  private val log = TableLog.forPath(ctx.hadoopConf(sourcePath), sourcePath)
  private val destinationReplay = new DestinationReplay(ctx, log, displayName)

  def run(): RedirectResult = {
    val info = fresh(sourcePath, displayName)
    info.requireDirectCommits(displayName, "unset the redirect of")
    info.config match {
      case None => throw ErrorConditions.RedirectState.notRedirected(displayName)
      case Some(c) if c.isDestinationMarker =>
        throw ErrorConditions.RedirectState.isDestination(
          table = displayName,
          source = c.spec.describe
        )
      case Some(c) if c.state == RedirectState.EnableInProgress => cancel(info, c)
      case Some(c) => drop(info, c)
    }
  }

  /**
   * DRY RUN: what [[run]] would do, writing nothing in either location: the checks (reported, not
   * raised), the data files the copy back would copy (forecast by the jobs that would list them,
   * with one look-up per file at the source) and the destination commits it would replay.
   */
  def plan(): RedirectPlan = {
    val info = fresh(sourcePath, displayName)
    val refusals = new RefusalCollector
    refusals.check(info.requireDirectCommits(displayName, "unset the redirect of"))
    def planned(steps: Seq[String]) =
      RedirectPlan.of(ctx, displayName, info, info.config.map(_.spec), refusals.result, steps)
    info.config match {
      case None =>
        refusals.add(ErrorConditions.RedirectState.notRedirected(displayName))
        planned(Nil)
      case Some(c) if c.isDestinationMarker =>
        refusals.add(ErrorConditions.RedirectState.isDestination(
          table = displayName,
          source = c.spec.describe
        ))
        planned(Nil)
      case Some(c) if c.state == RedirectState.EnableInProgress =>
        planned(Seq(
          "commit ENABLE-REDIRECT-IN-PROGRESS -> NORMAL (cancel the unfinished redirect)",
          s"leave the files already copied to ${c.spec.describe} in place"
        ))
      case Some(c) => planDrop(info, c, refusals, planned)
    }
  }

  /** The plan of a drop from READY (or of its resumption from DROP-REDIRECT-IN-PROGRESS). */
  private def planDrop(
      info: RedirectInfo,
      c: RedirectConfig,
      refusals: RefusalCollector,
      planned: Seq[String] => RedirectPlan
  ): RedirectPlan = {
    val destPath = Router.destinationPath(ctx, displayName, c.spec)
    val destInfo =
      try fresh(destPath, destPath.toString)
      catch { case e: DeltaLifecycleException => refusals.add(e); return planned(Nil) }
    refusals.check(
      destInfo.requireDirectCommits(
        destPath.toString,
        s"bring the redirect of $displayName back from"
      )
    )
    val lastDestinationData = destInfo.config match {
      case None => destInfo.version
      case Some(d) if Router.marksDestinationOf(ctx, d, destPath, log.tablePath) =>
        RedirectLookup.versionBeforeRedirect(ctx.hadoopConf(destInfo.path), destInfo)
      case Some(_) =>
        refusals.add(RedirectErrors.redirectChain(Seq(
          log.tablePath.toString,
          destPath.toString,
          "..."
        )))
        destInfo.version
    }
    val after =
      RedirectLookup.versionBeforeRedirect(
        ctx.hadoopConf(info.path),
        info,
        dataChangesAllowed = true
      )
    val replayFrom = destinationReplay.lastReplayed(after).getOrElse(after) + 1
    Progress.run(spark, s"UNSET REDIRECT DRY RUN on $displayName", 1) { progress =>
      progress.start(s"list the data files written at $destPath, and look them up at the source")
      val data = tableCopy(destPath, progress).forecastReferenced(
        destPath,
        sourcePath,
        TableLog.forPath(ctx.hadoopConf(destPath), destPath).listing(),
        lastDestinationData,
        after = Some(after)
      )
      val entering =
        if (c.state == RedirectState.Ready) "commit READY -> DROP-REDIRECT-IN-PROGRESS"
        else "resume: the source is already DROP-REDIRECT-IN-PROGRESS"
      planned(Seq(
        entering,
        s"mark $destPath read-only (DROP-REDIRECT-IN-PROGRESS)",
        s"copy back ${data.files} data files (${TableCopy.humanBytes(data.bytes)}, " +
          s"${data.route.mode.name}, ${data.tasks} tasks; ${data.filesAlreadyThere} already there)",
        s"replay ${math.max(0L, lastDestinationData - replayFrom + 1)} destination commits " +
          s"(versions $replayFrom to $lastDestinationData) on the source",
        "commit DROP-REDIRECT-IN-PROGRESS -> NORMAL",
        "checkpoint the source"
      )).withCopy(data, None)
    }
  }

  private def cancel(info: RedirectInfo, c: RedirectConfig): RedirectResult = {
    val version = Progress.run(spark, s"UNSET REDIRECT on $displayName", 1) { progress =>
      progress.start("cancel the unfinished redirect")
      val before = RedirectLookup.versionBeforeRedirect(ctx.hadoopConf(info.path), info)
      val (protocolBefore, _) = log.protocolAndMetadataAt(before, log.listingFor(before))
      LogCommitter.commit(
        log,
        info.version,
        Seq(protocolBefore, RedirectProtocol.withoutProperty(info.metadata)),
        "UNSET REDIRECT",
        Map("state" -> RedirectState.Normal, "cancelled" -> true)
      )
    }
    describe(fresh(sourcePath, displayName)).copy(
      commitVersions = Seq(version),
      steps = Seq(
        s"committed version $version: ENABLE-REDIRECT-IN-PROGRESS -> NORMAL (cancelled)",
        s"files already copied to ${c.spec.describe} were left in place; " +
          "delete them if you do not need them"
      )
    )
  }

  private def drop(initial: RedirectInfo, c: RedirectConfig): RedirectResult = {
    val report = new ProcedureReport
    val dropping = c.withState(RedirectState.DropInProgress)
    val destPath = Router.destinationPath(ctx, displayName, c.spec)
    // The destination gets a marker commit, and its protocol and metadata come back to the source.
    RedirectLookup.read(ctx.hadoopConf(destPath), destPath).foreach(
      _.requireDirectCommits(destPath.toString, s"bring the redirect of $displayName back from")
    )

    val copied = Progress.run(spark, s"UNSET REDIRECT on $displayName", 6) { progress =>
      progress.start("enter DROP-REDIRECT-IN-PROGRESS on the source")
      val source = enterDropInProgress(initial, dropping, report)
      // Versions up to here are the source's own, shared by both logs; later destination
      // versions were written at the destination.
      val redirectedAfter =
        RedirectLookup.versionBeforeRedirect(
          ctx.hadoopConf(source.path),
          source,
          dataChangesAllowed = true
        )
      FaultInjection.step("unsetRedirect.afterSourceDrop")

      progress.start("mark the destination")
      val lastDestinationData = markDestination(destPath, report)
      FaultInjection.step("unsetRedirect.afterDestinationMark")

      progress.start("copy back the data written at the destination")
      val filesCopied =
        copyBack(destPath, redirectedAfter, lastDestinationData, progress, report)
      FaultInjection.step("unsetRedirect.afterDataCopy")

      progress.start("replay the destination's commits on the source")
      destinationReplay.replay(
        source,
        destPath,
        redirectedAfter,
        lastDestinationData,
        dropping,
        report
      )

      progress.start("leave DROP-REDIRECT-IN-PROGRESS: the source is NORMAL")
      leaveDropInProgress(destPath, lastDestinationData, report)

      progress.start("checkpoint the source")
      checkpoint(report)
      filesCopied
    }
    report.result(describe(fresh(sourcePath, displayName)), copied)
  }

  /**
   * READY -> DROP-REDIRECT-IN-PROGRESS on the source, or nothing when an earlier run got that far.
   * Returns the source as it now is.
   */
  private def enterDropInProgress(
      info: RedirectInfo,
      dropping: RedirectConfig,
      report: ProcedureReport
  ): RedirectInfo =
    if (info.config.exists(_.state == RedirectState.Ready)) {
      val v = LogCommitter.commit(
        log,
        info.version,
        Seq(RedirectProtocol.withProperty(info.metadata, dropping)),
        "UNSET REDIRECT",
        Map("state" -> dropping.state.name)
      )
      report.committed(v)
      report.note(s"committed version $v on the source: READY -> DROP-REDIRECT-IN-PROGRESS")
      fresh(sourcePath, displayName)
    } else {
      report.note("resuming: the source is already DROP-REDIRECT-IN-PROGRESS")
      info
    }

  /**
   * Marks the destination read-only (writer-only feature, role DESTINATION, pointing back at the
   * source), or finds it marked by an earlier run. Returns the destination's last version written
   * while it was the destination: the one before the marker.
   */
  private def markDestination(destPath: Path, report: ProcedureReport): Long = {
    val destInfo = fresh(destPath, destPath.toString)
    destInfo.config match {
      case None =>
        val marker = RedirectConfig(
          RedirectMode.WriterOnly,
          RedirectConfig.ObjectStoreType,
          RedirectState.DropInProgress,
          RedirectSpec.Location(log.tablePath.toString),
          Nil,
          isDestinationMarker = true
        )
        val v = LogCommitter.commitRebasing(
          TableLog.forPath(ctx.hadoopConf(destPath), destPath),
          destInfo.version,
          "UNSET REDIRECT",
          Map("state" -> marker.state.name, "role" -> "destination")
        )(_ =>
          Seq(
            RedirectProtocol.withFeature(destInfo.protocol, RedirectMode.WriterOnly),
            RedirectProtocol.withProperty(destInfo.metadata, marker)
          )
        )
        report.note(
          s"committed version $v on the destination: marked read-only (DROP-REDIRECT-IN-PROGRESS)"
        )
        v - 1
      case Some(d) if Router.marksDestinationOf(ctx, d, destPath, log.tablePath) =>
        report.note("resuming: the destination is already marked")
        RedirectLookup.versionBeforeRedirect(ctx.hadoopConf(destInfo.path), destInfo)
      case Some(_) =>
        throw RedirectErrors.redirectChain(Seq(log.tablePath.toString, destPath.toString, "..."))
    }
  }

  /**
   * Copies back the files that destination versions after `after`, up to `upTo`, reference: what
   * was written at the destination. Older files are the source's own and still there.
   */
  private def copyBack(
      destPath: Path,
      after: Long,
      upTo: Long,
      progress: Progress,
      report: ProcedureReport
  ): CopyStats = {
    val destLog = TableLog.forPath(ctx.hadoopConf(destPath), destPath)
    val stats = tableCopy(destPath, progress).copyReferenced(
      destLog.tablePath,
      sourcePath,
      destLog.listing(),
      upTo,
      "unsetRedirect.midDataCopy",
      after = Some(after)
    )
    report.note(
      s"copied ${stats.filesCopied} data files (${stats.bytesCopied} bytes) back " +
        s"(${stats.route.fold("")(_.describe)}); ${stats.filesAlreadyThere} were already there"
    )
    stats
  }

  /** The copy back, in the job group of the destination table's id. */
  private def tableCopy(destPath: Path, progress: Progress): TableCopy = new TableCopy(
    spark,
    ctx.storage,
    progress,
    TableCopy.jobGroupId(RedirectLookup.read(ctx.hadoopConf(destPath), destPath).fold("unknown")(
      _.metadata.id
    )),
    s"UNSET REDIRECT on $displayName"
  )

  /**
   * DROP-REDIRECT-IN-PROGRESS -> NORMAL: the source takes the destination's protocol and metadata
   * without the redirect.
   */
  private def leaveDropInProgress(
      destPath: Path,
      lastDestinationData: Long,
      report: ProcedureReport
  ): Unit = {
    val destLog = TableLog.forPath(ctx.hadoopConf(destPath), destPath)
    val (destProtocol, destMetadata) =
      destLog.protocolAndMetadataAt(lastDestinationData, destLog.listingFor(lastDestinationData))
    val v = LogCommitter.commit(
      log,
      fresh(sourcePath, displayName).version,
      Seq(
        RedirectProtocol.withoutFeatures(destProtocol),
        RedirectProtocol.withoutProperty(destMetadata)
      ),
      "UNSET REDIRECT",
      Map("state" -> RedirectState.Normal)
    )
    report.committed(v)
    report.note(s"committed version $v on the source: DROP-REDIRECT-IN-PROGRESS -> NORMAL")
  }

  /**
   * A checkpoint of the source once it is NORMAL again, so readers start from it rather than replay
   * every commit copied back. A crash before it loses nothing: the table is already back.
   */
  private def checkpoint(report: ProcedureReport): Unit = {
    val options = ctx.storage.options(sourcePath)
    val log = TableLog.forPath(ctx.hadoopConf(sourcePath), sourcePath, options)
    val listing = log.tailListing()
    val checkpoint =
      IncrementalCheckpoint.attempt(spark, log, listing, listing.latestVersion, () => ())
        .fold(
          _ => DeltaState.checkpointLatest(DeltaTableV2(spark, sourcePath, options = options), log),
          _.checkpoint
        )
    report.note(s"checkpointed the source at version ${checkpoint.version}")
  }

  private def describe(info: RedirectInfo): RedirectResult =
    RedirectResult.describe(ctx, displayName, info)

  private def fresh(path: Path, name: String): RedirectInfo =
    RedirectLookup.read(
      ctx.hadoopConf(path),
      path
    ).getOrElse(throw ErrorConditions.notADeltaTable(
      path = path.toString,
      reason = s"$name has no Delta log"
    ))
}
