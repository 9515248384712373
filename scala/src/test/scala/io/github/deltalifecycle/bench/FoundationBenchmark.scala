package io.github.deltalifecycle.bench

import java.io.File
import java.nio.file.{Files, StandardCopyOption}

import io.github.deltalifecycle.core.TableLog
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.delta.{DeltaLog, DeltaOperations}
import org.apache.spark.sql.delta.actions.AddFile
import org.apache.spark.sql.delta.storage.LogStore

import BenchSupport._

/**
 * Foundation benchmark: on a table with `commits` commits and a checkpoint every 100, compares in
 * one run
 *   - DESCRIBE PROTOCOL HISTORY (this project) with delta-spark's DESCRIBE HISTORY, and
 *   - the log core's latest snapshot with DeltaLog.forTable(...).update() (and with update()
 *     followed by a count of the active files, the same work the core does).
 * Usage: FoundationBenchmark [commits=10000] [repetitions=5]; results in bench/results/.
 */
object FoundationBenchmark {
  def main(args: Array[String]): Unit = {
    val commits = args.headOption.map(_.toInt).getOrElse(10000)
    val repetitions = args.lift(1).map(_.toInt).getOrElse(5)
    val spark = session("FoundationBenchmark")
    val table = new File(s"bench/work/history-$commits").getAbsoluteFile
    if (!new File(table, s"_delta_log/${f"${commits - 1}%020d"}.json").exists())
      build(spark, table, commits)

    val path = table.getPath
    val hadoopConf = spark.sessionState.newHadoopConf()
    val cases: Seq[(String, String, () => Any)] = Seq(
      (
        "history",
        "delta-lifecycle DESCRIBE PROTOCOL HISTORY",
        () => spark.sql(s"DESCRIBE PROTOCOL HISTORY delta.`$path`").collect()
      ),
      (
        "history",
        "delta-spark DESCRIBE HISTORY",
        () => spark.sql(s"DESCRIBE HISTORY delta.`$path`").collect()
      ),
      (
        "latest-snapshot",
        "delta-lifecycle log core latestSnapshot (with all files)",
        () => TableLog.forPath(hadoopConf, path).latestSnapshot().activeFiles.size
      ),
      (
        "latest-snapshot",
        "delta-spark DeltaLog.forTable().update()",
        () => { DeltaLog.clearCache(); DeltaLog.forTable(spark, path).update() }
      ),
      (
        "latest-snapshot",
        "delta-spark DeltaLog.forTable().update().allFiles.count()",
        () => { DeltaLog.clearCache(); DeltaLog.forTable(spark, path).update().allFiles.count() }
      )
    )

    cases.foreach { case (_, name, f) => progress(s"warm-up: $name"); f() }
    val runs = for (rep <- 1 to repetitions; (group, name, f) <- cases) yield {
      val seconds = time(f())
      progress(f"$name run $rep: $seconds%.3f s")
      Seq(group, "\"" + name + "\"", commits, rep, f"$seconds%.4f")
    }
    writeCsv(
      new File("bench/results/foundation-runs.csv"),
      Seq("benchmark", "variant", "commits", "run", "seconds"),
      runs
    )

    val medians = cases.map { case (group, name, _) =>
      name -> median(runs.filter(r => r(1) == "\"" + name + "\"").map(_(4).toString.toDouble))
    }.toMap
    def ratio(a: String, b: String): Double = medians(a) / medians(b)
    val summary = Seq(
      Seq(
        "history",
        "DESCRIBE PROTOCOL HISTORY / DESCRIBE HISTORY",
        f"${ratio(cases(0)._2, cases(1)._2)}%.3f",
        "2.0"
      ),
      Seq(
        "latest-snapshot",
        "log core / DeltaLog.update()",
        f"${ratio(cases(2)._2, cases(3)._2)}%.3f",
        "1.0"
      ),
      Seq(
        "latest-snapshot",
        "log core / DeltaLog.update() + allFiles.count()",
        f"${ratio(cases(2)._2, cases(4)._2)}%.3f",
        "1.0"
      )
    )
    writeCsv(
      new File("bench/results/foundation-summary.csv"),
      Seq("benchmark", "ratio", "value", "goal"),
      summary
    )
    cases.foreach { case (_, name, _) => progress(f"median $name: ${medians(name)}%.3f s") }
    summary.foreach(r => progress(r.mkString(" | ")))
    spark.stop()
  }

  /**
   * The table: the first commit is a Spark write; the next ones, up to the last but one, are
   * serialized with delta-spark's own action classes (`commitInfo` + one `add` of a copy of the
   * first data file) and written with delta-spark's LogStore, because a full transaction per commit
   * costs about half a second here and 10,000 of them would not fit a working session. delta-spark
   * then writes every checkpoint (interval 100) from its own snapshots, and the last commit is a
   * real delta-spark transaction, which also writes the version checksum that DeltaLog.update()
   * reads.
   */
  private def build(spark: SparkSession, table: File, commits: Int): Unit = {
    progress(s"building $table with $commits commits")
    org.apache.commons.io.FileUtils.deleteQuietly(table)
    spark.range(10).write.format("delta").option(
      "delta.checkpointInterval",
      "100"
    ).save(table.getPath)
    val deltaLog = DeltaLog.forTable(spark, table.getPath)
    val template = deltaLog.update().allFiles.collect().head
    val source = new File(table, template.path)
    val logStore = LogStore(spark)
    val hadoopConf = spark.sessionState.newHadoopConf()
    def addCopy(i: Int): AddFile = {
      val name = f"part-copy-$i%06d.parquet"
      Files.copy(source.toPath, new File(table, name).toPath, StandardCopyOption.REPLACE_EXISTING)
      template.copy(path = name, modificationTime = System.currentTimeMillis(), dataChange = true)
    }
    for (i <- 1 until commits - 1) {
      writeAppendCommit(logStore, deltaLog, hadoopConf, i, Seq(addCopy(i)))
      if (i % 1000 == 0) progress(s"wrote commit $i / ${commits - 1}")
    }
    for (v <- 100 until commits - 1 by 100) {
      deltaLog.checkpoint(deltaLog.getSnapshotAt(v))
      if (v % 1000 == 0) progress(s"checkpointed version $v")
    }
    deltaLog.update()
    deltaLog.startTransaction(None).commit(Seq(addCopy(commits - 1)), DeltaOperations.ManualUpdate)
    progress(s"table ready at version ${deltaLog.update().version}")
  }
}
