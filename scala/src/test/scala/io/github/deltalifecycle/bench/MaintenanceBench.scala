package io.github.deltalifecycle.bench

import java.io.File

import org.apache.commons.io.FileUtils
import io.github.deltalifecycle.core.TableLog
import io.github.deltalifecycle.features.compaction.{
  LogMaintenance,
  MaintenanceAction,
  PolicySettings
}
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.delta.DeltaLog
import org.apache.spark.sql.delta.storage.LogStore

import BenchSupport._

/**
 * The parts the log-compaction benchmarks share: maintenance bytes over many commits on a big
 * table, and the latency of real INSERTs with the post-commit policy on and off.
 */
object MaintenanceBench {

  /** The version that adds all but one of the big table's files; a checkpoint follows it. */
  private val FirstBigCommit = 2L

  /**
   * A table of `files` files (their paths are never opened: only log readers and writers run on
   * it), checkpointed after the version that adds them; built once under `base`.
   */
  def bigTable(spark: SparkSession, base: File, files: Int, checkpointInterval: Int): Unit = {
    if (new File(base, "_delta_log/" + f"${FirstBigCommit}%020d.json").exists()) return
    progress(s"building a table of $files files")
    FileUtils.deleteQuietly(base)
    spark.sql(s"CREATE TABLE delta.`${base.getPath}` (id BIGINT) USING delta TBLPROPERTIES (" +
      s"'delta.checkpointInterval' = '$checkpointInterval', " +
      s"'${PolicySettings.CompactionIntervalKey}' = '10')")
    spark.sql(s"INSERT INTO delta.`${base.getPath}` VALUES (0)")
    val deltaLog = DeltaLog.forTable(spark, base.getPath)
    val template = deltaLog.update().allFiles.collect().head
    writeAppendCommit(
      LogStore(spark),
      deltaLog,
      spark.sessionState.newHadoopConf(),
      FirstBigCommit,
      (1 until files).map(i =>
        template.copy(path = f"not-on-disk/part-$i%06d.parquet", dataChange = true)
      )
    )
    deltaLog.checkpoint(deltaLog.update(), None)
  }

  /**
   * Bytes of checkpoints and compactions written over `commits` one-file commits on a copy of the
   * big table at `base` (into `dir`): delta-spark's checkpoint at every `checkpointInterval`-th
   * version (what its own hook does), and with `policy` the post-commit policy after every other
   * commit. Returns the CSV row: variant, table files, commits, checkpoints, compactions, bytes,
   * seconds.
   */
  def maintenanceBytes(
      spark: SparkSession,
      variant: String,
      base: File,
      dir: File,
      files: Int,
      commits: Int,
      checkpointInterval: Int,
      policy: Boolean
  ): Seq[Any] = {
    val hadoopConf = spark.sessionState.newHadoopConf()
    val store = LogStore(spark)
    FileUtils.deleteQuietly(dir)
    FileUtils.copyDirectory(base, dir)
    DeltaLog.clearCache()
    val deltaLog = DeltaLog.forTable(spark, dir.getPath)
    val template = deltaLog.update().allFiles.head()
    val log = TableLog.forPath(hadoopConf, dir.getPath)
    var checkpoints = 0
    val before = maintenanceFiles(dir)
    val seconds = time {
      for (i <- 1 to commits) {
        val v = FirstBigCommit + i
        writeAppendCommit(
          store,
          deltaLog,
          hadoopConf,
          v,
          Seq(template.copy(path = f"not-on-disk/new-$v%06d.parquet"))
        )
        if (v % checkpointInterval == 0) {
          deltaLog.checkpoint(deltaLog.getSnapshotAt(v), None)
          checkpoints += 1
        } else if (policy) {
          LogMaintenance.run(spark, log) match {
            case _: MaintenanceAction.Checkpoint => checkpoints += 1
            case _ =>
          }
        }
        if (i % 100 == 0) progress(s"$variant: $i / $commits commits")
      }
    }
    val written = maintenanceFiles(dir) -- before.keySet
    val compactions = written.keys.count(_.endsWith(".compacted.json"))
    val bytes = written.values.sum
    progress(f"$variant: $bytes bytes in $checkpoints checkpoints and $compactions compactions, " +
      f"$seconds%.1f s")
    Seq("\"" + variant + "\"", files, commits, checkpoints, compactions, bytes, f"$seconds%.2f")
  }

  /**
   * Both variants of the bytes comparison on the big table under `work`: a checkpoint every 10
   * commits, and the policy (`policyVariant`) with delta-spark's checkpoint every
   * `policyCheckpointInterval` commits; writes `csv`.
   */
  def compareMaintenanceBytes(
      spark: SparkSession,
      work: File,
      files: Int,
      commits: Int,
      policyVariant: String,
      policyCheckpointInterval: Int,
      csv: File,
      reference: Option[File] = None
  ): Unit = {
    val base = new File(work, s"big-$files")
    bigTable(spark, base, files, policyCheckpointInterval)
    val every10 = "checkpoint every 10 commits"
    val variants = Seq(
      (every10, "every10", 10, false),
      (policyVariant, "policy", policyCheckpointInterval, true)
    ).filter(v => v._4 || reference.isEmpty)
    val rows = variants.map { case (variant, suffix, checkpointInterval, policy) =>
      val dir = new File(work, s"big-$files-$suffix")
      maintenanceBytes(spark, variant, base, dir, files, commits, checkpointInterval, policy)
    }
    // The reference run of another benchmark on the same table and commits: delta-spark's
    // checkpoints do not depend on this project, so their bytes are the same.
    val borrowed = reference.toSeq.flatMap { file =>
      val source = scala.io.Source.fromFile(file)
      try source.getLines().filter(_.startsWith("\"" + every10)).map { line =>
          line.replace(every10, s"$every10 (from ${file.getName})").split(",").toSeq
        }.toVector
      finally source.close()
    }
    writeCsv(csv, MaintenanceBytesHeader, borrowed ++ rows)
  }

  val MaintenanceBytesHeader: Seq[String] =
    Seq(
      "variant",
      "table_files",
      "commits",
      "checkpoints",
      "compactions",
      "bytes_written",
      "seconds"
    )

  /** Checkpoint and compaction files in the log, with their sizes. */
  def maintenanceFiles(table: File): Map[String, Long] =
    new File(table, "_delta_log").listFiles().filter { f =>
      !f.getName.startsWith(".") &&
      (f.getName.contains(".checkpoint.") || f.getName.endsWith(".compacted.json"))
    }.map(f => f.getName -> f.length()).toMap

  /**
   * `commits` real INSERTs into a new table at `path` (compaction interval 10), in alternating
   * blocks of 10 with the policy on and off so that drift hits both alike; writes `csv`. The table
   * first gets `fastCommits` one-file commits written directly (and the policy's compactions of
   * them), so that the timed INSERTs reach versions where wider levels are merged.
   */
  def commitLatency(
      spark: SparkSession,
      path: String,
      checkpointInterval: Int,
      commits: Int,
      csv: File,
      fastCommits: Int = 0
  ): Unit = {
    FileUtils.deleteQuietly(new File(path))
    spark.sql(s"CREATE TABLE delta.`$path` (id BIGINT) USING delta TBLPROPERTIES (" +
      s"'delta.checkpointInterval' = '$checkpointInterval', " +
      s"'${PolicySettings.CompactionIntervalKey}' = '10')")
    if (fastCommits > 0) {
      spark.sql(s"INSERT INTO delta.`$path` VALUES (0)")
      val deltaLog = DeltaLog.forTable(spark, path)
      val template = deltaLog.update().allFiles.head()
      val hadoopConf = spark.sessionState.newHadoopConf()
      (2 to fastCommits).foreach { v =>
        val add = template.copy(path = f"not-on-disk/fast-$v%06d.parquet")
        writeAppendCommit(LogStore(spark), deltaLog, hadoopConf, v, Seq(add))
      }
      LogMaintenance.run(spark, TableLog.forPath(hadoopConf, path))
    }
    (1 to 5).foreach(i => spark.sql(s"INSERT INTO delta.`$path` VALUES ($i)")) // warm-up
    val runs = (0 until commits / 10).flatMap { block =>
      val enabled = block % 2 == 0
      spark.conf.set(PolicySettings.EnabledSessionKey, enabled.toString)
      (1 to 10).map { i =>
        val seconds = time(spark.sql(s"INSERT INTO delta.`$path` VALUES (${block * 10 + i})"))
        Seq(if (enabled) "policy on" else "policy off", block * 10 + i, f"$seconds%.4f")
      }
    }
    require(LogMaintenance.awaitIdle(60000))
    spark.conf.set(PolicySettings.EnabledSessionKey, "false")
    val compactions = new File(path, "_delta_log").list().count(_.endsWith(".compacted.json"))
    progress(s"commit latency: the policy wrote $compactions compactions")
    writeCsv(csv, Seq("variant", "commit", "seconds"), runs)
  }
}
