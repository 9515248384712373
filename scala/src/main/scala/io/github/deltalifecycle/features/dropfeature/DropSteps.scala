package io.github.deltalifecycle.features.dropfeature

import io.github.deltalifecycle.core.{ErrorConditions, _}
import io.github.deltalifecycle.features.dropfeature.DropPlan.Step
import org.apache.spark.sql.delta.{CheckpointProtectionTableFeature, DeltaConfigs, DeltaOperations}
import org.apache.spark.sql.delta.actions.{AddFile, Metadata, RemoveFile}
import org.apache.spark.sql.delta.catalog.DeltaTableV2

/**
 * The steps the drop flows ([[DropFlows]]) are made of: the preparation, the barrier of protected
 * checkpoints, checkpoints on empty commits, the downgrade commit and the checkpoint after it. Each
 * is a [[DropPlan.Step]]: what DRY RUN reports and what the run does, from the same value.
 */
private[dropfeature] final class DropSteps(
    log: TableLog,
    table: => DeltaTableV2,
    commits: DropCommits,
    files: TableFileState
) {
  import DropFeature.BarrierSize
  import DropSteps._

  def prepare(
      head: SnapshotHead,
      preparation: FeaturePreparation,
      planned: Seq[DropStep],
      crashPoint: String
  ): Step =
    Step(s"prepare (${describe(planned)})", planned) { run =>
      preparation.run(() => requireRewritePermission())
      FaultInjection.step(crashPoint)
      val (files, bytes) = rewritten(head.version, log.tailListing().latestVersion)
      run.filesRewritten = files
      run.bytesRewritten = bytes
    }

  /**
   * On a catalog-managed table, this project's own rewrite of data files is maintenance the
   * catalog, or the administrator where it gives no answer, must permit.
   */
  def requireRewritePermission(): Unit =
    log.catalog.foreach(_.requirePermission(table.name(), MaintenanceOperation.DataReorganization))

  def writeBarrier: Step = Step(
    s"write the barrier of $BarrierSize protected checkpoints",
    Seq(DropStep(
      s"write $BarrierSize empty commits, each with a checkpoint: the protected barrier",
      BarrierSize
    )),
    checkpointed = true
  )(run => run.checkpoints ++= run.barrier.write(BarrierSize)._2)

  def checkpointOnEmptyCommit(label: String, report: String): Step =
    Step(label, Seq(DropStep(report, 1)), checkpointed = true) { run =>
      run.checkpoints :+= run.barrier.checkpointOnEmptyCommit()
    }

  def downgrade(
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

  def checkpointDowngraded: Step = Step(
    "checkpoint the downgraded version",
    Seq(DropStep("checkpoint the downgraded version", 0)),
    checkpointed = true
  )(run => run.checkpoints :+= run.barrier.checkpointLatest().version)

  /**
   * The downgrade commit, on top of the latest version: checked and computed from that version,
   * committed ([[DropCommits]]), moved past appends that land meanwhile (the protection boundary is
   * the version the commit gets) and decided again from the new latest version after any other
   * commit. Writers that started before it fail their own conflict check on the protocol change.
   */
  private def commitDowngrade(feature: DroppableFeature, mode: DropMode, protect: Boolean): Long = {
    val operation =
      DeltaOperations.DropTableFeature(feature.name, mode == DropMode.TruncateHistory)
    commits.replanning(operation) { snapshot =>
      if (
        !DroppableFeatures.isCheckpointProtection(feature) &&
        !feature.validateRemoval(table, files.at(snapshot))
      ) throw ErrorConditions.featureTracesRemain(
        feature = feature.name,
        version = snapshot.version
      )
      val protocol =
        DroppableFeatures.protocolAfterDrop(snapshot.protocol, feature.feature, protect)
      version => {
        val metadata = downgradedMetadata(feature, snapshot.metadata, protect, version)
        Seq(protocol) ++ Option.when(metadata != snapshot.metadata)(metadata) ++
          feature.actionsAtDowngrade(snapshot)
      }
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

  private def describe(steps: Seq[DropStep]): String =
    if (steps.isEmpty) "nothing to rewrite" else steps.map(_.description).mkString("; ")
}

private[dropfeature] object DropSteps {

  /** The checkpoint protection boundary's table property. */
  val ProtectionKey: String = DeltaConfigs.REQUIRE_CHECKPOINT_PROTECTION_BEFORE_VERSION.key
}
