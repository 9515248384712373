package io.github.deltalifecycle.features.compatibility

import io.github.deltalifecycle.core.{ErrorConditions, SnapshotHead, TableLog}
import io.github.deltalifecycle.features.dropfeature.{
  DropFeature,
  DropFeatureResult,
  DropMode,
  DropStatus,
  DropStep,
  DroppableFeatures
}
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.catalog.CatalogTable

/**
 * `ALTER TABLE t DROP FEATURES FOR CLIENT 'c' [FOR WRITES] [TRUNCATE HISTORY] [DRY RUN]`: every
 * feature that keeps the client from reading (or writing) the table, dropped one by one with
 * [[DropFeature]], in [[Compatibility.dropOrder]]. Everything is checked on the latest version
 * before the first drop; each drop is a DROP FEATURE of its own, so a re-run after a crash plans
 * again from the latest version and skips what is already gone.
 */
final class DropFeaturesForClient(
    spark: SparkSession,
    log: TableLog,
    catalogTable: Option[CatalogTable],
    displayName: String
) {
  // One handle for every feature of the plan: its log reads the latest version before each drop.
  private val dropper = new DropFeature(spark, log, catalogTable, displayName)

  def run(
      client: String,
      forWrites: Boolean,
      truncateHistory: Boolean,
      dryRun: Boolean
  ): Seq[DropFeatureResult] = {
    val entry = ClientCapabilities.lookup(client) match {
      case Seq(one) => one
      case many =>
        throw ErrorConditions.InvalidArgument.ambiguousClient(
          client = client,
          count = many.size,
          ranges = many.map(_.id)
        )
    }
    // No drop turns a reader (Athena) into a writer: say so rather than name a pseudo-feature.
    if (forWrites && entry.readOnly)
      throw ErrorConditions.InvalidArgument.readOnlyClient(client = entry.id, table = displayName)
    val access = if (forWrites) "writable" else "readable"
    val head = log.latestHead()
    val verdict = Compatibility.evaluate(head.protocol, entry)
    val plan = if (forWrites) verdict.dropForWrite else verdict.dropForRead
    val blockers = if (forWrites) verdict.writeBlockers else verdict.readBlockers
    // Protocol versions above the client's maximum are blockers no single drop removes.
    val versionBlockers = blockers.filterNot(b => plan.exists(_.feature == b))
    // A feature the table's catalog requires of every table it manages cannot go either.
    val requiredByCatalog = log.catalog.fold(Set.empty[String])(_.requiredFeatures)
    val undroppable =
      plan.filter(f => !f.droppable || requiredByCatalog(f.feature)).map(_.feature) ++
        versionBlockers
    if (undroppable.nonEmpty)
      throw ErrorConditions.clientNeedsUndroppable(
        table = displayName,
        client = entry.id,
        access = access,
        features = undroppable
      )
    if (forWrites && verdict.writeNeedsTruncateHistory && !truncateHistory)
      throw ErrorConditions.InvalidArgument.clientNeedsTruncateHistory(
        client = entry.id,
        table = displayName
      )
    plan.map(_.feature).flatMap { name =>
      val feature = DroppableFeatures.lookup(name, displayName)
      // Per feature: TRUNCATE HISTORY applies to reader-writer features and is how
      // checkpointProtection itself goes; writer features have no history to truncate.
      val truncate = DroppableFeatures.isCheckpointProtection(feature) ||
        (truncateHistory && DroppableFeatures.needsBarrier(feature))
      // Each drop starts from the version the previous one left (the plan's first from `head`).
      val latest = if (dryRun || name == plan.head.feature) head else log.latestHead()
      if (dryRun) Some(plannedDrop(latest, name, truncate))
      // A re-run after a crash: what an earlier run dropped is gone.
      else if (!DroppableFeatures.isPresent(latest.protocol, feature.feature)) None
      else Some(dropper.run(latest, name, truncate, dryRun = false))
    }
  }

  /**
   * DROP FEATURE's own plan, when the feature can be dropped from the table as it is now; a feature
   * that other features of the plan still depend on is planned after them, without figures.
   */
  private def plannedDrop(
      head: SnapshotHead,
      name: String,
      truncate: Boolean
  ): DropFeatureResult = {
    val feature = DroppableFeatures.lookup(name, displayName)
    if (DroppableFeatures.dependents(head.protocol, feature).isEmpty)
      dropper.run(head, name, truncate, dryRun = true)
    else DropFeatureResult(
      feature = name,
      mode = if (truncate) DropMode.TruncateHistory else DropMode.Fast,
      status = DropStatus.Planned,
      steps = Seq(DropStep("planned after the features of this plan that depend on it", 0)),
      filesRewritten = 0L,
      bytesRewritten = 0L,
      commitVersions = Nil,
      checkpointVersions = Nil,
      protectedBefore = None,
      readableWithoutFeatureFrom = None,
      historyTruncatedBefore = None
    )
  }
}
