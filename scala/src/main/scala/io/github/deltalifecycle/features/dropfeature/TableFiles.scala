package io.github.deltalifecycle.features.dropfeature

import io.github.deltalifecycle.core._
import io.github.deltalifecycle.shims.ReorgShim
import org.apache.spark.sql.{Column, Dataset, SparkSession}
import org.apache.spark.sql.delta.{DeltaLog, Snapshot}
import org.apache.spark.sql.delta.actions.{Action, AddFile, RemoveFile}
import org.apache.spark.sql.delta.commands.DeletionVectorUtils
import org.apache.spark.sql.delta.implicits._
import org.apache.spark.sql.functions.{coalesce, col, count, lit, sum}
import org.apache.spark.sql.types.StructType

/**
 * What a drop asks about the files of `snapshot`'s version, answered from the table's log: the
 * newest checkpoint's columns that the question needs, with its condition pushed down, and the
 * commits after it ([[FileState]]). Never a reconstruction of the table's whole state, and never
 * the files on the driver: each answer is a Spark job that brings back a few numbers, or a
 * distributed Dataset. Each figure is computed once, on first use.
 */
final class TableFiles(spark: SparkSession, log: TableLog, val snapshot: Snapshot) {

  private lazy val listing = log.listingFor(snapshot.version)

  private def scan(query: FileQuery) =
    FileState.of(spark, log, listing, snapshot.version, query)

  /** The files with deletion vectors. */
  lazy val withDeletionVectors: FileTally = FileState.tally(scan(FileState.withDeletionVectors))

  /**
   * delta-spark's check that the version holds no deletion-vector trace (deletionVectors'
   * `validateDropInvariants`): new deletion vectors are off and no live file has one. delta-spark
   * counts the files from its snapshot's state, which it rebuilds in full when no version checksum
   * gives the count; here the count is [[withDeletionVectors]].
   */
  def deletionVectorsGone: Boolean =
    !DeletionVectorUtils.deletionVectorsWritable(snapshot) && withDeletionVectors.files == 0

  /** The live files that `where` keeps, whole (every field of delta-spark's `AddFile`). */
  def addFiles(where: Column): Dataset[AddFile] =
    scan(FileQuery(FileActionKind.Add, TableFiles.AddFields, where)).select("add.*").as[AddFile]

  /** The condition on files carrying a row ID or a row commit version. */
  private val rowIds = col("add.baseRowId").isNotNull ||
    col("add.defaultRowCommitVersion").isNotNull

  /** The files with a row ID or a row commit version. */
  def filesWithRowIds: Dataset[AddFile] = addFiles(rowIds)

  /** How many files carry a row ID or a row commit version. */
  lazy val withRowIds: Long = FileState.tally(
    scan(FileQuery(FileActionKind.Add, Seq("size", "baseRowId", "defaultRowCommitVersion"), rowIds))
  ).files

  /**
   * Files written with a narrower type than the schema's (type widening): delta-spark's own file
   * filter decides, reading Parquet footers in the tasks of a Spark job over the live files
   * (task-safe on a cluster, see ReorgShim); the driver receives the two totals. Only a table whose
   * schema records type changes asks for it.
   */
  def writtenNarrower: FileTally = {
    val files = addFiles(col("add.path").isNotNull)
    val totals = ReorgShim.filesWrittenWithOtherTypes(snapshot, files)
      .agg(count(lit(1)), coalesce(sum(col("size")), lit(0L)))
      .head()
    FileTally(totals.getLong(0), totals.getLong(1))
  }

  /**
   * The version's tombstones, as delta-spark's snapshot keeps them: the removes not yet past the
   * table's tombstone retention, with their deletion vectors.
   */
  def tombstones: Dataset[RemoveFile] = {
    val retainedFrom = snapshot.deltaLog.clock.getTimeMillis() -
      DeltaLog.tombstoneRetentionMillis(snapshot.metadata)
    val query = FileQuery(
      FileActionKind.Remove,
      TableFiles.RemoveFields,
      col("remove.deletionTimestamp") > retainedFrom
    )
    scan(query).select("remove.*").as[RemoveFile]
  }
}

object TableFiles {

  private def fieldsOf(action: String): Seq[String] =
    Action.logSchema(action).dataType.asInstanceOf[StructType].fieldNames.toSeq

  private lazy val AddFields = fieldsOf("add")
  private lazy val RemoveFields = fieldsOf("remove")
}

/** The files of any version of one table, for a drop's plan and its steps. */
final class TableFileState(spark: SparkSession, log: TableLog) {
  def at(snapshot: Snapshot): TableFiles = new TableFiles(spark, log, snapshot)
}
