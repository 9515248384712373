package io.github.deltalifecycle.bench

import java.io.File
import java.nio.file.{Files, StandardCopyOption}

import org.apache.commons.io.FileUtils
import io.github.deltalifecycle.core.TableLog
import io.github.deltalifecycle.features.compaction.{LogCompaction, PolicySettings}
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.delta.DeltaLog
import org.apache.spark.sql.delta.actions.AddFile
import org.apache.spark.sql.delta.storage.LogStore

import BenchSupport._

/**
 * Log compaction benchmark, three parts in one run:
 *   1. cold snapshot construction (a fresh DeltaLog, then a count of the files) on a table with a
 *      checkpoint of `checkpointFiles` files and K one-file commits after it: stock delta-spark on
 *      plain commits, delta-spark on the same log with this project's compactions (one per 10
 *      commits, as the policy writes them), and the log core;
 *   2. log-maintenance bytes written over 1,000 commits on a table of 100,000 files: a checkpoint
 *      every 10 commits vs the policy (compaction every 10, checkpoint every 100);
 *   3. the latency of real INSERT commits with the post-commit policy on and off.
 * delta-rs open times for part 1 come from bench/delta_rs_open.py in the same `make bench`. Usage:
 * CompactionBenchmark [repetitions=5] [bigTableFiles=100000] [commits=1000].
 */
object CompactionBenchmark {
  private val work = new File("bench/work/compaction").getAbsoluteFile
  private val results = new File("bench/results")
  val Ks: Seq[Int] = Seq(9, 10, 20, 50, 99, 100, 200)
  private val checkpointFiles = 2000

  def main(args: Array[String]): Unit = {
    val repetitions = args.headOption.map(_.toInt).getOrElse(5)
    val bigTableFiles = args.lift(1).map(_.toInt).getOrElse(100000)
    val commits = args.lift(2).map(_.toInt).getOrElse(1000)
    val spark = benchSession()
    coldSnapshots(spark, repetitions)
    maintenanceBytes(spark, bigTableFiles, commits)
    commitLatency(spark, commits = 40)
    spark.stop()
  }

  // The benchmark drives the policy itself (part 2) or toggles it (part 3).
  private def benchSession(): SparkSession = {
    val s = session("CompactionBenchmark")
    s.conf.set(PolicySettings.EnabledSessionKey, "false")
    s
  }

  // ---- part 1 -------------------------------------------------------------------------

  private def coldSnapshots(spark: SparkSession, repetitions: Int): Unit = {
    val dataFiles = dataFileCopies(spark, checkpointFiles + Ks.max)
    val tables = Ks.map(k => k -> buildColdTables(spark, k, dataFiles))
    val hadoopConf = spark.sessionState.newHadoopConf()
    def deltaSpark(path: String): Long = {
      DeltaLog.clearCache(); DeltaLog.forTable(spark, path).update().allFiles.count()
    }
    def core(path: String): Long =
      TableLog.forPath(hadoopConf, path).latestSnapshot().activeFiles.size.toLong
    val variants: Seq[(String, ((String, String)) => Long)] = Seq(
      "delta-spark, plain commits" -> (t => deltaSpark(t._1)),
      "delta-spark, with compactions" -> (t => deltaSpark(t._2)),
      "log core, plain commits" -> (t => core(t._1)),
      "log core, with compactions" -> (t => core(t._2))
    )

    for ((k, t) <- tables; (name, f) <- variants) {
      val n = f(t) // warm-up, and a check that every reader sees every file
      require(n == checkpointFiles + k, s"$name at K=$k counted $n files")
    }
    val runs = for (rep <- 1 to repetitions; (k, t) <- tables; (name, f) <- variants) yield {
      val seconds = time(f(t))
      Seq(k, "\"" + name + "\"", rep, f"$seconds%.4f")
    }
    progress("cold snapshot runs done")
    writeCsv(
      new File(results, "compaction-cold-runs.csv"),
      Seq("commits_after_checkpoint", "variant", "run", "seconds"),
      runs
    )
  }

  /** Copies of one real data file, shared by every part-1 table through absolute paths. */
  private def dataFileCopies(spark: SparkSession, n: Int): Seq[AddFile] = {
    val dir = new File(work, "data")
    if (!new File(dir, "_delta_log").exists())
      spark.range(10).coalesce(1).write.format("delta").save(dir.getPath)
    val template = DeltaLog.forTable(spark, dir.getPath).update().allFiles.collect().head
    val source = new File(dir, template.path)
    (0 until n).map { i =>
      val copy = new File(dir, f"copy-$i%06d.parquet")
      if (!copy.exists())
        Files.copy(source.toPath, copy.toPath, StandardCopyOption.REPLACE_EXISTING)
      template.copy(path = copy.toURI.toString, dataChange = true)
    }
  }

  /**
   * (plain, compacted): version 0 a Spark write of one file, version 1 the rest of the checkpoint's
   * files, a delta-spark checkpoint at 1, then K one-file commits; the compacted copy adds a
   * compaction per 10 commits after the checkpoint.
   */
  private def buildColdTables(spark: SparkSession, k: Int, data: Seq[AddFile]): (String, String) = {
    val plain = new File(work, s"cold-$k-plain")
    val compacted = new File(work, s"cold-$k-compacted")
    if (new File(compacted, "_delta_log").exists()) return (plain.getPath, compacted.getPath)
    progress(s"building cold-snapshot tables for K=$k")
    FileUtils.deleteQuietly(plain)
    spark.range(1).coalesce(1).write.format("delta")
      .option("delta.checkpointInterval", "1000").save(plain.getPath)
    val deltaLog = DeltaLog.forTable(spark, plain.getPath)
    val store = LogStore(spark)
    val hadoopConf = spark.sessionState.newHadoopConf()
    writeAppendCommit(store, deltaLog, hadoopConf, 1, data.take(checkpointFiles - 1))
    deltaLog.checkpoint(deltaLog.update(), None)
    (1 to k).foreach(i =>
      writeAppendCommit(store, deltaLog, hadoopConf, 1 + i, Seq(data(checkpointFiles - 1 + i)))
    )
    FileUtils.copyDirectory(plain, compacted)
    val log = TableLog.forPath(hadoopConf, compacted.getPath)
    for (start <- 2 to (k + 1 - 9) by 10)
      LogCompaction.compact(log, log.listing(), start, start + 9)
    (plain.getPath, compacted.getPath)
  }

  // ---- part 2 -------------------------------------------------------------------------

  private def maintenanceBytes(spark: SparkSession, files: Int, commits: Int): Unit =
    MaintenanceBench.compareMaintenanceBytes(
      spark,
      work,
      files,
      commits,
      "policy: compaction every 10, checkpoint every 100",
      policyCheckpointInterval = 100,
      new File(results, "compaction-bytes.csv")
    )

  // ---- part 3 -------------------------------------------------------------------------

  private def commitLatency(spark: SparkSession, commits: Int): Unit =
    MaintenanceBench.commitLatency(
      spark,
      new File(work, "latency").getPath,
      checkpointInterval = 100,
      commits,
      new File(results, "compaction-commit-latency.csv")
    )
}
