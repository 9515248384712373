package io.github.deltalifecycle.shims

import org.apache.spark.sql.delta.{CatalogOwnedTableFeature, Snapshot}
import org.apache.spark.sql.delta.actions.CommitInfo
import org.apache.spark.sql.delta.catalog.DeltaTableV2

/** delta-spark calls whose API differs between lines (Spark 4 lines: delta-spark 4.4). */
object DeltaShim {

  /** The protocol feature of catalog-managed tables, as delta-spark names it. */
  val CatalogManagedFeatureName: String = CatalogOwnedTableFeature.name

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
    txnId = Some(txnId),
    lastManifestCommit = None
  )

  /** delta-spark checkpoints `snapshot` of `table`. */
  def checkpoint(table: DeltaTableV2, snapshot: Snapshot): Unit = table.checkpoint(snapshot)
}
