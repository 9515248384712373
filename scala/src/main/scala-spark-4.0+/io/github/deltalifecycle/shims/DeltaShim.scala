package io.github.deltalifecycle.shims

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.delta.{CatalogOwnedTableFeature, RemovableFeature, Snapshot}
import org.apache.spark.sql.delta.actions.{Action, DropTableFeatureUtils, Metadata}
import org.apache.spark.sql.delta.catalog.DeltaTableV2
import org.apache.spark.sql.delta.sources.DeltaSQLConf
import org.apache.spark.sql.internal.SQLConf

/** delta-spark calls whose API differs between lines (Spark 4 lines: delta-spark 4.4). */
object DeltaShim {

  /** The protocol feature of catalog-managed tables, as delta-spark names it. */
  val CatalogManagedFeatureName: String = CatalogOwnedTableFeature.name

  /** delta-spark checkpoints `snapshot` of `table`. */
  def checkpoint(table: DeltaTableV2, snapshot: Snapshot): Unit = table.checkpoint(snapshot)

  // ---- DROP FEATURE: delta-spark's RemovableFeature API ----------------------------------------

  /** delta-spark's check that the latest version no longer uses the feature. */
  def validateDropInvariants(
      feature: RemovableFeature,
      table: DeltaTableV2,
      snapshot: Snapshot
  ): Boolean = feature.validateDropInvariants(table, snapshot)

  /** delta-spark's check of the retained history for traces of the feature. */
  def historyContainsFeature(
      feature: RemovableFeature,
      spark: SparkSession,
      table: DeltaTableV2,
      snapshot: Snapshot
  ): Boolean = feature.historyContainsFeature(spark, table, snapshot)

  /** Runs delta-spark's pre-downgrade command of the feature. */
  def removeFeatureTraces(
      feature: RemovableFeature,
      table: DeltaTableV2,
      spark: SparkSession
  ): Unit =
    feature.preDowngradeCommand(table).removeFeatureTracesIfNeeded(spark)

  /** The actions delta-spark adds to the downgrade commit of the feature. */
  def actionsAtDowngrade(feature: RemovableFeature, snapshot: Snapshot): Seq[Action] =
    feature.actionsToIncludeAtDowngradeCommit(snapshot)

  /** The metadata without the properties delta-spark removes at the downgrade commit. */
  def downgradedMetadata(feature: RemovableFeature, metadata: Metadata): Metadata =
    DropTableFeatureUtils.getDowngradedProtocolMetadata(feature, metadata)

  /** delta-spark's barrier size: how many protected checkpoints the fast drop writes. */
  val BarrierCheckpoints: Int = DropTableFeatureUtils.NUMBER_OF_BARRIER_CHECKPOINTS

  /** Whether the fast drop of deletionVectors commits the deletion-vector tombstones. */
  def generatesDvTombstones: Boolean =
    SQLConf.get.getConf(DeltaSQLConf.FAST_DROP_FEATURE_GENERATE_DV_TOMBSTONES)
}
