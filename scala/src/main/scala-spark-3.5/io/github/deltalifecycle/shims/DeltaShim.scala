package io.github.deltalifecycle.shims

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.delta.{RemovableFeature, Snapshot}
import org.apache.spark.sql.delta.actions.{Action, Metadata}
import org.apache.spark.sql.delta.catalog.DeltaTableV2

/** delta-spark calls whose API differs between lines (Spark 3.5: delta-spark 3.3). */
object DeltaShim {

  /**
   * The protocol feature of catalog-managed tables, as delta-spark 4 names it; delta-spark 3.3 does
   * not know the feature.
   */
  val CatalogManagedFeatureName: String = "catalogManaged"

  /** delta-spark checkpoints `snapshot` of `table` (DeltaTableV2 has no checkpoint in 3.3). */
  def checkpoint(table: DeltaTableV2, snapshot: Snapshot): Unit =
    table.deltaLog.checkpoint(snapshot)

  // ---- DROP FEATURE: delta-spark 3.3's RemovableFeature API -------------------------------------

  /** delta-spark 3.3's check that the latest version no longer uses the feature. */
  def validateDropInvariants(
      feature: RemovableFeature,
      table: DeltaTableV2,
      snapshot: Snapshot
  ): Boolean = feature.validateRemoval(snapshot)

  /** delta-spark 3.3's check of the retained history for traces of the feature. */
  def historyContainsFeature(
      feature: RemovableFeature,
      spark: SparkSession,
      table: DeltaTableV2,
      snapshot: Snapshot
  ): Boolean = feature.historyContainsFeature(spark, snapshot)

  /** Runs delta-spark 3.3's pre-downgrade command of the feature (it takes no session). */
  def removeFeatureTraces(
      feature: RemovableFeature,
      table: DeltaTableV2,
      spark: SparkSession
  ): Unit =
    feature.preDowngradeCommand(table).removeFeatureTracesIfNeeded()

  /** delta-spark 3.3 adds no actions to a downgrade commit. */
  def actionsAtDowngrade(feature: RemovableFeature, snapshot: Snapshot): Seq[Action] = Nil

  /**
   * delta-spark 3.3 removes no table property at the downgrade commit: the pre-downgrade commands
   * unset what the feature needs unset.
   */
  def downgradedMetadata(feature: RemovableFeature, metadata: Metadata): Metadata = metadata

  /**
   * The barrier size of delta-spark 4.x (which 3.3 does not name): readers fall back up to two
   * checkpoints, so a third makes them give up before the boundary.
   */
  val BarrierCheckpoints: Int = 3

  /**
   * delta-spark 3.3 cannot drop deletionVectors; this project's drop of it always records the
   * tombstones, as delta-spark 4.4 does by default.
   */
  def generatesDvTombstones: Boolean = true
}
