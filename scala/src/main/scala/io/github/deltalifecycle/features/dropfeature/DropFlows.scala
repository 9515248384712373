package io.github.deltalifecycle.features.dropfeature

import io.github.deltalifecycle.core.{ErrorConditions, _}
import io.github.deltalifecycle.features.cleanup.LogCleanup
import io.github.deltalifecycle.features.dropfeature.DropPlan.Step
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.delta.{DeltaConfigs, Snapshot}
import org.apache.spark.sql.delta.actions.{DropTableFeatureUtils, Metadata}
import org.apache.spark.sql.delta.catalog.DeltaTableV2

/**
 * The three flows of a drop, each a [[DropPlan]] of [[DropSteps]]: the fast drop, the
 * history-truncating drop (its first run prepares and stops, its second truncates and downgrades),
 * and the removal of checkpointProtection itself.
 */
private[dropfeature] final class DropFlows(
    spark: SparkSession,
    log: TableLog,
    table: => DeltaTableV2,
    commits: DropCommits,
    displayName: String
) {
  import DropFeature.BarrierSize
  import DropFlows._
  import DropSteps.ProtectionKey

  private val files = new TableFileState(spark, log)
  private val steps = new DropSteps(log, table, commits, files)

  /** The flow that drops `feature` from the table as `head` and `snapshot` show it. */
  def planFor(
      feature: DroppableFeature,
      head: SnapshotHead,
      snapshot: Snapshot,
      truncateHistory: Boolean
  ): DropPlan =
    if (DroppableFeatures.isCheckpointProtection(feature)) {
      if (!truncateHistory) throw ErrorConditions.truncateHistoryRequired(feature.name)
      requireCatalogPermission(MaintenanceOperation.MetadataCleanup)
      checkpointProtectionDrop(head)
    } else {
      if (truncateHistory && !DroppableFeatures.needsBarrier(feature))
        throw ErrorConditions.InvalidArgument.truncateHistoryNotApplicable(feature.name)
      // Asked before anything is planned, so that DRY RUN reports the refusal the run would meet.
      if (truncateHistory) requireCatalogPermission(MaintenanceOperation.MetadataCleanup)
      val preparation = feature.preparation(new PreparationContext(table, spark, files, commits))
      val latest = files.at(snapshot)
      val planned = preparation.plan(latest)
      if (preparation.rewritesDataItself(planned)) steps.requireRewritePermission()
      if (!truncateHistory) fastDrop(feature, head, preparation, planned)
      // delta-spark's own check of the latest version decides whether preparation is due.
      else if (!feature.validateRemoval(table, latest))
        truncationPreparation(feature, head, preparation, planned)
      else historyTruncatingDrop(feature, head)
    }

  /** On a catalog-managed table: `operation` must be permitted by its catalog or administrator. */
  private def requireCatalogPermission(operation: MaintenanceOperation): Unit =
    log.catalog.foreach(_.requirePermission(displayName, operation))

  /**
   * The fast drop (the Checkpoint Protection RFC): prepare with delta-spark's pre-downgrade command
   * for the feature (disable it, rewrite what still uses it), write the barrier of protected
   * checkpoints, commit the protocol without the feature plus checkpointProtection and the
   * boundary, and checkpoint the new version. A writer feature needs no barrier.
   */
  private def fastDrop(
      feature: DroppableFeature,
      head: SnapshotHead,
      preparation: FeaturePreparation,
      planned: Seq[DropStep]
  ): DropPlan = {
    val barrier = DroppableFeatures.needsBarrier(feature)
    val downgradeVersion =
      head.version + planned.map(_.commits).sum + (if (barrier) BarrierSize else 0) + 1
    val downgradeReport =
      if (barrier) s"commit the protocol without ${feature.name}, with ${ProtectionFeature.name} " +
        s"and $ProtectionKey = $downgradeVersion"
      else s"commit the protocol without ${feature.name}"
    val flow =
      Seq(steps.prepare(head, preparation, planned, crashPoint = "dropFeature.afterPreparation")) ++
        Option.when(barrier)(steps.writeBarrier) ++
        Seq(steps.downgrade(
          feature,
          DropMode.Fast,
          protect = barrier,
          report = downgradeReport,
          crashPoint = Some("dropFeature.afterDowngrade")
        )) ++
        Option.when(barrier)(steps.checkpointDowngraded)
    DropPlan(
      feature,
      DropMode.Fast,
      head.version,
      flow,
      downgradeVersion = Some(downgradeVersion),
      protectedBefore =
        if (barrier) Some(downgradeVersion) else LogCleanup.protectedBefore(head),
      historyTruncatedBefore = None
    )
  }

  /**
   * The first run of a history-truncating drop ("Drop Delta table features"): prepare, checkpoint a
   * version without the feature for the retained history to start from, and stop until the
   * truncation retention has passed. The second run, the same command, is
   * [[historyTruncatingDrop]].
   */
  private def truncationPreparation(
      feature: DroppableFeature,
      head: SnapshotHead,
      preparation: FeaturePreparation,
      planned: Seq[DropStep]
  ): DropPlan = {
    val stop = Step(
      "stop until the truncation retention has passed",
      Seq(DropStep(s"stop: run the command again after ${retentionText(head.metadata)}", 0))
    ) { _ =>
      throw waitForRetention(
        feature,
        head,
        "the history still holds versions that use it",
        System.currentTimeMillis() + retentionMillis(head.metadata)
      )
    }
    DropPlan(
      feature,
      DropMode.TruncateHistory,
      head.version,
      Seq(
        steps.prepare(
          head,
          preparation,
          planned,
          crashPoint = "dropFeature.truncateHistory.afterPreparation"
        ),
        steps.checkpointOnEmptyCommit(
          "checkpoint a version without the feature",
          "write an empty commit with a checkpoint to start the retained history from"
        ),
        stop
      ),
      downgradeVersion = None,
      protectedBefore = LogCleanup.protectedBefore(head),
      historyTruncatedBefore = None
    )
  }

  /**
   * The history-truncating drop once no version it keeps needs the feature: checkpoint the latest
   * version, delete the history older than the truncation retention, check that what is left no
   * longer uses the feature, then downgrade without checkpoint protection.
   */
  private def historyTruncatingDrop(feature: DroppableFeature, head: SnapshotHead): DropPlan = {
    val retention = retentionMillis(head.metadata)
    val needsCheckpoint = log.listingFrom(head.version).checkpointsAt(head.version).isEmpty
    val downgradeVersion = head.version + (if (needsCheckpoint) 1 else 0) + 1
    val truncate = Step(
      "truncate history",
      Seq(DropStep(s"delete the history older than ${retentionText(head.metadata)}", 0))
    ) { _ =>
      LogCleanup.execute(log, LogCleanup.plan(log, Some(retention), System.currentTimeMillis()))
      FaultInjection.step("dropFeature.truncateHistory.afterCleanup")
    }
    DropPlan(
      feature,
      DropMode.TruncateHistory,
      head.version,
      Option.when(needsCheckpoint)(steps.checkpointOnEmptyCommit(
        "checkpoint the latest version",
        "write an empty commit with a checkpoint to start the retained history from"
      )).toSeq ++ Seq(
        truncate,
        checkRetainedHistory(feature, head, retention),
        steps.downgrade(
          feature,
          DropMode.TruncateHistory,
          protect = false,
          report = s"commit the protocol without ${feature.name}",
          crashPoint = Some("dropFeature.truncateHistory.afterDowngrade")
        ),
        steps.checkpointDowngraded
      ),
      downgradeVersion = Some(downgradeVersion),
      protectedBefore = LogCleanup.protectedBefore(head),
      historyTruncatedBefore =
        LogCleanup.plan(log, Some(retention), System.currentTimeMillis()).cutoffCheckpoint
    )
  }

  /** The step that stops a history-truncating drop while retained versions still use `feature`. */
  private def checkRetainedHistory(
      feature: DroppableFeature,
      head: SnapshotHead,
      retention: Long
  ): Step = Step(
    s"check the retained history for ${feature.name}",
    Seq(DropStep(s"check that no retained version uses ${feature.name}", 0))
  ) { _ =>
    if (feature.historyContainsFeature(spark, table, table.update())) {
      // Ready once the newest checkpoint, where the next truncation cuts, is old enough.
      val readyAt = latestCheckpointCommitTime().getOrElse(System.currentTimeMillis())
      throw waitForRetention(feature, head, "retained versions still use it", readyAt + retention)
    }
  }

  /**
   * checkpointProtection goes with everything before its boundary, in one pass (the Checkpoint
   * Protection RFC, writer rule c): a checkpoint at or after the boundary must exist and be older
   * than the truncation retention, then the cleanup cuts there and the downgrade removes feature
   * and property.
   */
  private def checkpointProtectionDrop(head: SnapshotHead): DropPlan = {
    val boundary = LogCleanup.protectedBefore(head).getOrElse(0L)
    val listing = log.listing()
    val truncated = listing.commits.forall(_.version >= boundary) &&
      listing.checkpoints.forall(_.version >= boundary)
    val needsCheckpoint = !truncated && listing.checkpoints.forall(_.version < boundary)
    val downgradeVersion = head.version + (if (needsCheckpoint) 1 else 0) + 1
    DropPlan(
      ProtectionFeature,
      DropMode.TruncateHistory,
      head.version,
      Option.when(needsCheckpoint)(steps.checkpointOnEmptyCommit(
        s"checkpoint a version at or after $boundary",
        s"write an empty commit with a checkpoint at or after version $boundary"
      )).toSeq ++
        Option.when(!truncated)(truncateBeforeBoundary(head, boundary)) ++
        Seq(
          steps.downgrade(
            ProtectionFeature,
            DropMode.TruncateHistory,
            protect = false,
            report =
              s"commit the protocol without ${ProtectionFeature.name} and unset $ProtectionKey",
            crashPoint = None
          ),
          steps.checkpointDowngraded
        ),
      downgradeVersion = Some(downgradeVersion),
      protectedBefore = None,
      historyTruncatedBefore = Some(boundary)
    )
  }

  /**
   * The step that deletes the history before checkpointProtection's `boundary`, in one pass, once
   * the versions from the boundary on are older than the truncation retention.
   */
  private def truncateBeforeBoundary(head: SnapshotHead, boundary: Long): Step = Step(
    s"delete the history before version $boundary",
    Seq(DropStep(s"delete every log file before version $boundary in one pass", 0))
  ) { _ =>
    val retention = retentionMillis(head.metadata)
    val plan = LogCleanup.plan(log, Some(retention), System.currentTimeMillis())
    if (plan.cutoffCheckpoint.forall(_ < boundary)) {
      val listing = log.listing()
      val first = listing.checkpoints.find(_.version >= boundary).fold(boundary)(_.version)
      val readyAt = listing.commit(first).fold(System.currentTimeMillis())(
        _.status.getModificationTime
      ) + retention
      throw waitForRetention(
        ProtectionFeature,
        head,
        s"the versions from $boundary on are younger than the truncation retention, " +
          "so the history before them cannot go yet",
        readyAt
      )
    }
    LogCleanup.execute(log, plan)
  }

  private def waitForRetention(
      feature: DroppableFeature,
      head: SnapshotHead,
      why: String,
      readyAtMillis: Long
  ): DeltaLifecycleException = DropFeatureErrors.waitForRetention(
    feature.name,
    why,
    readyAtMillis,
    retentionText(head.metadata),
    truncateHistoryCommand(feature)
  )

  private def latestCheckpointCommitTime(): Option[Long] = {
    val listing = log.tailListing()
    listing.checkpoints.lastOption.flatMap(c => listing.commit(c.version)).map(
      _.status.getModificationTime
    )
  }

  private def truncateHistoryCommand(feature: DroppableFeature): String =
    s"ALTER TABLE $displayName DROP FEATURE ${feature.name} TRUNCATE HISTORY"
}

private[dropfeature] object DropFlows {

  private lazy val ProtectionFeature =
    DroppableFeatures.Features.find(DroppableFeatures.isCheckpointProtection).get
  private val TruncationRetention = DeltaConfigs.TABLE_FEATURE_DROP_TRUNCATE_HISTORY_LOG_RETENTION

  private def retentionMillis(metadata: Metadata): Long =
    DropTableFeatureUtils.truncateHistoryLogRetentionMillis(metadata)

  private def retentionText(metadata: Metadata): String =
    metadata.configuration.getOrElse(TruncationRetention.key, TruncationRetention.defaultValue)
}
