package io.github.deltalifecycle.core

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.delta.Snapshot
import org.apache.spark.sql.delta.sources.DeltaSQLConf

/**
 * How work over a table's files is split. Spark caches, shuffles and fetches data by partition, so
 * a partition's size is the largest block anyone holds in memory at once. This project keeps every
 * partition of its own file jobs, and of delta-spark's state of a table when this project's
 * statements ask for it, at about `spark.deltaLifecycle.filesPerPartition` files: more files make
 * more partitions, never bigger ones. A table of 10 million files at a 1 GB driver needs this:
 * delta-spark's default of 50 state partitions makes blocks of 200,000 files, which a task cannot
 * read back from disk into such a heap.
 */
object FilePartitions {

  /** A session preference: the most files one partition holds. */
  val FilesPerPartitionKey = "spark.deltaLifecycle.filesPerPartition"

  /**
   * About 20 MB of delta-spark's serialized state, and under 100 MB of its state rebuilt in a task:
   * two such tasks fit the heap of a 1 GB driver in local mode with room to spare.
   */
  val DefaultFilesPerPartition: Long = 50000L

  /** Above this many partitions, the tasks' own cost would outweigh their work. */
  private val MaxPartitions = 100000

  /**
   * Bytes per file action, on the low side so that the file count is not underestimated: a Parquet
   * checkpoint stores one in about 32 bytes or more (delta-spark's own checkpoint of a table with
   * statistics on two columns takes 33), a JSON commit in about 256 bytes or more.
   */
  private val CheckpointBytesPerAction = 32L
  private val CommitBytesPerAction = 256L

  /** The session's value, or a typed error for one that is not a positive whole number. */
  def filesPerPartition(spark: SparkSession): Long =
    spark.conf.getOption(FilesPerPartitionKey).fold(DefaultFilesPerPartition) { value =>
      value.trim.toLongOption.filter(_ > 0).getOrElse(
        throw ErrorConditions.InvalidArgument.filesPerPartition(
          setting = FilesPerPartitionKey,
          value = value,
          default = DefaultFilesPerPartition
        )
      )
    }

  /** The partitions `files` files take. */
  def partitionsFor(spark: SparkSession, files: Long): Int = {
    val per = filesPerPartition(spark)
    math.min(MaxPartitions.toLong, math.max(1L, (files + per - 1) / per)).toInt
  }

  /** The file actions a log of these many checkpoint and commit bytes holds, at most. */
  def estimatedFiles(checkpointBytes: Long, commitBytes: Long): Long =
    checkpointBytes / CheckpointBytesPerAction + commitBytes / CommitBytesPerAction

  /**
   * The file actions delta-spark reads to build `snapshot`'s state, from the sizes of the log files
   * it listed (no request is made).
   */
  def estimatedFiles(snapshot: Snapshot): Long =
    estimatedFiles(snapshot.checkpointSizeInBytes(), snapshot.logSegment.deltas.map(_.getLen).sum)

  /** The files of the log files of `listing` from `checkpoint` (if any) on, estimated likewise. */
  def estimatedFiles(checkpoint: Option[LogCheckpoint], commits: Seq[CommitFile]): Long =
    estimatedFiles(checkpoint.fold(0L)(_.sizeInBytes), commits.map(_.status.getLen).sum)

  /**
   * Runs `body` with delta-spark building the state of every snapshot it reconstructs meanwhile in
   * partitions of about `filesPerPartition` files, for a table of `files` files: its
   * `snapshotPartitions` session setting, raised for the duration (never lowered, so a session that
   * asks for more partitions keeps them) and put back after. delta-spark reads the setting when it
   * first builds a snapshot's state; a snapshot it built earlier in the session keeps its
   * partitions. Other statements of the same session that build a snapshot meanwhile get the same,
   * finer, partitioning.
   */
  def withDeltaState[T](spark: SparkSession, files: Long)(body: => T): T = {
    val key = DeltaSQLConf.DELTA_SNAPSHOT_PARTITIONS.key
    val before = spark.conf.getOption(key)
    val current = statePartitions(spark)
    val needed = partitionsFor(spark, files)
    if (needed <= current) return body
    spark.conf.set(key, needed.toString)
    try body
    finally before.fold(spark.conf.unset(key))(spark.conf.set(key, _))
  }

  /** The partitions delta-spark builds a snapshot's state in, as the session sets them now. */
  def statePartitions(spark: SparkSession): Int =
    spark.conf.getOption(DeltaSQLConf.DELTA_SNAPSHOT_PARTITIONS.key).flatMap(_.trim.toIntOption)
      .getOrElse(DeltaDefaultSnapshotPartitions)

  /** delta-spark's own default when the session does not set `snapshotPartitions`. */
  private val DeltaDefaultSnapshotPartitions = 50
}
