package io.github.deltalifecycle.bench

import java.io.File
import java.nio.file.{Files, StandardCopyOption}

import io.github.deltalifecycle.core.TableLog
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.delta.{DeltaLog, DeltaOperations}
import org.apache.spark.sql.delta.actions.AddFile

import BenchSupport._

/**
 * Foundation benchmark (issue 2): on a table with `commits` commits and a checkpoint every
 * 100, compares in one run
 *  - DESCRIBE PROTOCOL HISTORY (this project) with delta-spark's DESCRIBE HISTORY, and
 *  - the log core's latest snapshot with DeltaLog.forTable(...).update() (and with
 *    update() followed by a count of the active files, the same work the core does).
 * Usage: FoundationBenchmark [commits=10000] [repetitions=5]; results in bench/results/.
 */
object FoundationBenchmark {
  def main(args: Array[String]): Unit = {
    val commits = args.headOption.map(_.toInt).getOrElse(10000)
    val repetitions = args.lift(1).map(_.toInt).getOrElse(5)
    val spark = session("FoundationBenchmark")
    val table = new File(s"bench/work/history-$commits").getAbsoluteFile
    if (!new File(table, s"_delta_log/${f"${commits - 1}%020d"}.json").exists()) build(spark, table, commits)

    val path = table.getPath
    val hadoopConf = spark.sessionState.newHadoopConf()
    val cases: Seq[(String, String, () => Any)] = Seq(
      ("history", "delta-lifecycle DESCRIBE PROTOCOL HISTORY",
        () => spark.sql(s"DESCRIBE PROTOCOL HISTORY delta.`$path`").collect()),
      ("history", "delta-spark DESCRIBE HISTORY",
        () => spark.sql(s"DESCRIBE HISTORY delta.`$path`").collect()),
      ("latest-snapshot", "delta-lifecycle log core latestSnapshot (with all files)",
        () => TableLog.forPath(hadoopConf, path).latestSnapshot().activeFiles.size),
      ("latest-snapshot", "delta-spark DeltaLog.forTable().update()",
        () => { DeltaLog.clearCache(); DeltaLog.forTable(spark, path).update() }),
      ("latest-snapshot", "delta-spark DeltaLog.forTable().update().allFiles.count()",
        () => { DeltaLog.clearCache(); DeltaLog.forTable(spark, path).update().allFiles.count() }))

    cases.foreach { case (_, name, f) => progress(s"warm-up: $name"); f() }
    val runs = for (rep <- 1 to repetitions; (group, name, f) <- cases) yield {
      val seconds = time(f())
      progress(f"$name run $rep: $seconds%.3f s")
      Seq(group, "\"" + name + "\"", commits, rep, f"$seconds%.4f")
    }
    writeCsv(new File("bench/results/foundation-runs.csv"),
      Seq("benchmark", "variant", "commits", "run", "seconds"), runs)

    val medians = cases.map { case (group, name, _) =>
      name -> median(runs.filter(r => r(1) == "\"" + name + "\"").map(_(4).toString.toDouble))
    }.toMap
    def ratio(a: String, b: String): Double = medians(a) / medians(b)
    val summary = Seq(
      Seq("history", "DESCRIBE PROTOCOL HISTORY / DESCRIBE HISTORY",
        f"${ratio(cases(0)._2, cases(1)._2)}%.3f", "2.0"),
      Seq("latest-snapshot", "log core / DeltaLog.update()",
        f"${ratio(cases(2)._2, cases(3)._2)}%.3f", "1.0"),
      Seq("latest-snapshot", "log core / DeltaLog.update() + allFiles.count()",
        f"${ratio(cases(2)._2, cases(4)._2)}%.3f", "1.0"))
    writeCsv(new File("bench/results/foundation-summary.csv"),
      Seq("benchmark", "ratio", "value", "goal"), summary)
    cases.foreach { case (_, name, _) => progress(f"median $name: ${medians(name)}%.3f s") }
    summary.foreach(r => progress(r.mkString(" | ")))
    spark.stop()
  }

  /**
   * A real table: one data file written by Spark, then `commits - 1` commits made through
   * delta-spark's own transactions, each adding a copy of that file; delta-spark writes the
   * checkpoints (interval 100) and checksums itself.
   */
  private def build(spark: SparkSession, table: File, commits: Int): Unit = {
    progress(s"building $table with $commits commits")
    org.apache.commons.io.FileUtils.deleteQuietly(table)
    spark.range(10).write.format("delta").option("delta.checkpointInterval", "100").save(table.getPath)
    val deltaLog = DeltaLog.forTable(spark, table.getPath)
    val template = deltaLog.update().allFiles.collect().head
    val source = new File(table, template.path)
    for (i <- 1 until commits) {
      val name = f"part-copy-$i%06d.parquet"
      Files.copy(source.toPath, new File(table, name).toPath, StandardCopyOption.REPLACE_EXISTING)
      val add: AddFile = template.copy(path = name, modificationTime = System.currentTimeMillis())
      deltaLog.startTransaction().commit(Seq(add), DeltaOperations.ManualUpdate)
      if (i % 500 == 0) progress(s"committed $i / ${commits - 1}")
    }
  }
}
