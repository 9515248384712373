package io.github.deltalifecycle.shims

import org.apache.spark.sql.delta.Snapshot
import org.apache.spark.sql.delta.actions.CommitInfo
import org.apache.spark.sql.delta.catalog.DeltaTableV2

/** delta-spark calls whose API differs between lines (Spark 3.5: delta-spark 3.3). */
object DeltaShim {

  /**
   * The protocol feature of catalog-managed tables, as delta-spark 4 names it; delta-spark 3.3 does
   * not know the feature.
   */
  val CatalogManagedFeatureName: String = "catalogManaged"

  /** The commitInfo of a commit written by this project's committer. */
  def commitInfo(
      time: Long,
      operation: String,
      inCommitTimestamp: Option[Long],
      operationParameters: Map[String, String],
      commandContext: Map[String, String],
      readVersion: Long,
      txnId: String
  ): CommitInfo = CommitInfo(
    time = time,
    operation = operation,
    inCommitTimestamp = inCommitTimestamp,
    operationParameters = operationParameters,
    commandContext = commandContext,
    readVersion = Some(readVersion),
    isolationLevel = Some("Serializable"),
    isBlindAppend = Some(false),
    operationMetrics = None,
    userMetadata = None,
    tags = None,
    txnId = Some(txnId)
  )

  /** delta-spark checkpoints `snapshot` of `table` (DeltaTableV2 has no checkpoint in 3.3). */
  def checkpoint(table: DeltaTableV2, snapshot: Snapshot): Unit =
    table.deltaLog.checkpoint(snapshot)
}
