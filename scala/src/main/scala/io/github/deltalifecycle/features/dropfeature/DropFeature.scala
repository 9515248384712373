package io.github.deltalifecycle.features.dropfeature

import io.github.deltalifecycle.core.{ErrorConditions, _}
import io.github.deltalifecycle.features.cleanup.LogCleanup
import io.github.deltalifecycle.shims.DeltaShim
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.catalog.CatalogTable
import org.apache.spark.sql.delta.catalog.DeltaTableV2

/**
 * `ALTER TABLE t DROP FEATURE f [TRUNCATE HISTORY] [DRY RUN]`.
 *
 * Each of the three flows (the fast drop, the history-truncating drop, and the removal of
 * checkpointProtection itself, in [[DropFlows]]) is a [[DropPlan]] of named steps ([[DropSteps]]):
 * DRY RUN reports the plan, a run executes its steps in order. Every step is a commit of its own
 * and each plan starts from the latest version, so a re-run after a crash or a conflict carries on
 * where the last run stopped.
 */
final class DropFeature(
    spark: SparkSession,
    val log: TableLog,
    catalogTable: Option[CatalogTable],
    displayName: String
) {

  // With its catalog entry, delta-spark's transactions on the table go through the catalog's
  // commit path when the table is catalog-managed.
  private lazy val table = DeltaTableV2(spark, log.tablePath, catalogTable)
  private val commits = DropCommits(log, table)
  private val flows = new DropFlows(spark, log, table, commits, displayName)

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
    val feature = checkedFeature(head, featureName)
    // Every flow may make delta-spark read the table's files (a checkpoint at least), so the
    // whole statement builds delta-spark's state in partitions of bounded size.
    val latest = table.update()
    FilePartitions.withDeltaState(spark, FilePartitions.estimatedFiles(latest)) {
      val plan = Progress.run(spark, s"DROP FEATURE ${feature.name} on $displayName", 1) { p =>
        p.start("plan the drop from the latest version")
        val planned = flows.planFor(feature, head, latest, truncateHistory)
        // A checkpoint may be delta-spark's, which rebuilds the state: refused now if that
        // cannot fit, rather than after the first commits.
        if (!dryRun && planned.steps.exists(_.checkpointed)) DeltaState.checkFits(latest)
        planned
      }
      if (dryRun) planned(plan) else dropped(plan, execute(plan))
    }
  }

  /** The feature `featureName` names, once the table as `head` shows it lets it be dropped. */
  private def checkedFeature(head: SnapshotHead, featureName: String): DroppableFeature = {
    // Before the name: on such a table no drop is possible, whichever feature it names.
    CommitCoordination.requireWritable(
      log,
      displayName,
      head.protocol,
      head.metadata,
      "drop a feature from"
    )
    val feature = DroppableFeatures.resolve(featureName, head.protocol, displayName)
    log.catalog.filter(_.requiredFeatures.contains(feature.name)).foreach { c =>
      throw ErrorConditions.CatalogManagedTable.requiredByCatalog(
        table = displayName,
        feature = feature.name,
        catalog = c.description
      )
    }
    if (!DroppableFeatures.isPresent(head.protocol, feature.feature))
      throw ErrorConditions.featureNotPresent(
        feature = feature.name,
        table = displayName,
        version = head.version
      )
    val dependents = DroppableFeatures.dependents(head.protocol, feature)
    if (dependents.nonEmpty) throw DropFeatureErrors.dependentFeatures(feature.name, dependents)
    DroppableFeatures.checkDroppable(feature, head.metadata)
    feature
  }

  /** DRY RUN: what the plan's steps would write, if no other writer commits meanwhile. */
  private def planned(plan: DropPlan): DropFeatureResult = {
    val steps = plan.steps.flatMap(_.reports)
    DropFeatureResult(
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
  }

  /** Runs the plan's steps in order; returns what they wrote. */
  private def execute(plan: DropPlan): DropRun = {
    val clause = if (plan.mode == DropMode.TruncateHistory) " TRUNCATE HISTORY" else ""
    val operation = s"DROP FEATURE ${plan.feature.name}$clause on $displayName"
    Progress.run(spark, operation, plan.steps.size) { progress =>
      val run = new DropRun(new BarrierCheckpoints(spark, log, table, commits, progress))
      plan.steps.foreach { step =>
        progress.start(step.label)
        step.work(run)
      }
      run
    }
  }

  /** What a run of the plan wrote, and the table it left. */
  private def dropped(plan: DropPlan, run: DropRun): DropFeatureResult = {
    val after = log.latestHead()
    DropFeatureResult(
      feature = plan.feature.name,
      mode = plan.mode,
      status = DropStatus.Dropped,
      steps = plan.steps.flatMap(_.reports),
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
}

object DropFeature {

  /**
   * delta-spark's barrier size: its readers fall back up to two checkpoints, so a third makes them
   * give up before the boundary.
   */
  val BarrierSize: Int = DeltaShim.BarrierCheckpoints
}
