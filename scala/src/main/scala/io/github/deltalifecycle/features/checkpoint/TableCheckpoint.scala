package io.github.deltalifecycle.features.checkpoint

import io.github.deltalifecycle.core._
import org.apache.spark.internal.Logging
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.catalog.CatalogTable
import org.apache.spark.sql.delta.catalog.DeltaTableV2

/** What `CHECKPOINT` did (or, for a DRY RUN, would do) with the earlier checkpoint's pieces. */
final case class CheckpointResult(
    version: Long,
    baseVersion: Option[Long],
    kind: String,
    status: String,
    reason: Option[String],
    commits: Int,
    reused: Seq[String],
    rewritten: Seq[String],
    written: Seq[String],
    reusedBytes: Long,
    rewrittenBytes: Long,
    writtenBytes: Long
)

object CheckpointResult {
  val Written = "written"
  val WouldWrite = "would write"
  val WrittenInFull = "written in full"
  val WouldWriteInFull = "would write in full"
  val Exists = "exists"
}

/**
 * A checkpoint of a table's latest version at the cost of what changed since its newest checkpoint
 * ([[IncrementalCheckpoint]]); where it cannot be written that way (the table has no checkpoint
 * yet, its schema or checkpoint policy changed since, the tail is long), delta-spark writes it in
 * full, and the result says why. A catalog-managed table is checkpointed at its newest version in
 * `_delta_log`: the catalogManaged RFC allows any client checkpoints of backfilled versions only. A
 * table whose commits go through a coordinator, or a catalog-managed one named by its path, is
 * refused as the other statements that write its log refuse it.
 */
final class TableCheckpoint(
    spark: SparkSession,
    log: TableLog,
    catalogTable: Option[CatalogTable]
) extends Logging {

  def run(dryRun: Boolean): CheckpointResult =
    Progress.run(spark, "CHECKPOINT", if (dryRun) 1 else 2) { progress =>
      progress.start("plan: the checkpoint's path columns and the commits after it")
      val listing = log.tailListing()
      CommitCoordination.requireWritable(log, listing, "checkpoint")
      val version = listing.backfilledThrough
      listing.checkpointsAt(version).headOption match {
        case Some(existing) => exists(existing)
        case None if dryRun =>
          IncrementalCheckpoint.plan(spark, log, listing, version).fold(
            reason => full(version, CheckpointResult.WouldWriteInFull, reason, Nil, 0L),
            planned
          )
        case None =>
          progress.start(s"write the checkpoint of version $version")
          IncrementalCheckpoint.attempt(spark, log, listing, version, () => ()).fold(
            reason => {
              progress.info(s"writing the checkpoint of version $version in full: $reason")
              val checkpoint = inFull()
              full(
                checkpoint.version,
                CheckpointResult.WrittenInFull,
                reason,
                checkpoint.files.map(_.name),
                checkpoint.sizeInBytes
              )
            },
            written
          )
      }
    }

  /** delta-spark's checkpoint of the latest version, its state rebuilt; returns it as listed. */
  private def inFull(): LogCheckpoint = DeltaState.checkpointLatest(
    DeltaTableV2(spark, log.tablePath, catalogTable, options = log.storageOptions),
    log
  )

  private def exists(checkpoint: LogCheckpoint) = CheckpointResult(
    checkpoint.version,
    None,
    checkpoint.kind.name,
    CheckpointResult.Exists,
    None,
    0,
    Nil,
    Nil,
    Nil,
    0L,
    0L,
    0L
  )

  private def planned(plan: CheckpointPlan) = CheckpointResult(
    plan.version,
    Some(plan.base.version),
    plan.base.kind.name,
    CheckpointResult.WouldWrite,
    None,
    plan.commits,
    plan.reused.map(_.description),
    plan.rewritten.map(_.description),
    Nil,
    plan.reused.map(_.bytes).sum,
    plan.rewritten.map(_.bytes).sum,
    0L
  )

  private def written(checkpoint: WrittenCheckpoint) =
    planned(checkpoint.plan).copy(
      status = CheckpointResult.Written,
      written = checkpoint.written,
      writtenBytes = checkpoint.writtenBytes
    )

  private def full(version: Long, status: String, reason: String, files: Seq[String], bytes: Long) =
    CheckpointResult(
      version,
      None,
      "",
      status,
      Some(reason),
      0,
      Nil,
      Nil,
      files,
      0L,
      0L,
      bytes
    )
}
