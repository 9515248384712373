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
 * Hierarchical log compaction benchmark, three parts in one run:
 *   1. cold snapshots on tables with one checkpoint of `checkpointFiles` files and then K one-file
 *      commits (K = 10, 100, 500, 999): delta-spark and the log core on the log with the levels the
 *      policy writes at `delta.checkpointInterval = 1000`, against delta-spark on a checkpoint
 *      followed by 9 commits, the worst case of checkpointing every 10 commits; also the number of
 *      log files delta-spark's snapshot chose;
 *   2. log-maintenance bytes over `commits` commits on a table of `bigTableFiles` files: a
 *      checkpoint every 10 commits vs the policy with levels and a checkpoint every 1000;
 *   3. the latency of real INSERTs with the post-commit policy on and off (checkpoint interval
 *      1000, compaction interval 10, so level-2 merges happen in the run).
 * delta-rs times for part 1 come from bench/delta_rs_levels.py. Usage: LevelsBenchmark
 * [repetitions=5] [bigTableFiles=100000] [commits=1000] [inserts=200].
 */
object LevelsBenchmark {
  private val work = new File("bench/work/levels").getAbsoluteFile
  private val results = new File("bench/results")
  val Ks: Seq[Int] = Seq(10, 100, 500, 999)
  private val checkpointFiles = 2000
  private val Reference = "delta-spark, interval 10 (checkpoint + 9 commits)"

  def main(args: Array[String]): Unit = {
    val repetitions = args.headOption.map(_.toInt).getOrElse(5)
    val bigTableFiles = args.lift(1).map(_.toInt).getOrElse(100000)
    val commits = args.lift(2).map(_.toInt).getOrElse(1000)
    val inserts = args.lift(3).map(_.toInt).getOrElse(40)
    val parts = args.lift(4).getOrElse("cold,bytes,latency").split(",").toSet
    val spark = session("LevelsBenchmark")
    spark.conf.set(PolicySettings.EnabledSessionKey, "false")
    if (parts("cold")) coldSnapshots(spark, repetitions)
    if (parts("latency")) commitLatency(spark, inserts)
    if (parts("bytes") || parts("bytes-policy")) {
      maintenanceBytes(spark, bigTableFiles, commits, reuseReference = !parts("bytes"))
    }
    spark.stop()
  }

  // ---- part 1 -------------------------------------------------------------------------

  private def coldSnapshots(spark: SparkSession, repetitions: Int): Unit = {
    val base = baseTable(spark)
    val reference = withCommits(spark, base, "interval10-k9", 9, levels = false)
    val tables = Ks.map(k => k -> withCommits(spark, base, s"levels-k$k", k, levels = true))
    val hadoopConf = spark.sessionState.newHadoopConf()
    def deltaSpark(path: String): Long = {
      DeltaLog.clearCache(); DeltaLog.forTable(spark, path).update().allFiles.count()
    }
    def chosenFiles(path: String): Int = {
      DeltaLog.clearCache(); DeltaLog.forTable(spark, path).update().logSegment.deltas.size
    }
    def core(path: String): Long =
      TableLog.forPath(hadoopConf, path).latestSnapshot().activeFiles.size.toLong
    val variants: Seq[(Int, String, String, String => Long)] = Ks.flatMap { k =>
      val path = tables.toMap.apply(k)
      Seq(
        (k, Reference, reference, deltaSpark _),
        (k, "delta-spark, interval 1000 with levels", path, deltaSpark _),
        (k, "log core, interval 1000 with levels", path, core _)
      )
    }
    for ((k, name, path, f) <- variants) {
      val n = f(path) // warm-up, and a check that every reader sees every file
      val expected = checkpointFiles + (if (name == Reference) 9 else k)
      require(n == expected, s"$name at K=$k counted $n files, not $expected")
    }
    val runs = for (rep <- 1 to repetitions; (k, name, path, f) <- variants) yield {
      val seconds = time(f(path))
      Seq(k, "\"" + name + "\"", rep, f"$seconds%.4f")
    }
    val chosen = (Seq(9 -> reference) ++ tables).map { case (k, path) =>
      Seq(k, new File(path).getName, chosenFiles(path))
    }
    progress("cold snapshot runs done")
    writeCsv(
      new File(results, "levels-cold-runs.csv"),
      Seq("commits_after_checkpoint", "variant", "run", "seconds"),
      runs
    )
    writeCsv(
      new File(results, "levels-files-read.csv"),
      Seq("commits_after_checkpoint", "table", "delta_spark_log_files_after_checkpoint"),
      chosen
    )
  }

  /**
   * Version 0 a Spark write of one file, version 1 adding 1,000 more, versions 2 to 1000 one file
   * each (paths never opened: only the log is read), and delta-spark's checkpoint at 1000, where
   * its hook checkpoints at `delta.checkpointInterval = 1000`.
   */
  private def baseTable(spark: SparkSession): File = {
    val dir = new File(work, "base")
    val done = new File(work, "base.complete")
    if (done.exists()) return dir
    progress("building the base table")
    FileUtils.deleteQuietly(dir)
    spark.range(1).coalesce(1).write.format("delta")
      .option("delta.checkpointInterval", "1000").save(dir.getPath)
    val deltaLog = DeltaLog.forTable(spark, dir.getPath)
    val template = deltaLog.update().allFiles.collect().head
    def file(i: Int) = template.copy(path = f"not-on-disk/base-$i%06d.parquet", dataChange = true)
    val store = LogStore(spark)
    val hadoopConf = spark.sessionState.newHadoopConf()
    val firstAdds = checkpointFiles - 1000
    writeAppendCommit(store, deltaLog, hadoopConf, 1, (1 to firstAdds).map(file))
    (2 to 1000).foreach(v =>
      writeAppendCommit(store, deltaLog, hadoopConf, v, Seq(file(firstAdds + v)))
    )
    deltaLog.checkpoint(deltaLog.update(), None)
    done.createNewFile()
    dir
  }

  /**
   * A copy of the base table with K one-file commits after its checkpoint; with `levels` the
   * post-commit policy (interval 10, checkpoint interval 1000) then writes what it asks for.
   */
  private def withCommits(
      spark: SparkSession,
      base: File,
      name: String,
      k: Int,
      levels: Boolean
  ): String = {
    val dir = new File(work, name)
    val done = new File(work, name + ".complete")
    if (done.exists()) return dir.getPath
    progress(s"building $name")
    FileUtils.deleteQuietly(dir)
    FileUtils.copyDirectory(base, dir)
    DeltaLog.clearCache()
    val deltaLog = DeltaLog.forTable(spark, dir.getPath)
    val template = deltaLog.update().allFiles.head()
    val store = LogStore(spark)
    val hadoopConf = spark.sessionState.newHadoopConf()
    (1001 to 1000 + k).foreach { v =>
      writeAppendCommit(
        store,
        deltaLog,
        hadoopConf,
        v,
        Seq(template.copy(path = f"not-on-disk/after-$v%06d.parquet"))
      )
    }
    if (levels) {
      val action = LogMaintenance.run(spark, TableLog.forPath(hadoopConf, dir.getPath))
      require(action.isInstanceOf[MaintenanceAction.Compact], s"$name: the policy did $action")
    }
    done.createNewFile()
    dir.getPath
  }

  // ---- part 2 -------------------------------------------------------------------------

  private def maintenanceBytes(
      spark: SparkSession,
      files: Int,
      commits: Int,
      reuseReference: Boolean
  ): Unit =
    MaintenanceBench.compareMaintenanceBytes(
      spark,
      work,
      files,
      commits,
      "policy: levels of 10 and 100 commits, checkpoint every 1000",
      policyCheckpointInterval = 1000,
      new File(results, "levels-bytes.csv"),
      if (reuseReference) Some(new File(results, "compaction-bytes.csv")) else None
    )

  // ---- part 3 -------------------------------------------------------------------------

  private def commitLatency(spark: SparkSession, commits: Int): Unit =
    MaintenanceBench.commitLatency(
      spark,
      new File(work, "latency").getPath,
      checkpointInterval = 1000,
      commits,
      new File(results, "levels-commit-latency.csv"),
      fastCommits = 80
    )
}
