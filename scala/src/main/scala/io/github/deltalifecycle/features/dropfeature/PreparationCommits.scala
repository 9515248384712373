package io.github.deltalifecycle.features.dropfeature

import io.github.deltalifecycle.core.OutOfMemory
import io.github.deltalifecycle.shims.ReorgShim
import org.apache.spark.sql.Encoders
import org.apache.spark.sql.delta.DeltaOperations
import org.apache.spark.sql.delta.actions.{DeletionVectorDescriptor, RemoveFile}
import org.apache.spark.sql.delta.catalog.DeltaTableV2
import org.apache.spark.sql.functions.col

/**
 * The commits a preparation makes itself, as the drop makes its other commits ([[DropCommits]]):
 * planned on the latest version and planned again when another writer's commit lands first.
 */
private[dropfeature] object PreparationCommits {

  /**
   * delta-spark's tombstones for deletion-vector files: every file a remove within the retention
   * references, unless a remove of that file is already there. A Spark job over the latest
   * version's tombstones finds them; only their paths reach the driver. Committed as the drop's
   * other commits are, planned again from the new latest version when another writer's commit lands
   * first.
   */
  def dvTombstones(table: DeltaTableV2, context: PreparationContext): Unit =
    context.commits.replanning(ReorgShim.DvTombstonesOperation) { snapshot =>
      val tombstones = tombstonesOf(table, context.files.at(snapshot))
      _ => tombstones
    }

  private def tombstonesOf(table: DeltaTableV2, files: TableFiles): Seq[RemoveFile] = {
    val dataPath = table.deltaLog.dataPath
    val inlineMarker = DeletionVectorDescriptor.INLINE_DV_MARKER
    val removes = files.tombstones
    val dvFiles = removes
      .filter(col("deletionVector").isNotNull)
      .flatMap { remove =>
        val dv = remove.deletionVector
        if (dv.storageType == inlineMarker) None else ReorgShim.relativeDvPath(dv, dataPath)
      }(Encoders.STRING)
      .toDF("path")
      .distinct()
    val recorded = removes.filter(col("deletionVector").isNull).select("path")
    val now = table.deltaLog.clock.getTimeMillis()
    val paths = dvFiles.join(recorded, Seq("path"), "left_anti").as(Encoders.STRING).rdd
    OutOfMemory.guarded(paths).toLocalIterator
      .map(path => RemoveFile(path, Some(now), dataChange = false))
      .toList
  }

  /**
   * Unsets the table property `key` as delta-spark's `ALTER TABLE UNSET TBLPROPERTIES IF EXISTS`
   * does (the same metadata, the same operation in the history), committed as the drop's other
   * commits are. delta-spark's own command would first rebuild the table's whole state to derive a
   * version checksum when the table has none.
   */
  def unsetProperty(context: PreparationContext, key: String): Unit =
    context.commits.replanning(DeltaOperations.UnsetTableProperties(Seq(key), ifExists = true)) {
      snapshot =>
        val metadata = snapshot.metadata
        _ => Seq(metadata.copy(configuration = metadata.configuration - key))
    }
}
