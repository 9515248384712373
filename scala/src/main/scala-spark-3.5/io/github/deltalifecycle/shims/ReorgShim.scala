package io.github.deltalifecycle.shims

import org.apache.hadoop.fs.Path
import org.apache.spark.paths.SparkPath
import org.apache.spark.sql.Dataset
import org.apache.spark.sql.delta.{DeltaColumnMapping, DeltaOperations, Snapshot}
import org.apache.spark.sql.delta.actions.{AddFile, DeletionVectorDescriptor}
import org.apache.spark.sql.delta.commands.{
  DeltaPurgeOperation,
  DeltaReorgOperation,
  DeltaRewriteTypeWideningOperation
}
import org.apache.spark.sql.delta.implicits._
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.util.SerializableConfiguration

/**
 * delta-spark 3.3's REORG type-widening file choice over a distributed file list. Its own filter
 * reads the Parquet settings on the driver and ships them, so it is already safe in tasks.
 */
final class TaskSafeTypeWideningRewrite extends DeltaRewriteTypeWideningOperation {

  /**
   * The files of `files`, `snapshot`'s live files, written with another type than the schema's, as
   * a distributed job.
   */
  def filesWrittenWithOtherTypes(snapshot: Snapshot, files: Dataset[AddFile]): Dataset[AddFile] = {
    val physicalSchema = DeltaColumnMapping.renameColumns(snapshot.schema)
    val hadoopConf = new SerializableConfiguration(snapshot.deltaLog.newDeltaHadoopConf())
    val dataPath = new Path(snapshot.deltaLog.dataPath.toString)
    val binaryAsString = SQLConf.get.isParquetBinaryAsString
    val int96AsTimestamp = SQLConf.get.isParquetINT96AsTimestamp
    files.mapPartitions { partition =>
      filterParquetFiles(
        partition.toList,
        dataPath,
        hadoopConf.value,
        ignoreCorruptFiles = false,
        binaryAsString,
        int96AsTimestamp
      )(fileHasDifferentTypes(_, physicalSchema)).iterator
    }
  }
}

/** The REORG operations and deletion-vector details the drop's preparation uses (Spark 3.5). */
object ReorgShim {

  /** delta-spark 3.3's own purge: its footer filter needs no session in a task. */
  def purge: DeltaReorgOperation = new DeltaPurgeOperation

  def typeWideningRewrite: DeltaReorgOperation = new TaskSafeTypeWideningRewrite

  /**
   * The files of `files`, `snapshot`'s live files, that REORG REWRITE_TYPE_WIDENING rewrites, as a
   * distributed job.
   */
  def filesWrittenWithOtherTypes(snapshot: Snapshot, files: Dataset[AddFile]): Dataset[AddFile] =
    new TaskSafeTypeWideningRewrite().filesWrittenWithOtherTypes(snapshot, files)

  /**
   * The deletion-vector file of `dv` relative to the table, URL-encoded as a remove action records
   * it; None for a file outside the table's directory (delta-spark 3.3 has no such method).
   */
  def relativeDvPath(dv: DeletionVectorDescriptor, dataPath: Path): Option[String] = {
    val relative = dataPath.toUri.relativize(dv.absolutePath(dataPath).toUri)
    if (relative.isAbsolute) None else Some(SparkPath.fromUri(relative).urlEncoded)
  }

  /**
   * The operation of the commit that records deletion-vector files as tombstones: delta-spark 3.3
   * has no operation of that name, and its operations cannot be extended.
   */
  val DvTombstonesOperation: DeltaOperations.Operation = DeltaOperations.ManualUpdate
}
