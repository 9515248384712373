package io.github.deltalifecycle.core

import scala.jdk.CollectionConverters._

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{ChecksumFileSystem, FileSystem, Path}
import org.apache.parquet.hadoop.{ParquetFileReader, ParquetFileWriter}
import org.apache.parquet.hadoop.metadata.ParquetMetadata
import org.apache.parquet.hadoop.util.{HadoopInputFile, HadoopOutputFile}
import org.apache.spark.sql.SparkSession
import org.apache.spark.util.SerializableConfiguration

/**
 * One Parquet file made of another's row groups, copied as bytes, followed by every row group of a
 * second file (rows written anew); both must have the same Parquet schema. The row groups copied
 * are never decoded: their column chunks move as they are, and only the footer is written anew.
 */
final case class RowGroupMerge(
    source: String,
    keptRowGroups: Seq[Int],
    appended: Option[String],
    target: String
)

object RowGroupMerge {

  /** Runs `merges` as one Spark job, a task each; returns each target's length in bytes. */
  def run(spark: SparkSession, conf: Configuration, merges: Seq[RowGroupMerge]): Seq[Long] =
    if (merges.isEmpty) Nil
    else {
      val shipped = new SerializableConfiguration(conf)
      spark.sparkContext.parallelize(merges, merges.size)
        .map(m => write(m, shipped.value))
        .collect()
        .toSeq
    }

  /** Writes one merge; runs in a task, with the table's Hadoop configuration. */
  def write(merge: RowGroupMerge, conf: Configuration): Long = {
    val source = new Path(merge.source)
    val fs = readable(source.getFileSystem(conf))
    val input = HadoopInputFile.fromStatus(fs.getFileStatus(source), conf)
    val reader = ParquetFileReader.open(input)
    try {
      val footer = reader.getFooter
      val schema = footer.getFileMetaData.getSchema
      val target = new Path(merge.target)
      val writer = new ParquetFileWriter(
        HadoopOutputFile.fromPath(target, conf),
        schema,
        ParquetFileWriter.Mode.CREATE,
        org.apache.parquet.hadoop.ParquetWriter.DEFAULT_BLOCK_SIZE.toLong,
        0
      )
      writer.start()
      val blocks = footer.getBlocks.asScala
      val kept = merge.keptRowGroups.map(blocks(_))
      if (kept.nonEmpty) {
        val stream = input.newStream()
        try writer.appendRowGroups(stream, kept.asJava, false)
        finally stream.close()
      }
      merge.appended.foreach { a =>
        val path = new Path(a)
        writer.appendFile(HadoopInputFile.fromStatus(
          readable(path.getFileSystem(conf))
            .getFileStatus(path),
          conf
        ))
      }
      writer.end(footer.getFileMetaData.getKeyValueMetaData)
      target.getFileSystem(conf).getFileStatus(target).getLen
    } finally reader.close()
  }

  /** The footer of the Parquet file at `path`. */
  def footer(conf: Configuration, path: Path): ParquetMetadata = {
    val fs = readable(path.getFileSystem(conf))
    val reader = ParquetFileReader.open(HadoopInputFile.fromStatus(fs.getFileStatus(path), conf))
    try reader.getFooter
    finally reader.close()
  }

  /**
   * Reads bypass Hadoop's `.crc` sidecars on local file systems, as [[TableLog.readFs]] does: log
   * files copied by other tools often carry stale ones.
   */
  private def readable(fs: FileSystem): FileSystem = fs match {
    case c: ChecksumFileSystem => c.getRawFileSystem
    case other => other
  }
}
