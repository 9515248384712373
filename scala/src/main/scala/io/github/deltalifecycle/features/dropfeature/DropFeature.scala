package io.github.deltalifecycle.features.dropfeature

import io.github.deltalifecycle.core._
import io.github.deltalifecycle.features.cleanup.LogCleanup
import io.github.deltalifecycle.features.dropfeature.DroppableFeatures.Droppable
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.catalog.CatalogTable
import org.apache.spark.sql.delta.{CheckpointProtectionTableFeature, DeltaOperations}
import org.apache.spark.sql.delta.actions.{AddFile, DropTableFeatureUtils, Metadata, RemoveFile}
import org.apache.spark.sql.delta.catalog.DeltaTableV2
import org.apache.spark.sql.delta.commands.DeltaRewriteTypeWideningOperation
import org.apache.spark.sql.delta.storage.LogStore
import org.apache.spark.sql.deltalifecycle.SparkInternals

/**
 * What a drop did, or (status `planned`) would do. Versions are those the drop wrote or, for a
 * plan, will write if no other writer commits meanwhile.
 *
 * @param protectedBefore
 *   `delta.requireCheckpointProtectionBeforeVersion` afterwards
 * @param readableWithoutFeatureFrom
 *   the first version a client without the feature can read
 * @param historyTruncatedBefore
 *   the earliest version left after truncating history
 */
final case class DropFeatureResult(
    feature: String,
    mode: String,
    status: String,
    steps: Seq[DropStep],
    filesRewritten: Long,
    bytesRewritten: Long,
    commitVersions: Seq[Long],
    checkpointVersions: Seq[Long],
    protectedBefore: Option[Long],
    readableWithoutFeatureFrom: Option[Long],
    historyTruncatedBefore: Option[Long]
)

/**
 * `ALTER TABLE t DROP FEATURE f [TRUNCATE HISTORY] [DRY RUN]`.
 *
 * The fast drop (seeds 000/001): prepare with delta-spark's pre-downgrade command for the feature
 * (disable it, rewrite what still uses it), write the barrier of protected checkpoints, commit the
 * protocol without the feature plus `checkpointProtection` and the boundary, and checkpoint the new
 * version. The history-truncating drop (seed 003): prepare, then wait out
 * `delta.dropFeatureTruncateHistory.retentionDuration`, truncate history and downgrade. Every step
 * is a commit of its own and each starts from the latest version, so a re-run after a crash or a
 * conflict carries on where the last run stopped.
 */
final class DropFeature(
    spark: SparkSession,
    tablePath: Path,
    catalogTable: Option[CatalogTable],
    displayName: String
) {
  import DropFeature._

  private val log = TableLog.forPath(SparkInternals.newHadoopConf(spark), tablePath)
  private lazy val store = LogStore(spark)
  private lazy val table = DeltaTableV2(spark, tablePath, catalogTable)

  def run(featureName: String, truncateHistory: Boolean, dryRun: Boolean): DropFeatureResult = {
    val feature = DroppableFeatures.lookup(featureName)
    val snapshot = log.latestSnapshot()
    if (!DroppableFeatures.isPresent(snapshot.protocol, feature))
      throw LifecycleErrors.featureNotPresent(feature.name, displayName, snapshot.version)
    val dependents = DroppableFeatures.dependents(snapshot.protocol, feature)
    if (dependents.nonEmpty) throw LifecycleErrors.dependentFeatures(feature.name, dependents)
    DroppableFeatures.checkDroppable(feature, snapshot)

    if (DroppableFeatures.isCheckpointProtection(feature)) {
      if (!truncateHistory) throw LifecycleErrors.truncateHistoryRequired(feature.name)
      dropCheckpointProtection(snapshot, dryRun)
    } else {
      if (truncateHistory && !DroppableFeatures.needsBarrier(feature))
        throw LifecycleErrors.truncateHistoryNotApplicable(feature.name)
      val preparation = DroppableFeatures.preparation(feature, snapshot, () => widenedFiles())
      if (truncateHistory) dropWithHistoryTruncation(feature, snapshot, preparation, dryRun)
      else dropFast(feature, snapshot, preparation, dryRun)
    }
  }

  // ---- fast drop ----------------------------------------------------------------------

  private def dropFast(
      feature: Droppable,
      snapshot: LogSnapshot,
      preparation: Seq[DropStep],
      dryRun: Boolean
  ): DropFeatureResult = {
    val barrier = DroppableFeatures.needsBarrier(feature)
    val start = snapshot.version
    val prepared = start + preparation.map(_.commits).sum
    val plannedDowngrade = prepared + (if (barrier) BarrierSize else 0) + 1
    val steps = preparation ++
      Option.when(barrier)(DropStep(
        s"write $BarrierSize empty commits, each with a checkpoint: the protected barrier",
        BarrierSize
      )) ++
      Seq(DropStep(downgradeDescription(feature, barrier, plannedDowngrade), 1)) ++
      Option.when(barrier)(DropStep("checkpoint the downgraded version", 0))

    if (dryRun) {
      val checkpoints =
        if (barrier) (prepared + 1 to prepared + BarrierSize) :+ plannedDowngrade else Nil
      return result(
        feature,
        Fast,
        Planned,
        steps,
        preparation.map(_.files).sum,
        preparation.map(_.bytes).sum,
        start + 1 to plannedDowngrade,
        checkpoints,
        protectedBefore = if (barrier) Some(plannedDowngrade)
        else LogCleanup.protectedBefore(snapshot.protocol, snapshot.metadata),
        readableFrom = readableWithoutFeatureFrom(feature, plannedDowngrade),
        truncatedBefore = None
      )
    }

    val progress = new Progress(spark, s"DROP FEATURE ${feature.name} on $displayName", steps.size)
    try {
      progress.start(s"prepare (${describe(preparation)})")
      feature.preDowngradeCommand(table).removeFeatureTracesIfNeeded(spark)
      FaultInjection.step("dropFeature.afterPreparation")
      val afterPreparation = log.listing().latestVersion
      val (files, bytes) = rewritten(snapshot, start, afterPreparation)

      val (_, barrierCheckpoints) =
        if (!barrier) (Nil, Nil)
        else {
          progress.start(s"write the barrier of $BarrierSize protected checkpoints")
          new BarrierCheckpoints(log, store, table, progress).write(BarrierSize)
        }
      progress.start("commit the downgraded protocol")
      val downgrade = commitDowngrade(feature, protect = barrier, truncateHistory = false)
      FaultInjection.step("dropFeature.afterDowngrade")
      val finalCheckpoint =
        if (!barrier) Nil
        else {
          progress.start("checkpoint the downgraded version")
          Seq(new BarrierCheckpoints(log, store, table, progress).checkpointLatest().version)
        }
      val after = log.latestSnapshot()
      result(
        feature,
        Fast,
        Dropped,
        steps,
        files,
        bytes,
        start + 1 to downgrade,
        barrierCheckpoints ++ finalCheckpoint,
        LogCleanup.protectedBefore(after.protocol, after.metadata),
        readableWithoutFeatureFrom(feature, downgrade),
        None
      )
    } finally progress.done()
  }

  private def downgradeDescription(feature: Droppable, barrier: Boolean, version: Long): String =
    if (barrier) s"commit the protocol without ${feature.name}, with checkpointProtection and " +
      s"${LogCleanup.ProtectionProperty} = $version"
    else s"commit the protocol without ${feature.name}"

  // A client without a reader-writer feature reads from the downgrade on; a writer feature
  // never stopped anyone from reading.
  private def readableWithoutFeatureFrom(feature: Droppable, downgrade: Long): Option[Long] =
    if (feature.isReaderWriterFeature) Some(downgrade)
    else Some(log.listing().earliestReconstructableVersion)

  // ---- history-truncating drop ----------------------------------------------------------

  private def dropWithHistoryTruncation(
      feature: Droppable,
      snapshot: LogSnapshot,
      preparation: Seq[DropStep],
      dryRun: Boolean
  ): DropFeatureResult = {
    val retentionMillis = DropTableFeatureUtils.truncateHistoryLogRetentionMillis(snapshot.metadata)
    val start = snapshot.version
    val command = truncateHistoryCommand(feature)
    // delta-spark's own check of the latest version decides whether preparation is still due.
    if (!feature.validateDropInvariants(table, table.update())) {
      val checkpointVersion = start + preparation.map(_.commits).sum + 1
      val steps = preparation :+
        DropStep("write an empty commit with a checkpoint to start the retained history from", 1) :+
        DropStep(s"stop: run the command again after ${retentionText(snapshot.metadata)}", 0)
      if (dryRun) return result(
        feature,
        TruncateHistory,
        Planned,
        steps,
        preparation.map(_.files).sum,
        preparation.map(_.bytes).sum,
        start + 1 to checkpointVersion,
        Seq(checkpointVersion),
        LogCleanup.protectedBefore(snapshot.protocol, snapshot.metadata),
        None,
        None
      )
      val progress =
        new Progress(spark, s"DROP FEATURE ${feature.name} TRUNCATE HISTORY on $displayName", 2)
      try {
        progress.start(s"prepare (${describe(preparation)})")
        feature.preDowngradeCommand(table).removeFeatureTracesIfNeeded(spark)
        FaultInjection.step("dropFeature.truncateHistory.afterPreparation")
        progress.start("checkpoint a version without the feature")
        val barrier = new BarrierCheckpoints(log, store, table, progress)
        barrier.checkpointOnEmptyCommit()
      } finally progress.done()
      throw LifecycleErrors.waitForRetention(
        feature.name,
        "the history still holds versions that use it",
        System.currentTimeMillis() + retentionMillis,
        retentionText(snapshot.metadata),
        command
      )
    }

    val listing = log.listing()
    val needsCheckpoint = listing.checkpointsAt(start).isEmpty
    val downgradeVersion = start + (if (needsCheckpoint) 1 else 0) + 1
    val steps = Option.when(needsCheckpoint)(DropStep(
      "write an empty commit with a checkpoint to start the retained history from",
      1
    )).toSeq ++
      Seq(
        DropStep(s"delete the history older than ${retentionText(snapshot.metadata)}", 0),
        DropStep(s"check that no retained version uses ${feature.name}", 0),
        DropStep(downgradeDescription(feature, barrier = false, downgradeVersion), 1),
        DropStep("checkpoint the downgraded version", 0)
      )
    if (dryRun) {
      val plan = LogCleanup.plan(log, Some(retentionMillis), System.currentTimeMillis())
      return result(
        feature,
        TruncateHistory,
        Planned,
        steps,
        0,
        0,
        start + 1 to downgradeVersion,
        (if (needsCheckpoint) Seq(start + 1) else Nil) :+ downgradeVersion,
        LogCleanup.protectedBefore(snapshot.protocol, snapshot.metadata),
        Some(downgradeVersion),
        plan.cutoffCheckpoint
      )
    }

    val progress = new Progress(
      spark,
      s"DROP FEATURE ${feature.name} TRUNCATE HISTORY on $displayName",
      steps.size
    )
    try {
      val barrier = new BarrierCheckpoints(log, store, table, progress)
      val written = if (needsCheckpoint) {
        progress.start("checkpoint the latest version")
        Seq(barrier.checkpointOnEmptyCommit())
      } else Nil
      progress.start("truncate history")
      val plan = LogCleanup.plan(log, Some(retentionMillis), System.currentTimeMillis())
      LogCleanup.execute(log, plan)
      FaultInjection.step("dropFeature.truncateHistory.afterCleanup")
      progress.start(s"check the retained history for ${feature.name}")
      if (feature.historyContainsFeature(spark, table, table.update())) {
        val readyAt = latestCheckpointCommitTime().map(
          _ + retentionMillis
        ).getOrElse(System.currentTimeMillis() + retentionMillis)
        throw LifecycleErrors.waitForRetention(
          feature.name,
          "retained versions still use it",
          readyAt,
          retentionText(snapshot.metadata),
          command
        )
      }
      progress.start("commit the downgraded protocol")
      val downgrade = commitDowngrade(feature, protect = false, truncateHistory = true)
      FaultInjection.step("dropFeature.truncateHistory.afterDowngrade")
      progress.start("checkpoint the downgraded version")
      val checkpoint = barrier.checkpointLatest().version
      val after = log.latestSnapshot()
      result(
        feature,
        TruncateHistory,
        Dropped,
        steps,
        0,
        0,
        start + 1 to downgrade,
        written :+ checkpoint,
        LogCleanup.protectedBefore(after.protocol, after.metadata),
        Some(downgrade),
        Some(log.listing().earliestReconstructableVersion)
      )
    } finally progress.done()
  }

  /**
   * checkpointProtection goes with everything before its boundary, in one pass (rule c): a
   * checkpoint at or after the boundary must exist and be older than the truncation retention, then
   * the cleanup cuts there and the downgrade removes feature and property.
   */
  private def dropCheckpointProtection(
      snapshot: LogSnapshot,
      dryRun: Boolean
  ): DropFeatureResult = {
    val feature = CheckpointProtectionTableFeature
    val retentionMillis = DropTableFeatureUtils.truncateHistoryLogRetentionMillis(snapshot.metadata)
    val boundary = LogCleanup.protectedBefore(snapshot.protocol, snapshot.metadata).getOrElse(0L)
    val listing = log.listing()
    val truncated = listing.commits.forall(_.version >= boundary) &&
      listing.checkpoints.forall(_.version >= boundary)
    val needsCheckpoint = !truncated && listing.checkpoints.forall(_.version < boundary)
    val start = snapshot.version
    val downgradeVersion = start + (if (needsCheckpoint) 1 else 0) + 1
    val steps = Option.when(needsCheckpoint)(DropStep(
      s"write an empty commit with a checkpoint at or after version $boundary",
      1
    )).toSeq ++
      Option.when(!truncated)(DropStep(
        s"delete every log file before version $boundary in one pass",
        0
      )).toSeq ++
      Seq(
        DropStep(
          s"commit the protocol without checkpointProtection and unset ${LogCleanup.ProtectionProperty}",
          1
        ),
        DropStep("checkpoint the downgraded version", 0)
      )
    if (dryRun) return result(
      feature,
      TruncateHistory,
      Planned,
      steps,
      0,
      0,
      start + 1 to downgradeVersion,
      (if (needsCheckpoint) Seq(start + 1) else Nil) :+ downgradeVersion,
      None,
      Some(downgradeVersion),
      Some(boundary)
    )

    val command = truncateHistoryCommand(feature)
    val progress = new Progress(
      spark,
      s"DROP FEATURE ${feature.name} TRUNCATE HISTORY on $displayName",
      steps.size
    )
    try {
      val barrier = new BarrierCheckpoints(log, store, table, progress)
      val written = if (needsCheckpoint) {
        progress.start(s"checkpoint a version at or after $boundary")
        Seq(barrier.checkpointOnEmptyCommit())
      } else Nil
      if (!truncated) {
        progress.start(s"delete the history before version $boundary")
        val plan = LogCleanup.plan(log, Some(retentionMillis), System.currentTimeMillis())
        if (plan.cutoffCheckpoint.forall(_ < boundary)) {
          val first =
            log.listing().checkpoints.find(_.version >= boundary).map(_.version).getOrElse(boundary)
          val readyAt = log.listing().commit(
            first
          ).map(_.status.getModificationTime).getOrElse(System.currentTimeMillis()) +
            retentionMillis
          throw LifecycleErrors.waitForRetention(
            feature.name,
            s"the versions from $boundary on are younger than the truncation retention, so the history before them cannot go yet",
            readyAt,
            retentionText(snapshot.metadata),
            command
          )
        }
        LogCleanup.execute(log, plan)
      }
      progress.start("commit the downgraded protocol")
      val downgrade = commitDowngrade(feature, protect = false, truncateHistory = true)
      progress.start("checkpoint the downgraded version")
      val checkpoint = barrier.checkpointLatest().version
      result(
        feature,
        TruncateHistory,
        Dropped,
        steps,
        0,
        0,
        start + 1 to downgrade,
        written :+ checkpoint,
        None,
        Some(downgrade),
        Some(log.listing().earliestReconstructableVersion)
      )
    } finally progress.done()
  }

  // ---- shared -----------------------------------------------------------------------------

  /**
   * The downgrade commit, on top of the latest version: checked and computed from that version,
   * committed put-if-absent, and redone from the new latest version when another writer commits
   * first. Writers that started before it fail their own conflict check on the protocol change.
   */
  private def commitDowngrade(
      feature: Droppable,
      protect: Boolean,
      truncateHistory: Boolean
  ): Long = {
    var attempt = 1
    while (true) {
      val snapshot = table.update()
      val isProtection = DroppableFeatures.isCheckpointProtection(feature)
      if (!isProtection && !feature.validateDropInvariants(table, snapshot))
        throw LifecycleErrors.featureTracesRemain(feature.name, snapshot.version)
      val protocol =
        if (protect) snapshot.protocol.denormalized.withFeature(
          CheckpointProtectionTableFeature
        ).removeFeature(feature)
        else snapshot.protocol.removeFeature(feature)
      val operation = DeltaOperations.DropTableFeature(feature.name, truncateHistory)
      // Appends that land meanwhile are moved past (the protection boundary is the version
      // the commit gets); anything else is checked again from the new latest version.
      try return LogCommitter.commitRebasing(
          log,
          store,
          snapshot.version,
          operation.name,
          operation.parameters
        ) { version =>
          val metadata = downgradedMetadata(feature, snapshot.metadata, protect, version)
          Seq(protocol) ++ Option.when(metadata != snapshot.metadata)(metadata) ++
            feature.actionsToIncludeAtDowngradeCommit(snapshot)
        }
      catch {
        case e: DeltaLifecycleException
            if e.condition == LogCommitter.ConcurrentCommitCondition &&
              attempt < MaxDowngradeAttempts =>
          attempt += 1
      }
    }
    throw new IllegalStateException("unreachable")
  }

  private def downgradedMetadata(
      feature: Droppable,
      metadata: Metadata,
      protect: Boolean,
      version: Long
  ): Metadata = {
    val withoutProperties = DropTableFeatureUtils.getDowngradedProtocolMetadata(feature, metadata)
    if (DroppableFeatures.isCheckpointProtection(feature))
      withoutProperties.copy(configuration =
        withoutProperties.configuration - LogCleanup.ProtectionProperty
      )
    else if (protect)
      CheckpointProtectionTableFeature.metadataWithCheckpointProtection(withoutProperties, version)
    else withoutProperties
  }

  /** Files the preparation commits removed without changing data: the rewritten ones. */
  private def rewritten(before: LogSnapshot, from: Long, to: Long): (Long, Long) = {
    if (to <= from) return (0L, 0L)
    val sizes = before.activeFiles.iterator.map(f => f.path -> f.size).toMap
    val listing = log.listing()
    val removed = (from + 1 to to).flatMap(listing.commit).flatMap { c =>
      ActionReader.readJsonSelected(log.readFs, c.status, Set("remove")).collect {
        case r: RemoveFile if !r.dataChange && sizes.contains(r.path) => r.path
      }
    }.distinct
    (removed.size.toLong, removed.map(sizes).sum)
  }

  // Only type widening needs this: delta-spark's own file filter, which reads Parquet footers.
  private def widenedFiles(): Seq[AddFile] = {
    val snapshot = table.update()
    new DeltaRewriteTypeWideningOperation().filterFilesToReorg(
      spark,
      snapshot,
      snapshot.allFiles.collect().toSeq
    )
  }

  private def latestCheckpointCommitTime(): Option[Long] = {
    val listing = log.listing()
    listing.checkpoints.lastOption.flatMap(c => listing.commit(c.version)).map(
      _.status.getModificationTime
    )
  }

  private def truncateHistoryCommand(feature: Droppable): String =
    s"ALTER TABLE $displayName DROP FEATURE ${feature.name} TRUNCATE HISTORY"

  private def retentionText(metadata: Metadata): String =
    metadata.configuration.getOrElse(
      "delta.dropFeatureTruncateHistory.retentionDuration",
      "interval 24 hours"
    )

  private def describe(steps: Seq[DropStep]): String =
    if (steps.isEmpty) "nothing to rewrite" else steps.map(_.description).mkString("; ")

  private def result(
      feature: Droppable,
      mode: String,
      status: String,
      steps: Seq[DropStep],
      files: Long,
      bytes: Long,
      commits: Seq[Long],
      checkpoints: Seq[Long],
      protectedBefore: Option[Long],
      readableFrom: Option[Long],
      truncatedBefore: Option[Long]
  ): DropFeatureResult =
    DropFeatureResult(
      feature.name,
      mode,
      status,
      steps,
      files,
      bytes,
      commits,
      checkpoints,
      protectedBefore,
      readableFrom,
      truncatedBefore
    )
}

object DropFeature {

  /**
   * delta-spark's readers fall back up to two checkpoints; a third makes them give up before the
   * boundary.
   */
  val BarrierSize = 3
  val Fast = "fast"
  val TruncateHistory = "truncate-history"
  val Planned = "planned"
  val Dropped = "dropped"
  private val MaxDowngradeAttempts = 5
}
