package io.github.deltalifecycle.features.compaction

import java.io.File

import io.github.deltalifecycle.LifecycleSparkSession
import io.github.deltalifecycle.core._
import org.apache.hadoop.fs.{FileStatus, Path}
import io.delta.tables.DeltaTable
import org.apache.spark.sql.{DataFrame, Row}
import org.apache.spark.sql.delta.DeltaLog
import org.apache.spark.sql.functions.{col, lit}
import org.apache.spark.sql.streaming.Trigger
import org.scalatest.funsuite.AnyFunSuite

/**
 * The post-commit policy: its decisions on made-up listings, then end to end after real commits.
 */
class LogMaintenancePolicySuite extends AnyFunSuite with LifecycleSparkSession {
  import MaintenanceAction._

  /** A listing of `names`, where a commit's size is given as "<version>.json:<bytes>". */
  private def listing(names: String*): LogListing = {
    val files = names.flatMap { n =>
      val (name, size) =
        n.split(':') match { case Array(a, b) => (a, b.toLong); case Array(a) => (a, 100L) }
      LogFiles.classify(new FileStatus(size, false, 1, 1, 0, new Path("/t/_delta_log", name)))
    }
    LogListing(
      new Path("/t"),
      new Path("/t/_delta_log"),
      files.collect { case c: CommitFile => c }.sortBy(_.version).toVector,
      LogFiles.completeCheckpoints(files.collect { case c: CheckpointPartFile => c }).toVector,
      files.collect { case c: CompactionFile => c }.sortBy(c => (c.start, c.end)).toVector,
      Map.empty
    )
  }
  private def commits(range: Range, size: Long = 100): Seq[String] =
    range.map(v => f"$v%020d.json:$size")
  private def checkpoint(v: Long) = f"$v%020d.checkpoint.parquet"
  private def compaction(x: Long, y: Long) = f"$x%020d.$y%020d.compacted.json"
  private val settings =
    PolicySettings(compactionInterval = 5, largeCommitBytes = 1000, checkpointInterval = 100)

  test("a compaction once enough small commits follow the last checkpoint or compaction") {
    assert(LogMaintenancePolicy.decide(
      listing(commits(0 to 103) :+ checkpoint(100): _*),
      settings
    ) === Nothing)
    assert(LogMaintenancePolicy.decide(
      listing(commits(0 to 105) :+ checkpoint(100): _*),
      settings
    ) === Compact(101, 105))
    val afterCompaction = commits(0 to 110) ++ Seq(checkpoint(100), compaction(101, 105))
    assert(LogMaintenancePolicy.decide(listing(afterCompaction: _*), settings) ===
      Compact(106, 110))
    val notYet = commits(0 to 109) ++ Seq(checkpoint(100), compaction(101, 105))
    assert(LogMaintenancePolicy.decide(listing(notYet: _*), settings) === Nothing)
  }

  test(
    "a large commit asks for a checkpoint; a checkpoint-interval version is left to delta-spark"
  ) {
    val large = commits(0 to 102) ++ commits(103 to 103, size = 5000) :+ checkpoint(100)
    assert(LogMaintenancePolicy.decide(listing(large: _*), settings) === Checkpoint(103))
    assert(LogMaintenancePolicy.decide(
      listing(commits(0 to 200) :+ checkpoint(100): _*),
      settings
    ) === Nothing)
  }

  test("compactions are off when the interval is below 2 or not below the checkpoint interval") {
    val log = listing(commits(0 to 109) :+ checkpoint(100): _*)
    assert(LogMaintenancePolicy.decide(log, settings.copy(compactionInterval = 1)) === Nothing)
    assert(LogMaintenancePolicy.decide(log, settings.copy(checkpointInterval = 5)) === Nothing)
  }

  test(
    "settings come from the table, then the session, then the defaults; bad values are ignored"
  ) {
    val session = Map("spark.deltaLifecycle.logCompaction.interval" -> "7")
    assert(PolicySettings.resolve(Map.empty, session.get) === PolicySettings(7, 1L << 20, 10))
    assert(PolicySettings.resolve(
      Map(
        "deltaLifecycle.logCompaction.interval" -> "3",
        "delta.checkpointInterval" -> "50",
        "deltaLifecycle.logCompaction.largeCommitBytes" -> "oops"
      ),
      session.get
    ) ===
      PolicySettings(3, 1L << 20, 50))
  }

  private def logFiles(path: String, suffix: String): Seq[String] =
    new File(path, "_delta_log").list().filter(_.endsWith(suffix)).sorted.toSeq

  // Waiting after each commit keeps the test deterministic: queued runs for one table merge.
  private def appendAndWait(path: String, values: Range): Unit = values.foreach { i =>
    spark.sql(s"INSERT INTO delta.`$path` VALUES ($i)")
    assert(LogMaintenance.awaitIdle(60000))
  }

  test("after commits in this session: compactions every few small commits, readers unchanged") {
    val path = newTableDir("policy")
    spark.sql(s"CREATE TABLE delta.`$path` (id BIGINT) USING delta TBLPROPERTIES (" +
      "'delta.checkpointInterval' = '100', 'deltaLifecycle.logCompaction.interval' = '4')")
    appendAndWait(path, 1 to 9)
    assert(logFiles(path, ".compacted.json") ===
      Seq(compaction(0, 3), compaction(4, 7)))
    DeltaLog.clearCache()
    assert(spark.read.format("delta").load(path).collect().toSet === (1 to 9).map(i =>
      Row(i.toLong)
    ).toSet)
    val core = TableLog.forPath(spark.sessionState.newHadoopConf(), path).latestSnapshot()
    assert(core.segment.compactions.map(c => (c.start, c.end)) === Seq((0L, 3L), (4L, 7L)))
  }

  test("over the memory limit the policy compacts a shorter range, or none, and commits succeed") {
    val key = "spark." + PolicySettings.MaxBytesInMemoryKey
    def held(path: String, version: Long): Long = {
      val file = new File(new File(path, "_delta_log"), f"$version%020d.json")
      scala.io.Source.fromFile(file).getLines().filterNot(_.startsWith("{\"commitInfo\""))
        .map(_.length + 128L).sum
    }
    try {
      // Versions 0 and 1 fit, 0 to 2 do not: the due compaction of 0 to 3 shrinks to 0 to 1.
      val path = newTableDir("policy-memory")
      spark.sql(s"CREATE TABLE delta.`$path` (id BIGINT) USING delta TBLPROPERTIES (" +
        "'delta.checkpointInterval' = '100', 'deltaLifecycle.logCompaction.interval' = '4')")
      appendAndWait(path, 1 to 1)
      spark.conf.set(key, (held(path, 0) + held(path, 1) * 3 / 2).toString)
      appendAndWait(path, 2 to 3)
      assert(logFiles(path, ".compacted.json") === Seq(compaction(0, 1)))

      // Not even one commit fits: nothing is compacted, and every commit still lands.
      spark.conf.set(key, "1")
      val other = newTableDir("policy-memory-none")
      spark.sql(s"CREATE TABLE delta.`$other` (id BIGINT) USING delta TBLPROPERTIES (" +
        "'delta.checkpointInterval' = '100', 'deltaLifecycle.logCompaction.interval' = '4')")
      appendAndWait(other, 1 to 9)
      assert(logFiles(other, ".compacted.json").isEmpty)
      DeltaLog.clearCache()
      assert(spark.read.format("delta").load(other).collect().toSet ===
        (1 to 9).map(i => Row(i.toLong)).toSet)
    } finally spark.conf.unset(key)
  }

  test("a large commit is checkpointed at once; the session switch turns the policy off") {
    val path = newTableDir("policy-large")
    spark.sql(s"CREATE TABLE delta.`$path` (id BIGINT) USING delta TBLPROPERTIES (" +
      "'delta.checkpointInterval' = '100', 'deltaLifecycle.logCompaction.largeCommitBytes' = '10')")
    appendAndWait(path, 1 to 2)
    assert(logFiles(path, ".checkpoint.parquet") === Seq(checkpoint(1), checkpoint(2)))

    spark.conf.set(PolicySettings.EnabledSessionKey, "false")
    try appendAndWait(path, 3 to 4)
    finally spark.conf.unset(PolicySettings.EnabledSessionKey)
    assert(logFiles(path, ".checkpoint.parquet") === Seq(checkpoint(1), checkpoint(2)))
  }

  /* Each write API commits versions 2 and 3 of a table whose policy compacts every two commits; the
   * compaction of 2..3 shows that the policy saw the API's commits. Versions 0 and 1 (CREATE and
   * one INSERT) are compacted first, so the pending commits are exactly the API's. */
  private val writeApis: Seq[(String, (String, Int) => Unit)] = {
    def rows(from: Long): DataFrame = spark.range(from, from + 2).toDF("id")
    Seq(
      "SQL INSERT by path" -> ((p, _) => spark.sql(s"INSERT INTO delta.`$p` VALUES (10)")),
      "DataFrame append by path" ->
        ((p, _) => rows(20).write.format("delta").mode("append").save(p)),
      "DataFrame overwrite by path" ->
        ((p, _) => rows(30).write.format("delta").mode("overwrite").save(p)),
      "SQL UPDATE" -> ((p, _) => spark.sql(s"UPDATE delta.`$p` SET id = id + 100")),
      "SQL DELETE" -> ((p, i) => spark.sql(s"DELETE FROM delta.`$p` WHERE id = ${i + 1}")),
      "SQL MERGE" ->
        ((p, i) =>
          spark.sql(s"MERGE INTO delta.`$p` t USING (SELECT ${70 + i}L AS id) s ON t.id = s.id " +
            "WHEN NOT MATCHED THEN INSERT *")
        ),
      "DeltaTable API" ->
        ((p, _) =>
          DeltaTable.forPath(spark, p).updateExpr(Map("id" -> "id + 1"))
        ),
      "SQL OPTIMIZE" -> { (p, _) =>
        rows(40).write.format("delta").mode("append").save(p)
        rows(50).write.format("delta").mode("append").save(p)
        spark.sql(s"OPTIMIZE delta.`$p`")
      },
      "streaming" -> { (p, _) =>
        val source = p + "-source"
        rows(60).write.format("delta").mode("append").save(source)
        spark.readStream.format("delta").load(source).writeStream.format("delta")
          .option("checkpointLocation", p + "-checkpoint").trigger(Trigger.AvailableNow())
          .start(p).awaitTermination()
      }
    )
  }

  writeApis.foreach { case (api, write) =>
    test(s"the policy sees commits made through $api") {
      val path = newTableDir("api-" + api.replace(' ', '-'))
      spark.sql(s"CREATE TABLE delta.`$path` (id BIGINT) USING delta TBLPROPERTIES (" +
        "'delta.checkpointInterval' = '100', 'deltaLifecycle.logCompaction.interval' = '2')")
      spark.sql(s"INSERT INTO delta.`$path` VALUES (1), (2), (3)")
      assert(LogMaintenance.awaitIdle(60000))
      val before = DeltaLog.forTable(spark, path).update().version
      write(path, 0)
      assert(LogMaintenance.awaitIdle(60000))
      if (api != "SQL OPTIMIZE") write(path, 1)
      assert(LogMaintenance.awaitIdle(60000))
      val after = DeltaLog.forTable(spark, path).update().version
      assert(after >= before + 2, s"$api made ${after - before} commits")
      val compactions = logFiles(path, ".compacted.json")
      assert(compactions.contains(compaction(before + 1, before + 2)), compactions)
    }
  }

  test("a query that only reads writes nothing to the log") {
    val path = newTableDir("policy-reads")
    spark.sql(s"CREATE TABLE delta.`$path` (id BIGINT) USING delta TBLPROPERTIES (" +
      "'delta.checkpointInterval' = '100', 'deltaLifecycle.logCompaction.interval' = '2')")
    spark.conf.set(PolicySettings.EnabledSessionKey, "false")
    try appendAndWait(path, 1 to 3)
    finally spark.conf.unset(PolicySettings.EnabledSessionKey)
    val files = new File(path, "_delta_log").list().sorted.toSeq
    spark.read.format("delta").load(path).where(col("id") > lit(0)).collect()
    spark.sql(s"SELECT count(*) FROM delta.`$path`").collect()
    assert(LogMaintenance.awaitIdle(60000))
    assert(new File(path, "_delta_log").list().sorted.toSeq === files)
  }
}
