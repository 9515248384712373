package io.github.deltalifecycle.core

import scala.jdk.CollectionConverters._

import org.apache.hadoop.conf.Configuration
import org.apache.spark.sql.{Column, DataFrame, Encoders, SparkSession}
import org.apache.spark.sql.delta.actions.{Action, AddFile, FileAction, RemoveFile}
import org.apache.spark.sql.functions._
import org.apache.spark.sql.types.{StructField, StructType}

/** A number of files and their total size. */
final case class FileTally(files: Long, bytes: Long)

/** The two kinds of file action a version's state holds: its live files and their tombstones. */
sealed abstract class FileActionKind(val column: String)
object FileActionKind {
  case object Add extends FileActionKind("add")
  case object Remove extends FileActionKind("remove")
}

/**
 * What a plan asks of a version's files: the actions of `kind` that `where` keeps (a condition on
 * the `add` or `remove` column), with `fields` of them besides their path and deletion vector. Only
 * those fields are read, so `fields` names every one `where` tests.
 */
final case class FileQuery(kind: FileActionKind, fields: Seq[String], where: Column) {
  def column: String = kind.column
}

/**
 * The files of a table at one version, answered from the newest checkpoint at or below it and the
 * commits after it, never from a reconstruction of the whole state: a checkpoint is already
 * reconciled, so only the commits after it (or the compactions that cover them) need reconciling.
 *
 * The checkpoint (classic, multi-part, or V2 with its sidecars) is read by Spark's Parquet reader
 * with only the columns the question needs and its condition pushed down, so row groups without a
 * match are skipped on their statistics. The commits after it are reconciled on the driver when
 * they are small ([[DriverTailBytes]]): a remove or re-add there overrides the checkpoint's row of
 * the same file (canonical path and deletion vector, as PROTOCOL.md keys them), and the driver
 * holds only those commits' actions. A longer tail (or a table without a checkpoint) is reconciled
 * in a Spark job instead, as delta-spark does, with the same columns pruned and the checkpoint's
 * rows filtered before the shuffle. Either way the result is a DataFrame that no driver-side
 * collection holds, with one column named after the kind.
 */
object FileState {

  /**
   * The most JSON bytes of commits after the checkpoint reconciled on the driver: about 60,000
   * actions, a few tens of MB of heap at most.
   */
  val DriverTailBytes: Long = 16L << 20

  /** Whether the file action of `kind` carries a deletion vector (a pushable condition). */
  def hasDeletionVector(kind: FileActionKind): Column =
    col(s"${kind.column}.deletionVector.storageType").isNotNull

  /** The files with deletion vectors: their paths and sizes. */
  def withDeletionVectors: FileQuery =
    FileQuery(FileActionKind.Add, Seq("size"), hasDeletionVector(FileActionKind.Add))

  /** Every live file. */
  def allFiles(fields: Seq[String] = Seq("size")): FileQuery =
    FileQuery(FileActionKind.Add, fields, col("add.path").isNotNull)

  /**
   * The actions that `query` asks for at `version` of `log`, planned on `listing`. The listing and
   * the table's Hadoop configuration are the caller's.
   */
  def of(
      spark: SparkSession,
      log: TableLog,
      listing: LogListing,
      version: Long,
      query: FileQuery,
      driverTailBytes: Long = DriverTailBytes
  ): DataFrame = {
    val (segment, _) = log.readableSegment(version, listing)
    val schema = readSchema(query)
    val options = readerOptions(log.hadoopConf)
    val fromCheckpoint = segment.checkpoint.map(c => checkpointRows(spark, log, c, schema, options))
    val tailBytes = segment.steps.map(_.fold(_.status.getLen, _.status.getLen)).sum
    val keys = new FileKeys(log.fs, log.tablePath)
    if (segment.commits.isEmpty) fromCheckpoint.getOrElse(empty(spark, schema)).where(query.where)
    else if (fromCheckpoint.isDefined && tailBytes <= driverTailBytes)
      reconciledOnDriver(spark, log, segment, query, schema, keys, fromCheckpoint.get)
    else FileStateJob.reconciled(spark, segment, query, schema, options, keys, fromCheckpoint)
  }

  /** The count and total size of `files`, a result of [[of]] for added files (one Spark job). */
  def tally(files: DataFrame): FileTally = {
    val row = files.agg(count(lit(1)), coalesce(sum(col("add.size")), lit(0L))).head()
    FileTally(row.getLong(0), row.getLong(1))
  }

  /** The actions' schema as delta-spark writes it, restricted to what `query` reads. */
  private def readSchema(query: FileQuery): StructType = {
    val full = Action.logSchema(query.column).dataType.asInstanceOf[StructType]
    val wanted = (Seq("path", "deletionVector") ++ query.fields).distinct
    StructType(Seq(StructField(query.column, StructType(wanted.map(full(_))))))
  }

  /**
   * The file-system settings of the table's configuration, which Spark's readers take as options.
   */
  private[core] def readerOptions(conf: Configuration): Map[String, String] =
    conf.iterator().asScala.map(e => e.getKey -> e.getValue)
      .filter { case (k, _) => k.startsWith("fs.") || k.startsWith("dfs.") }.toMap

  /**
   * The rows of a checkpoint: its Parquet parts, or a V2 checkpoint's manifest (JSON or Parquet)
   * and the sidecars it names.
   */
  private[core] def checkpointRows(
      spark: SparkSession,
      log: TableLog,
      checkpoint: LogCheckpoint,
      schema: StructType,
      options: Map[String, String]
  ): DataFrame = {
    val (json, parquet) =
      checkpoint.files.map(_.status.getPath.toString).partition(_.endsWith(".json"))
    val sidecars = log.sidecarsOf(checkpoint).map(_.toString)
    val reader = spark.read.options(options).schema(schema)
    val frames = json.map(p => reader.json(p)) ++
      Option.when(parquet.nonEmpty || sidecars.nonEmpty)(reader.parquet(parquet ++ sidecars: _*))
    frames.reduce(_ unionByName _).where(col(schema.head.name).isNotNull)
  }

  private def empty(spark: SparkSession, schema: StructType): DataFrame =
    spark.createDataFrame(spark.sparkContext.emptyRDD[org.apache.spark.sql.Row], schema)

  /**
   * A short tail reconciled on the driver: the last action of each file in it decides; the
   * checkpoint's rows of the files it names are dropped in the scan (a cheap test of the file's
   * name first, the exact key only for the few rows whose name matches), and the tail's own
   * survivors of the kind asked for are added.
   */
  private def reconciledOnDriver(
      spark: SparkSession,
      log: TableLog,
      segment: LogSegment,
      query: FileQuery,
      schema: StructType,
      keys: FileKeys,
      checkpoint: DataFrame
  ): DataFrame = {
    val last = new java.util.LinkedHashMap[FileKey, FileAction]()
    log.stepActions(segment).foreach(_.foreach {
      case f: FileAction if f.isInstanceOf[AddFile] || f.isInstanceOf[RemoveFile] =>
        val key = keys.of(f.path, f.deletionVector)
        last.remove(key) // the newest action of a file goes last
        last.put(key, f)
      case _ =>
    })
    val survivors = last.values().asScala.filter {
      case _: AddFile => query.kind == FileActionKind.Add
      case _ => query.kind == FileActionKind.Remove
    }.map(_.json).toSeq
    val overridden = last.keySet().asScala.toSet
    val kept = checkpoint.where(query.where && !FileStateJob.overriddenBy(overridden, keys, query))
    if (survivors.isEmpty) kept
    else {
      val lines = spark.createDataset(survivors)(Encoders.STRING)
      kept.unionByName(spark.read.schema(schema).json(lines).where(query.where))
    }
  }
}
