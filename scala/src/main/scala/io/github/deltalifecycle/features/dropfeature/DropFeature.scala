package io.github.deltalifecycle.features.dropfeature

import io.github.deltalifecycle.core._
import io.github.deltalifecycle.features.cleanup.LogCleanup
import io.github.deltalifecycle.shims.DeltaShim
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.catalog.CatalogTable
import org.apache.spark.sql.delta.{
  CheckpointProtectionTableFeature,
  DeltaConfigs,
  DeltaOperations,
  Snapshot
}
import org.apache.spark.sql.delta.actions.{AddFile, DropTableFeatureUtils, Metadata, RemoveFile}
import org.apache.spark.sql.delta.catalog.DeltaTableV2
import org.apache.spark.sql.deltalifecycle.SparkInternals

/** How a drop removes a feature; `name` is the value of the result's `mode` column. */
sealed abstract class DropMode(val name: String)
object DropMode {

  /** Under checkpoint protection, in one run (the Checkpoint Protection RFC). */
  case object Fast extends DropMode("fast")

  /** By truncating the history that uses the feature ("Drop Delta table features"). */
  case object TruncateHistory extends DropMode("truncate-history")
}

/** Whether a result is a drop done or one DRY RUN planned; `name` is the `status` column. */
sealed abstract class DropStatus(val name: String)
object DropStatus {
  case object Planned extends DropStatus("planned")
  case object Dropped extends DropStatus("dropped")
}

/**
 * What a drop did, or (status `planned`) would do. Versions are those the drop wrote or, for a
 * plan, will write if no other writer commits meanwhile.
 *
 * @param protectedBefore
 *   the checkpoint protection boundary
 *   (`DeltaConfigs.REQUIRE_CHECKPOINT_PROTECTION_BEFORE_VERSION`) afterwards
 * @param readableWithoutFeatureFrom
 *   the first version a client without the feature can read
 * @param historyTruncatedBefore
 *   the earliest version left after truncating history
 */
final case class DropFeatureResult(
    feature: String,
    mode: DropMode,
    status: DropStatus,
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
 * Each of the three flows (the fast drop, the history-truncating drop, and the removal of
 * checkpointProtection itself) is a [[DropFeature.DropPlan]] of named steps: DRY RUN reports the
 * plan, a run executes its steps in order. Every step is a commit of its own and each plan starts
 * from the latest version, so a re-run after a crash or a conflict carries on where the last run
 * stopped.
 */
final class DropFeature(
    spark: SparkSession,
    tablePath: Path,
    catalogTable: Option[CatalogTable],
    displayName: String
) {
  import DropFeature._

  /** The table's log, for callers that plan around the drop from the same handle. */
  val log: TableLog = TableLog.forPath(SparkInternals.newHadoopConf(spark), tablePath)
  private lazy val table = DeltaTableV2(spark, tablePath, catalogTable)

  /**
   * Drops `featureName` from the table as `head` (its latest version, read once by the caller)
   * shows it. For a feature with a preview spelling (typeWidening), the one the table has is
   * dropped; the result's `feature` names it.
   */
  def run(
      head: SnapshotHead,
      featureName: String,
      truncateHistory: Boolean,
      dryRun: Boolean
  ): DropFeatureResult = {
    // Before the name: on such a table no drop is possible, whichever feature it names.
    CommitCoordination.requireDirectCommits(
      displayName,
      head.protocol,
      head.metadata,
      "drop a feature from"
    )
    val feature = DroppableFeatures.resolve(featureName, head.protocol)
    if (!DroppableFeatures.isPresent(head.protocol, feature.feature))
      throw LifecycleErrors.featureNotPresent(feature.name, displayName, head.version)
    val dependents = DroppableFeatures.dependents(head.protocol, feature)
    if (dependents.nonEmpty) throw LifecycleErrors.dependentFeatures(feature.name, dependents)
    DroppableFeatures.checkDroppable(feature, head.metadata)

    // Every flow may make delta-spark read the table's files (a checkpoint at least), so the
    // whole statement builds delta-spark's state in partitions of bounded size.
    val latest = table.update()
    FilePartitions.withDeltaState(spark, FilePartitions.estimatedFiles(latest)) {
      val plan = Progress.run(spark, s"DROP FEATURE ${feature.name} on $displayName", 1) { p =>
        p.start("plan the drop from the latest version")
        planFor(feature, head, latest, truncateHistory)
      }
      execute(plan, dryRun)
    }
  }

  /** The flow that drops `feature` from the table as `head` and `snapshot` show it. */
  private def planFor(
      feature: DroppableFeature,
      head: SnapshotHead,
      snapshot: Snapshot,
      truncateHistory: Boolean
  ): DropPlan =
    if (DroppableFeatures.isCheckpointProtection(feature)) {
      if (!truncateHistory) throw LifecycleErrors.truncateHistoryRequired(feature.name)
      checkpointProtectionDrop(head)
    } else {
      if (truncateHistory && !DroppableFeatures.needsBarrier(feature))
        throw LifecycleErrors.truncateHistoryNotApplicable(feature.name)
      val preparation = feature.preparation(table, spark)
      val planned = preparation.plan(snapshot, new DistributedTableFiles(snapshot))
      if (!truncateHistory) fastDrop(feature, head, preparation, planned)
      // delta-spark's own check of the latest version decides whether preparation is due.
      else if (!feature.validateRemoval(table, snapshot))
        truncationPreparation(feature, head, preparation, planned)
      else historyTruncatingDrop(feature, head)
    }

  // ---- the three flows ----------------------------------------------------------------------

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
    val steps =
      Seq(prepare(head, preparation, planned, crashPoint = "dropFeature.afterPreparation")) ++
        Option.when(barrier)(writeBarrier) ++
        Seq(downgrade(
          feature,
          DropMode.Fast,
          protect = barrier,
          report = downgradeReport,
          crashPoint = Some("dropFeature.afterDowngrade")
        )) ++
        Option.when(barrier)(checkpointDowngraded)
    DropPlan(
      feature,
      DropMode.Fast,
      head.version,
      steps,
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
        prepare(
          head,
          preparation,
          planned,
          crashPoint = "dropFeature.truncateHistory.afterPreparation"
        ),
        checkpointOnEmptyCommit(
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

  private def waitForRetention(
      feature: DroppableFeature,
      head: SnapshotHead,
      why: String,
      readyAtMillis: Long
  ): DeltaLifecycleException = LifecycleErrors.waitForRetention(
    feature.name,
    why,
    readyAtMillis,
    retentionText(head.metadata),
    truncateHistoryCommand(feature)
  )

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
    val checkHistory = Step(
      s"check the retained history for ${feature.name}",
      Seq(DropStep(s"check that no retained version uses ${feature.name}", 0))
    ) { _ =>
      if (feature.historyContainsFeature(spark, table, table.update())) {
        // Ready once the newest checkpoint, where the next truncation cuts, is old enough.
        val readyAt = latestCheckpointCommitTime().getOrElse(System.currentTimeMillis())
        throw waitForRetention(
          feature,
          head,
          "retained versions still use it",
          readyAt + retention
        )
      }
    }
    DropPlan(
      feature,
      DropMode.TruncateHistory,
      head.version,
      Option.when(needsCheckpoint)(checkpointOnEmptyCommit(
        "checkpoint the latest version",
        "write an empty commit with a checkpoint to start the retained history from"
      )).toSeq ++ Seq(
        truncate,
        checkHistory,
        downgrade(
          feature,
          DropMode.TruncateHistory,
          protect = false,
          report = s"commit the protocol without ${feature.name}",
          crashPoint = Some("dropFeature.truncateHistory.afterDowngrade")
        ),
        checkpointDowngraded
      ),
      downgradeVersion = Some(downgradeVersion),
      protectedBefore = LogCleanup.protectedBefore(head),
      historyTruncatedBefore =
        LogCleanup.plan(log, Some(retention), System.currentTimeMillis()).cutoffCheckpoint
    )
  }

  /**
   * checkpointProtection goes with everything before its boundary, in one pass (the Checkpoint
   * Protection RFC, writer rule c): a checkpoint at or after the boundary must exist and be older
   * than the truncation retention, then the cleanup cuts there and the downgrade removes feature
   * and property.
   */
  private def checkpointProtectionDrop(head: SnapshotHead): DropPlan = {
    val retention = retentionMillis(head.metadata)
    val boundary = LogCleanup.protectedBefore(head).getOrElse(0L)
    val listing = log.listing()
    val truncated = listing.commits.forall(_.version >= boundary) &&
      listing.checkpoints.forall(_.version >= boundary)
    val needsCheckpoint = !truncated && listing.checkpoints.forall(_.version < boundary)
    val downgradeVersion = head.version + (if (needsCheckpoint) 1 else 0) + 1
    val truncate = Step(
      s"delete the history before version $boundary",
      Seq(DropStep(s"delete every log file before version $boundary in one pass", 0))
    ) { _ =>
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
    DropPlan(
      ProtectionFeature,
      DropMode.TruncateHistory,
      head.version,
      Option.when(needsCheckpoint)(checkpointOnEmptyCommit(
        s"checkpoint a version at or after $boundary",
        s"write an empty commit with a checkpoint at or after version $boundary"
      )).toSeq ++
        Option.when(!truncated)(truncate) ++
        Seq(
          downgrade(
            ProtectionFeature,
            DropMode.TruncateHistory,
            protect = false,
            report =
              s"commit the protocol without ${ProtectionFeature.name} and unset $ProtectionKey",
            crashPoint = None
          ),
          checkpointDowngraded
        ),
      downgradeVersion = Some(downgradeVersion),
      protectedBefore = None,
      historyTruncatedBefore = Some(boundary)
    )
  }

  // ---- running a plan -----------------------------------------------------------------------

  /** DRY RUN reports the plan; otherwise its steps run in order and report what they wrote. */
  private def execute(plan: DropPlan, dryRun: Boolean): DropFeatureResult = {
    val steps = plan.steps.flatMap(_.reports)
    if (dryRun) return DropFeatureResult(
      feature = plan.feature.name,
      mode = plan.mode,
      status = DropStatus.Planned,
      steps = steps,
      filesRewritten = steps.map(_.files).sum,
      bytesRewritten = steps.map(_.bytes).sum,
      commitVersions = plan.commitVersions,
      checkpointVersions = plan.checkpointVersions,
      protectedBefore = plan.protectedBefore,
      readableWithoutFeatureFrom = plan.downgradeVersion.map(readableWithoutFeatureFrom(plan, _)),
      historyTruncatedBefore = plan.historyTruncatedBefore
    )

    val clause = if (plan.mode == DropMode.TruncateHistory) " TRUNCATE HISTORY" else ""
    val operation = s"DROP FEATURE ${plan.feature.name}$clause on $displayName"
    val run = Progress.run(spark, operation, plan.steps.size) { progress =>
      val run = new DropRun(new BarrierCheckpoints(log, table, progress))
      plan.steps.foreach { step =>
        progress.start(step.label)
        step.work(run)
      }
      run
    }
    val after = log.latestHead()
    DropFeatureResult(
      feature = plan.feature.name,
      mode = plan.mode,
      status = DropStatus.Dropped,
      steps = steps,
      filesRewritten = run.filesRewritten,
      bytesRewritten = run.bytesRewritten,
      commitVersions = run.downgrade.fold(Seq.empty[Long])(plan.startVersion + 1 to _),
      checkpointVersions = run.checkpoints,
      protectedBefore = LogCleanup.protectedBefore(after),
      readableWithoutFeatureFrom = run.downgrade.map(readableWithoutFeatureFrom(plan, _)),
      historyTruncatedBefore = Option.when(plan.mode == DropMode.TruncateHistory)(
        log.listing().earliestReconstructableVersion
      )
    )
  }

  // A client without a reader-writer feature reads from the downgrade on, as it does after a
  // history truncation; a writer feature dropped fast never stopped anyone from reading.
  private def readableWithoutFeatureFrom(plan: DropPlan, downgrade: Long): Long =
    if (plan.mode == DropMode.TruncateHistory || plan.feature.feature.isReaderWriterFeature)
      downgrade
    else log.listing().earliestReconstructableVersion

  // ---- the steps the flows share ------------------------------------------------------------

  private def prepare(
      head: SnapshotHead,
      preparation: FeaturePreparation,
      planned: Seq[DropStep],
      crashPoint: String
  ): Step =
    Step(s"prepare (${describe(planned)})", planned) { run =>
      preparation.run()
      FaultInjection.step(crashPoint)
      val (files, bytes) = rewritten(head.version, log.tailListing().latestVersion)
      run.filesRewritten = files
      run.bytesRewritten = bytes
    }

  private def writeBarrier: Step = Step(
    s"write the barrier of $BarrierSize protected checkpoints",
    Seq(DropStep(
      s"write $BarrierSize empty commits, each with a checkpoint: the protected barrier",
      BarrierSize
    )),
    checkpointed = true
  )(run => run.checkpoints ++= run.barrier.write(BarrierSize)._2)

  private def checkpointOnEmptyCommit(label: String, report: String): Step =
    Step(label, Seq(DropStep(report, 1)), checkpointed = true) { run =>
      run.checkpoints :+= run.barrier.checkpointOnEmptyCommit()
    }

  private def downgrade(
      feature: DroppableFeature,
      mode: DropMode,
      protect: Boolean,
      report: String,
      crashPoint: Option[String]
  ): Step =
    Step("commit the downgraded protocol", Seq(DropStep(report, 1))) { run =>
      run.downgrade = Some(commitDowngrade(feature, mode, protect))
      crashPoint.foreach(FaultInjection.step(_))
    }

  private def checkpointDowngraded: Step = Step(
    "checkpoint the downgraded version",
    Seq(DropStep("checkpoint the downgraded version", 0)),
    checkpointed = true
  )(run => run.checkpoints :+= run.barrier.checkpointLatest().version)

  /**
   * The downgrade commit, on top of the latest version: checked and computed from that version,
   * committed put-if-absent, moved past appends that land meanwhile (the protection boundary is the
   * version the commit gets) and decided again from the new latest version after any other commit.
   * Writers that started before it fail their own conflict check on the protocol change.
   */
  private def commitDowngrade(feature: DroppableFeature, mode: DropMode, protect: Boolean): Long = {
    val operation =
      DeltaOperations.DropTableFeature(feature.name, mode == DropMode.TruncateHistory)
    LogCommitter.commitReplanning(log, operation.name, operation.parameters) { () =>
      val snapshot = table.update()
      if (
        !DroppableFeatures.isCheckpointProtection(feature) &&
        !feature.validateRemoval(table, snapshot)
      ) throw LifecycleErrors.featureTracesRemain(feature.name, snapshot.version)
      val protocol =
        DroppableFeatures.protocolAfterDrop(snapshot.protocol, feature.feature, protect)
      LogCommitter.PlannedCommit(
        snapshot.version,
        version => {
          val metadata = downgradedMetadata(feature, snapshot.metadata, protect, version)
          Seq(protocol) ++ Option.when(metadata != snapshot.metadata)(metadata) ++
            feature.actionsAtDowngrade(snapshot)
        }
      )
    }
  }

  private def downgradedMetadata(
      feature: DroppableFeature,
      metadata: Metadata,
      protect: Boolean,
      version: Long
  ): Metadata = {
    val withoutProperties = feature.downgradedMetadata(metadata)
    if (DroppableFeatures.isCheckpointProtection(feature))
      withoutProperties.copy(configuration = withoutProperties.configuration - ProtectionKey)
    else if (protect)
      CheckpointProtectionTableFeature.metadataWithCheckpointProtection(withoutProperties, version)
    else withoutProperties
  }

  /**
   * The files the preparation rewrote: those its commits replaced by others without changing data,
   * with the sizes their removes record (delta-spark records them for every rewrite). A commit of
   * removes alone (the deletion-vector tombstones) rewrites nothing.
   */
  private def rewritten(before: Long, preparedVersion: Long): (Long, Long) = {
    if (preparedVersion <= before) return (0L, 0L)
    val listing = log.listingFrom(before + 1)
    val removed = (before + 1 to preparedVersion).flatMap(listing.commit).flatMap { c =>
      val actions = ActionReader.readJsonSelected(log.readFs, c.status, Set("add", "remove"))
      val replaced = actions.exists { case a: AddFile => !a.dataChange; case _ => false }
      if (!replaced) Nil
      else actions.collect { case r: RemoveFile if !r.dataChange => r.path -> r.size.getOrElse(0L) }
    }.toMap
    (removed.size.toLong, removed.values.sum)
  }

  private def latestCheckpointCommitTime(): Option[Long] = {
    val listing = log.tailListing()
    listing.checkpoints.lastOption.flatMap(c => listing.commit(c.version)).map(
      _.status.getModificationTime
    )
  }

  private def truncateHistoryCommand(feature: DroppableFeature): String =
    s"ALTER TABLE $displayName DROP FEATURE ${feature.name} TRUNCATE HISTORY"

  private def describe(steps: Seq[DropStep]): String =
    if (steps.isEmpty) "nothing to rewrite" else steps.map(_.description).mkString("; ")
}

object DropFeature {

  /**
   * delta-spark's barrier size: its readers fall back up to two checkpoints, so a third makes them
   * give up before the boundary.
   */
  val BarrierSize: Int = DeltaShim.BarrierCheckpoints

  private lazy val ProtectionFeature =
    DroppableFeatures.lookup(CheckpointProtectionTableFeature.name)
  private val ProtectionKey = DeltaConfigs.REQUIRE_CHECKPOINT_PROTECTION_BEFORE_VERSION.key
  private val TruncationRetention = DeltaConfigs.TABLE_FEATURE_DROP_TRUNCATE_HISTORY_LOG_RETENTION

  private def retentionMillis(metadata: Metadata): Long =
    DropTableFeatureUtils.truncateHistoryLogRetentionMillis(metadata)

  private def retentionText(metadata: Metadata): String =
    metadata.configuration.getOrElse(TruncationRetention.key, TruncationRetention.defaultValue)

  /**
   * One step of a drop: its progress label, the lines it adds to the result (the preparation is one
   * step that delta-spark may run as several commits), whether each commit it makes gets a
   * checkpoint (a step without commits checkpoints the latest version), and the work itself.
   */
  private final case class Step(
      label: String,
      reports: Seq[DropStep],
      checkpointed: Boolean = false
  )(val work: DropRun => Unit) {
    def commits: Int = reports.map(_.commits).sum
  }

  /**
   * A drop as its named steps, starting from `startVersion`, and what it leaves if no other writer
   * commits meanwhile.
   */
  private final case class DropPlan(
      feature: DroppableFeature,
      mode: DropMode,
      startVersion: Long,
      steps: Seq[Step],
      downgradeVersion: Option[Long],
      protectedBefore: Option[Long],
      historyTruncatedBefore: Option[Long]
  ) {
    def commitVersions: Seq[Long] = startVersion + 1 to startVersion + steps.map(_.commits).sum

    def checkpointVersions: Seq[Long] = {
      val lastVersions = steps.scanLeft(startVersion)(_ + _.commits).tail
      steps.zip(lastVersions).flatMap {
        case (step, last) if step.checkpointed =>
          if (step.commits == 0) Seq(last) else last - step.commits + 1 to last
        case _ => Nil
      }
    }
  }

  /** What the steps of a running drop wrote. */
  private final class DropRun(val barrier: BarrierCheckpoints) {
    var filesRewritten = 0L
    var bytesRewritten = 0L
    var checkpoints: Vector[Long] = Vector.empty
    var downgrade: Option[Long] = None
  }
}
