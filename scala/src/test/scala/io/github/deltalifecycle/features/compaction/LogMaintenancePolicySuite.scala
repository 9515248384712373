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
    // The first block of a level-2 block starts one version later (the level-2 one starts there).
    assert(LogMaintenancePolicy.decide(
      listing(commits(0 to 105) :+ checkpoint(100): _*),
      settings
    ) === Compact(102, 105))
    val afterCompaction = commits(0 to 110) ++ Seq(checkpoint(100), compaction(101, 105))
    assert(LogMaintenancePolicy.decide(listing(afterCompaction: _*), settings) ===
      Compact(106, 110))
    val notYet = commits(0 to 109) ++ Seq(checkpoint(100), compaction(101, 105))
    assert(LogMaintenancePolicy.decide(listing(notYet: _*), settings) === Nothing)
  }

  test("levels: as many as are narrower than the checkpoint interval, at most interval - 1") {
    def levels(interval: Int, checkpointInterval: Int) =
      PolicySettings(interval, 1000, checkpointInterval).levels
    assert(levels(10, 1000) === 2)
    assert(levels(10, 100) === 1)
    assert(levels(10, 10) === 0)
    assert(levels(1, 100) === 0)
    assert(levels(2, 50) === 1)
    assert(levels(3, 50) === 2)
    assert(levels(4, 100) === 3)
    assert(levels(10, 100000) === 4)
  }

  test("level ranges: no two levels start at the same version") {
    val ranges = LogMaintenancePolicy.levelRanges(999, 1999, PolicySettings(10, 1000, 1000))
    val level1 = ranges.filter { case (s, e) => e - s < 10 }
    val level2 = ranges.filter { case (s, e) => e - s >= 10 }
    assert(level2 === (0 until 10).map(i => (1000L + i * 100, 1099L + i * 100)))
    assert(level1.size === 100)
    assert(level1.take(3) === Seq((1001L, 1009L), (1010L, 1019L), (1020L, 1029L)))
    assert(level1.contains((1101L, 1109L)) && level1.contains((1980L, 1989L)))
    assert(ranges.map(_._1).distinct.size === ranges.size)
    // Three levels shift the narrowest by two; every range still spans at least two commits.
    val three = LogMaintenancePolicy.levelRanges(-1, 63, PolicySettings(4, 1000, 100))
    assert(three.take(2) === Seq((2L, 3L), (4L, 7L)))
    assert(three.contains((1L, 15L)) && three.contains((0L, 63L)) && three.contains((16L, 31L)))
    assert(three.forall { case (s, e) => e > s } && three.map(_._1).distinct.size === three.size)
  }

  test("a wider level is merged once its block is complete; written levels are not rewritten") {
    val base = commits(0 to 125) :+ checkpoint(100)
    val level1 = Seq((102L, 105L), (106L, 110L), (111L, 115L), (116L, 120L), (121L, 125L))
    assert(LogMaintenancePolicy.decide(listing(base: _*), settings) ===
      Compact(level1 :+ (101L -> 125L)))
    val withLevel1 = base ++ level1.map { case (x, y) => compaction(x, y) }
    assert(LogMaintenancePolicy.decide(listing(withLevel1: _*), settings) === Compact(101, 125))
    // A later level-1 block: the first of the next level-2 block is shifted again.
    val withLevel2 = commits(126 to 130) ++ withLevel1 :+ compaction(101, 125)
    assert(LogMaintenancePolicy.decide(listing(withLevel2: _*), settings) === Compact(127, 130))
    val all = withLevel2 :+ compaction(127, 130)
    assert(LogMaintenancePolicy.decide(listing(all: _*), settings) === Nothing)
    // A reader takes the widest: level 2, the shifted-out commit, then level 1.
    val segment = LogSegment.plan(listing(all: _*), 130)
    assert(segment.steps.map(_.fold(c => s"${c.start}-${c.end}", c => c.version.toString)) ===
      Seq("101-125", "126", "127-130"))
  }

  test("an overlapping compaction of another writer leaves its ranges to the commits") {
    val log = commits(0 to 110) ++ Seq(checkpoint(100), compaction(104, 108))
    assert(LogMaintenancePolicy.decide(listing(log: _*), settings) === Nothing)
  }

  test("covered compactions expire once the wider one and their own commits are old enough") {
    val hour = 3600L * 1000
    def file(name: String, mtime: Long, size: Long = 100) =
      new FileStatus(size, false, 1, 1, mtime, new Path("/t/_delta_log", name))
    val now = 100 * hour
    val old = now - 30 * hour
    val statuses = (0 to 12).map(v => file(f"$v%020d.json", if (v <= 10) old else now)) ++ Seq(
      file(compaction(1, 4), old),
      file(compaction(5, 9), old),
      file(compaction(11, 12), now),
      file(compaction(0, 9), old),
      file(compaction(0, 12), now)
    )
    val log = LogListing.classify(new Path("/t"), statuses)
    def names(cs: Seq[CompactionFile]) = cs.map(c => (c.start, c.end))
    assert(names(CoveredCompactions.expired(log, 24, now)) === Seq((1L, 4L), (5L, 9L)))
    assert(names(CoveredCompactions.expired(log, 31, now)).isEmpty)
    // The wider one must not be empty: an empty one is no stand-in (readers skip it).
    val emptyWide = LogListing.classify(
      new Path("/t"),
      statuses.filterNot(_.getPath.getName.startsWith(f"${0}%020d.")) ++
        Seq(file(compaction(0, 9), old, size = 0), file(f"${0}%020d.json", old))
    )
    assert(names(CoveredCompactions.expired(emptyWide, 24, now)).isEmpty)
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
      Map("deltaLifecycle.logCompaction.coveredRetentionHours" -> "0.5"),
      _ => None
    ).coveredRetentionHours === 0.5)
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
    // Levels of 4, 16 and 64 commits: the first level-1 block starts two versions later.
    assert(logFiles(path, ".compacted.json") ===
      Seq(compaction(2, 3), compaction(4, 7)))
    DeltaLog.clearCache()
    assert(spark.read.format("delta").load(path).collect().toSet === (1 to 9).map(i =>
      Row(i.toLong)
    ).toSet)
    val core = TableLog.forPath(spark.sessionState.newHadoopConf(), path).latestSnapshot()
    assert(core.segment.compactions.map(c => (c.start, c.end)) === Seq((2L, 3L), (4L, 7L)))
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
        "'delta.checkpointInterval' = '10', 'deltaLifecycle.logCompaction.interval' = '4')")
      appendAndWait(path, 1 to 1)
      spark.conf.set(key, (held(path, 0) + held(path, 1) * 3 / 2).toString)
      appendAndWait(path, 2 to 3)
      assert(logFiles(path, ".compacted.json") === Seq(compaction(0, 1)))

      // Not even one commit fits: nothing is compacted, and every commit still lands.
      spark.conf.set(key, "1")
      val other = newTableDir("policy-memory-none")
      spark.sql(s"CREATE TABLE delta.`$other` (id BIGINT) USING delta TBLPROPERTIES (" +
        "'delta.checkpointInterval' = '10', 'deltaLifecycle.logCompaction.interval' = '4')")
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
