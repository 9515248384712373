package io.github.deltalifecycle.features.dropfeature

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.delta.{
  DeletionVectorsTableFeature,
  DeltaConfigs,
  DomainMetadataTableFeature,
  MaterializedRowCommitVersion,
  MaterializedRowId,
  RowTrackingFeature,
  Snapshot,
  TableFeature
}
import org.apache.spark.sql.delta.RowId.RowTrackingMetadataDomain
import org.apache.spark.sql.delta.actions.{Action, Metadata}
import org.apache.spark.sql.delta.catalog.DeltaTableV2
import org.apache.spark.sql.functions.{col, lower}

/**
 * This project's own removals, for features delta-spark can hold in a table but, on some lines,
 * does not declare removable (delta-spark 3.3 on Spark 3.5 has none of these three). Each follows
 * what delta-spark 4.4 does for the feature, built from pieces every line has, and is used only
 * where the running delta-spark declares no removal of its own: see [[DroppableFeatures]].
 */
object ProjectDroppable {

  val All: Seq[DroppableFeature] = Seq(DeletionVectors, RowTracking, DomainMetadata)

  /**
   * deletionVectors: a reader-writer feature, so the drop writes the barrier. Gone from a version
   * when new deletion vectors are off and no file has one.
   */
  object DeletionVectors extends DroppableFeature {
    def feature: TableFeature = DeletionVectorsTableFeature

    def requiresHistoryProtection: Boolean = true

    def validateRemoval(table: DeltaTableV2, files: TableFiles): Boolean =
      files.deletionVectorsGone

    /**
     * Any retained commit whose files carry deletion vectors or whose metadata turns them on, or
     * the earliest retained checkpoint's live files with them (its tombstones do not count: a
     * client without the feature never reads a removed file).
     */
    def historyContainsFeature(
        spark: SparkSession,
        table: DeltaTableV2,
        snapshot: Snapshot
    ): Boolean = RetainedHistory.uses(
      spark,
      snapshot,
      live = files => files.filter(col("deletionVector").isNotNull),
      actions = col("add.deletionVector").isNotNull ||
        col("remove.deletionVector").isNotNull ||
        lower(col("metaData.configuration").getItem(PropertyKey)) === "true",
      metadata = m => DeltaConfigs.ENABLE_DELETION_VECTORS_CREATION.fromMetaData(m)
    )

    private val PropertyKey = DeltaConfigs.ENABLE_DELETION_VECTORS_CREATION.key

    def preparation(context: PreparationContext): FeaturePreparation =
      FeaturePreparation.deletionVectorPurge(this, context)

    def actionsAtDowngrade(snapshot: Snapshot): Seq[Action] = Nil

    // The preparation already unset the property.
    def downgradedMetadata(metadata: Metadata): Metadata = metadata
  }

  /**
   * A writer feature's removal: no barrier (delta-spark 4.4 decides the same for rowTracking and
   * domainMetadata: what past versions hold of them is not worth one), so no history check either,
   * as TRUNCATE HISTORY applies only to features with history protection.
   */
  sealed trait WriterFeatureRemoval extends DroppableFeature {
    final def requiresHistoryProtection: Boolean = false

    final def historyContainsFeature(
        spark: SparkSession,
        table: DeltaTableV2,
        snapshot: Snapshot
    ): Boolean = false
  }

  /**
   * rowTracking: a writer feature whose traces are the property, the row IDs and commit versions on
   * files, the materialized column names and the high-water mark. The preparation turns it off and
   * takes the row IDs off the files; the downgrade commit drops the names and the mark, as
   * delta-spark 4.4 does, because writers use them while the feature is in the protocol.
   */
  object RowTracking extends WriterFeatureRemoval {
    def feature: TableFeature = RowTrackingFeature

    def validateRemoval(table: DeltaTableV2, files: TableFiles): Boolean =
      !DeltaConfigs.ROW_TRACKING_ENABLED.fromMetaData(files.snapshot.metadata) &&
        files.withRowIds == 0

    def preparation(context: PreparationContext): FeaturePreparation =
      FeaturePreparation.rowIdRemoval(this, context)

    def actionsAtDowngrade(snapshot: Snapshot): Seq[Action] =
      RowTrackingMetadataDomain.fromSnapshot(snapshot).map(
        _.toDomainMetadata.copy(removed = true)
      ).toSeq

    def downgradedMetadata(metadata: Metadata): Metadata = metadata.copy(configuration =
      metadata.configuration -- Seq(
        DeltaConfigs.ROW_TRACKING_ENABLED.key,
        MaterializedRowId.MATERIALIZED_COLUMN_NAME_PROP,
        MaterializedRowCommitVersion.MATERIALIZED_COLUMN_NAME_PROP
      )
    )
  }

  /**
   * domainMetadata: a writer feature, droppable once no feature that needs it is left (the drop
   * checks dependents first), so any domain still in the table is a leftover to remove.
   */
  object DomainMetadata extends WriterFeatureRemoval {
    def feature: TableFeature = DomainMetadataTableFeature

    def validateRemoval(table: DeltaTableV2, files: TableFiles): Boolean =
      files.snapshot.domainMetadata.isEmpty

    def preparation(context: PreparationContext): FeaturePreparation =
      FeaturePreparation.domainRemoval(this, context)

    def actionsAtDowngrade(snapshot: Snapshot): Seq[Action] = Nil

    def downgradedMetadata(metadata: Metadata): Metadata = metadata
  }
}
