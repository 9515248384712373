package io.github.deltalifecycle.features.dropfeature

import io.github.deltalifecycle.shims.DeltaShim
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.delta.{
  DeletionVectorsTableFeature,
  RemovableFeature,
  Snapshot,
  TableFeature
}
import org.apache.spark.sql.delta.actions.{Action, Metadata}
import org.apache.spark.sql.delta.catalog.DeltaTableV2

/**
 * A feature DROP FEATURE can remove, with everything the drop asks of it. delta-spark's own
 * `RemovableFeature` cannot be implemented outside delta-spark (it is sealed), so this is the
 * project's: [[DeclaredRemovable]] answers from delta-spark's declaration, [[ProjectDroppable]]
 * from this project's own removal where the running delta-spark declares none.
 */
trait DroppableFeature {
  def feature: TableFeature

  final def name: String = feature.name

  /** Whether readers must be kept from the history that used it: the fast drop writes a barrier. */
  def requiresHistoryProtection: Boolean

  /**
   * Whether the version `files` describes holds no trace of the feature, so the protocol may drop
   * it.
   */
  def validateRemoval(table: DeltaTableV2, files: TableFiles): Boolean

  /** Whether any retained version up to `snapshot` uses the feature (TRUNCATE HISTORY). */
  def historyContainsFeature(spark: SparkSession, table: DeltaTableV2, snapshot: Snapshot): Boolean

  /** What removes the feature's traces from the latest version before the downgrade. */
  def preparation(context: PreparationContext): FeaturePreparation

  /** Actions the downgrade commit carries besides the protocol and metadata. */
  def actionsAtDowngrade(snapshot: Snapshot): Seq[Action]

  /** The metadata without the properties the downgrade commit removes. */
  def downgradedMetadata(metadata: Metadata): Metadata
}

/** A feature the running delta-spark declares removable: every answer is delta-spark's. */
final case class DeclaredRemovable(declared: TableFeature with RemovableFeature)
    extends DroppableFeature {
  def feature: TableFeature = declared

  def requiresHistoryProtection: Boolean = declared.requiresHistoryProtection

  // deletionVectors' check counts the files with deletion vectors, which delta-spark's own takes
  // from a reconstruction of the table's whole state; the same check reads them from the log.
  def validateRemoval(table: DeltaTableV2, files: TableFiles): Boolean =
    if (declared == DeletionVectorsTableFeature) files.deletionVectorsGone
    else DeltaShim.validateDropInvariants(declared, table, files.snapshot)

  def historyContainsFeature(
      spark: SparkSession,
      table: DeltaTableV2,
      snapshot: Snapshot
  ): Boolean = DeltaShim.historyContainsFeature(declared, spark, table, snapshot)

  def preparation(context: PreparationContext): FeaturePreparation =
    FeaturePreparation.forDeclared(this, context)

  def actionsAtDowngrade(snapshot: Snapshot): Seq[Action] =
    DeltaShim.actionsAtDowngrade(declared, snapshot)

  def downgradedMetadata(metadata: Metadata): Metadata =
    DeltaShim.downgradedMetadata(declared, metadata)
}
