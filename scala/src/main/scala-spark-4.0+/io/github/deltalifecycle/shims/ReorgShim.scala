package io.github.deltalifecycle.shims

import org.apache.hadoop.fs.Path
import org.apache.spark.sql.{Dataset, SparkSession}
import org.apache.spark.sql.delta.{
  DeltaColumnMapping,
  DeltaOperations,
  Snapshot,
  SnapshotDescriptor
}
import org.apache.spark.sql.delta.actions.{AddFile, DeletionVectorDescriptor}
import org.apache.spark.sql.delta.commands.{
  DeltaPurgeOperation,
  DeltaReorgOperation,
  DeltaRewriteTypeWideningOperation,
  ReorgTableHelper
}
import org.apache.spark.sql.delta.implicits._
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.types.StructType
import org.apache.spark.util.SerializableConfiguration

/**
 * delta-spark's REORG file filters, made safe for tasks in other JVMs (Spark 4 lines: delta-spark
 * 4.4).
 *
 * delta-spark 4.4's `ReorgTableHelper.filterParquetFilesOnExecutors` asks `SparkSession.active` for
 * the SQL settings inside `mapPartitions`; an executor of a cluster has no session, so its REORG
 * PURGE and REWRITE_TYPE_WIDENING fail there ("No active or default Spark session found"). The
 * filter below reads the settings with `SQLConf.get`, which in a task returns the driver's settings
 * that Spark ships with every SQL job. (Capturing the driver's `SQLConf` would not do: its settings
 * map is transient and arrives empty.) Everything else, the footer reading and the decision per
 * file, is delta-spark's own code.
 */
trait TaskSafeFooterFilter extends ReorgTableHelper {

  override protected def filterParquetFilesOnExecutors(
      spark: SparkSession,
      files: Seq[AddFile],
      snapshot: SnapshotDescriptor,
      ignoreCorruptFiles: Boolean
  )(filterFileFn: StructType => Boolean): Seq[AddFile] =
    matching(files.toDS(spark), snapshot, ignoreCorruptFiles)(filterFileFn).collect().toSeq

  /** The files of `files` whose Parquet schema satisfies `filterFileFn`, as a distributed job. */
  protected def matching(
      files: Dataset[AddFile],
      snapshot: SnapshotDescriptor,
      ignoreCorruptFiles: Boolean
  )(filterFileFn: StructType => Boolean): Dataset[AddFile] = {
    val hadoopConf = new SerializableConfiguration(snapshot.deltaLog.newDeltaHadoopConf())
    val dataPath = new Path(snapshot.dataPath.toString)
    files.mapPartitions { partition =>
      filterParquetFiles(
        SQLConf.get,
        partition.toList,
        dataPath,
        hadoopConf.value,
        ignoreCorruptFiles
      )(filterFileFn).iterator
    }
  }
}

/** delta-spark's REORG PURGE file choice, task-safe. */
final class TaskSafePurge extends DeltaPurgeOperation with TaskSafeFooterFilter

/** delta-spark's REORG REWRITE_TYPE_WIDENING file choice, task-safe. */
final class TaskSafeTypeWideningRewrite
    extends DeltaRewriteTypeWideningOperation
    with TaskSafeFooterFilter {

  /**
   * The files of `files`, `snapshot`'s live files, written with another type than the schema's, as
   * a distributed job.
   */
  def filesWrittenWithOtherTypes(snapshot: Snapshot, files: Dataset[AddFile]): Dataset[AddFile] = {
    val physicalSchema = DeltaColumnMapping.renameColumns(snapshot.schema)
    matching(files, snapshot, ignoreCorruptFiles = false)(
      fileHasDifferentTypes(_, physicalSchema)
    )
  }
}

/** The REORG operations and deletion-vector details the drop's preparation uses, per line. */
object ReorgShim {

  def purge: DeltaReorgOperation = new TaskSafePurge

  def typeWideningRewrite: TaskSafeTypeWideningRewrite = new TaskSafeTypeWideningRewrite

  /**
   * The files of `files`, `snapshot`'s live files, that REORG REWRITE_TYPE_WIDENING rewrites, as a
   * distributed job.
   */
  def filesWrittenWithOtherTypes(snapshot: Snapshot, files: Dataset[AddFile]): Dataset[AddFile] =
    typeWideningRewrite.filesWrittenWithOtherTypes(snapshot, files)

  /**
   * The deletion-vector file of `dv` relative to the table, URL-encoded as a remove action records
   * it; None for a file outside the table's directory. `dv` is stored in a file.
   */
  def relativeDvPath(dv: DeletionVectorDescriptor, dataPath: Path): Option[String] =
    dv.urlEncodedRelativePathIfExists(dataPath)

  /** The operation of the commit that records deletion-vector files as tombstones. */
  val DvTombstonesOperation: DeltaOperations.Operation =
    DeltaOperations.AddDeletionVectorsTombstones
}
