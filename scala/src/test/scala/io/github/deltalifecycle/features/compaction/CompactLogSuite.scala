package io.github.deltalifecycle.features.compaction

import java.io.File
import java.nio.charset.StandardCharsets
import java.nio.file.{Files, StandardOpenOption}
import java.util.concurrent.{Callable, Executors}

import scala.jdk.CollectionConverters._

import io.github.deltalifecycle.LifecycleSparkSession
import io.github.deltalifecycle.core.{DeltaLifecycleException, TableLog}
import org.apache.spark.sql.Row
import org.apache.spark.sql.delta.DeltaLog
import org.apache.spark.sql.delta.util.JsonUtils
import org.scalatest.funsuite.AnyFunSuite

/**
 * `ALTER TABLE … COMPACT LOG`: what the file holds, that delta-spark reads the same table with and
 * without it, and that bad ranges and damaged logs fail clearly without writing.
 */
class CompactLogSuite extends AnyFunSuite with LifecycleSparkSession {

  private def logDir(path: String) = new File(path, "_delta_log")
  private def compactionFile(path: String, start: Long, end: Long) =
    new File(logDir(path), f"$start%020d.$end%020d.compacted.json")
  private def lines(f: File): Seq[String] = Files.readAllLines(f.toPath).asScala.toSeq

  /**
   * A table with a checkpoint at version 10 (delta-spark's default) and `after` commits past it.
   */
  private def table(name: String, after: Int): String = {
    val path = newTableDir(name)
    spark.range(0, 10).write.format("delta").save(path)
    (1 to 10 + after).foreach { i =>
      if (i % 4 == 0) spark.sql(s"DELETE FROM delta.`$path` WHERE id = ${(i - 1) * 10}")
      else spark.range(i * 10, i * 10 + 3).write.format("delta").mode("append").save(path)
    }
    path
  }

  private def rows(path: String): Set[Row] = spark.read.format("delta").load(path).collect().toSet

  /** Rows as a fresh delta-spark DeltaLog reads them, with its own use of compactions on or off. */
  private def rowsByDeltaSpark(path: String, useCompactions: Boolean): Set[Row] = {
    val key = "spark.databricks.delta.deltaLog.minorCompaction.useForReads"
    DeltaLog.clearCache()
    spark.conf.set(key, useCompactions.toString)
    try rows(path)
    finally spark.conf.unset(key)
  }

  private def compact(table: String, range: String = ""): Row =
    spark.sql(s"ALTER TABLE $table COMPACT LOG $range").collect().single

  private implicit class Single[T](xs: Array[T]) {
    def single: T = { assert(xs.length === 1); xs.head }
  }

  private def condition(f: => Any): String = intercept[DeltaLifecycleException](f).condition

  test(
    "without a range it compacts the commits since the last checkpoint, and every reader agrees"
  ) {
    val path = table("pending", after = 5)
    val before = rows(path)
    val row = compact(s"delta.`$path`")
    assert((row.getAs[Long]("startVersion"), row.getAs[Long]("endVersion")) === (11L, 15L))
    assert(row.getAs[String]("status") === "written")
    assert(row.getAs[Int]("commits") === 5)
    val file = compactionFile(path, 11, 15)
    assert(file.length() === row.getAs[Long]("bytesWritten"))
    assert(row.getAs[String]("file").endsWith(file.getName))

    // Reconciled: no commitInfo; the files added in the range and still there; every remove.
    def paths(ls: Seq[String], kind: String): Set[String] =
      ls.map(
        JsonUtils.mapper.readTree
      ).filter(_.has(kind)).map(_.get(kind).get("path").asText()).toSet
    val commitLines = (11 to 15).flatMap(v => lines(new File(logDir(path), f"$v%020d.json")))
    val compacted = lines(file)
    assert(!compacted.exists(_.startsWith("{\"commitInfo\"")))
    assert(paths(compacted, "remove") === paths(commitLines, "remove"))
    assert(paths(compacted, "remove").nonEmpty) // the delete at version 12
    assert(paths(compacted, "add") === paths(commitLines, "add") -- paths(commitLines, "remove"))

    val core = TableLog.forPath(spark.sessionState.newHadoopConf(), path).latestSnapshot()
    assert(core.segment.compactions.map(c => (c.start, c.end)) === Seq((11L, 15L)))
    assert(rowsByDeltaSpark(path, useCompactions = true) === before)
    assert(rowsByDeltaSpark(path, useCompactions = false) === before)
    // Damage a commit the compaction covers: readers that use the compaction do not notice.
    Files.write(
      new File(logDir(path), f"${13}%020d.json").toPath,
      "{}\n".getBytes(StandardCharsets.UTF_8),
      StandardOpenOption.TRUNCATE_EXISTING
    )
    assert(rowsByDeltaSpark(path, useCompactions = true) === before)

    // Nothing new to compact now.
    assert(compact(s"delta.`$path`").getAs[String]("status") === "nothing-to-compact")
  }

  test("an explicit range; running it again finds the file; a catalog name works too") {
    val path = table("explicit", after = 6)
    spark.sql(s"CREATE TABLE compact_by_name USING delta LOCATION '$path'")
    val first = compact("compact_by_name", "FROM VERSION 11 TO VERSION 13")
    assert(first.getAs[String]("status") === "written")
    val again = compact("compact_by_name", "from version 11 to version 13")
    assert(again.getAs[String]("status") === "exists")
    // A range containing the existing one is fine: readers take the one reaching furthest.
    assert(compact(s"delta.`$path`", "FROM VERSION 11 TO VERSION 16").getAs[String]("status") ===
      "written")
    assert(rowsByDeltaSpark(path, useCompactions = true) === rows(path))
  }

  test("a range an existing compaction covers is reported as covered, and nothing is written") {
    val path = table("covered", after = 6)
    val t = s"delta.`$path`"
    def compactionsOnDisk = logDir(path).list().filter(_.endsWith(".compacted.json")).sorted.toSeq
    val wide = compact(t, "FROM VERSION 11 TO VERSION 16")
    assert(wide.getAs[String]("status") === "written")
    val bytes = Files.readAllBytes(compactionFile(path, 11, 16).toPath)

    for ((start, end) <- Seq((12L, 15L), (11L, 13L), (15L, 16L))) {
      val row = compact(t, s"FROM VERSION $start TO VERSION $end")
      assert(row.getAs[String]("status") === "covered", (start, end))
      assert((row.getAs[Long]("startVersion"), row.getAs[Long]("endVersion")) === (start, end))
      assert(row.getAs[String]("file") === wide.getAs[String]("file"))
      assert(row.getAs[Int]("commits") === end - start + 1)
      assert(row.getAs[Long]("bytesWritten") === 0 && row.getAs[Int]("actions") === 0)
    }
    assert(compact(t, "FROM VERSION 11 TO VERSION 16").getAs[String]("status") === "exists")
    assert(compactionsOnDisk === Seq(compactionFile(path, 11, 16).getName))
    assert(java.util.Arrays.equals(Files.readAllBytes(compactionFile(path, 11, 16).toPath), bytes))

    // Sticking out on one side is still a conflict; a damaged covering file is not "covered".
    assert(condition(compact(t, "FROM VERSION 9 TO VERSION 12")) ===
      "DELTA_LIFECYCLE_COMPACTION_CONFLICT")
    Files.write(compactionFile(path, 11, 16).toPath, Array.emptyByteArray)
    val damaged = intercept[DeltaLifecycleException](compact(t, "FROM VERSION 12 TO VERSION 15"))
    assert(damaged.condition === "DELTA_LIFECYCLE_COMPACTION_CONFLICT")
    assert(damaged.getMessage.contains("safe to delete"))
    assert(compactionsOnDisk === Seq(compactionFile(path, 11, 16).getName))
  }

  test("two compactors racing on one range leave one complete file, and neither fails") {
    val path = table("race", after = 8)
    val log = TableLog.forPath(spark.sessionState.newHadoopConf(), path)
    val listing = log.listing()
    val pool = Executors.newFixedThreadPool(2)
    try {
      val tasks = (1 to 2).map(_ =>
        pool.submit(new Callable[CompactionOutcome] {
          override def call(): CompactionOutcome =
            LogCompaction.compact(log, listing, 11, 18)
        })
      )
      val statuses = tasks.map(_.get().status).toSet
      assert(statuses.subsetOf(Set(CompactionStatus.Written, CompactionStatus.AlreadyExists)))
      assert(statuses.contains(CompactionStatus.Written))
    } finally pool.shutdown()
    assert(logDir(path).list().filter(_.endsWith(".compacted.json")).toSeq ===
      Seq(compactionFile(path, 11, 18).getName))
    assert(rowsByDeltaSpark(path, useCompactions = true) === rows(path))
  }

  test("action fields delta-spark does not model are kept as written") {
    val path = table("unknown-fields", after = 3)
    val commit = new File(logDir(path), f"${11}%020d.json")
    val text = lines(commit).map { l =>
      if (l.startsWith("{\"add\":{"))
        l.replaceFirst("\\{\"add\":\\{", "{\"add\":{\"futureField\":{\"x\":1},")
      else l
    }
    Files.write(commit.toPath, text.mkString("", "\n", "\n").getBytes(StandardCharsets.UTF_8))
    compact(s"delta.`$path`", "FROM VERSION 11 TO VERSION 13")
    assert(lines(compactionFile(path, 11, 13)).exists(_.contains("\"futureField\":{\"x\":1}")))
  }

  test(
    "in-commit timestamps: delta-spark still reads the timestamp and rows of a compacted version"
  ) {
    val path = newTableDir("ict")
    spark.sql(
      s"CREATE TABLE delta.`$path` (id BIGINT) USING delta " +
        "TBLPROPERTIES ('delta.enableInCommitTimestamps' = 'true', " +
        "'delta.checkpointInterval' = '100')"
    )
    (1 to 4).foreach(i => spark.sql(s"INSERT INTO delta.`$path` VALUES ($i)"))
    DeltaLog.clearCache()
    val expected = DeltaLog.forTable(spark, path).update()
    val (timestamp, version) = (expected.timestamp, expected.version)
    compact(s"delta.`$path`")
    DeltaLog.clearCache()
    val snapshot = DeltaLog.forTable(spark, path).update()
    assert((snapshot.version, snapshot.timestamp) === (version, timestamp))
    assert(rows(path).map(_.getLong(0)) === Set(1L, 2L, 3L, 4L))
  }

  test("bad ranges fail with a clear error and write nothing") {
    val path = table("bad-ranges", after = 6)
    val t = s"delta.`$path`"
    def compactionsOnDisk = logDir(path).list().filter(_.endsWith(".compacted.json")).sorted.toSeq
    assert(condition(compact(t, "FROM VERSION 12 TO VERSION 12")) ===
      "DELTA_LIFECYCLE_INVALID_COMPACTION_RANGE")
    assert(condition(compact(t, "FROM VERSION 14 TO VERSION 12")) ===
      "DELTA_LIFECYCLE_INVALID_COMPACTION_RANGE")
    val tooFar = intercept[DeltaLifecycleException](compact(t, "FROM VERSION 12 TO VERSION 99"))
    assert(tooFar.getMessage.contains("latest version of the table is 16"))

    new File(logDir(path), f"${3}%020d.json").delete()
    val missing = intercept[DeltaLifecycleException](compact(t, "FROM VERSION 1 TO VERSION 5"))
    assert(missing.condition === "DELTA_LIFECYCLE_INVALID_COMPACTION_RANGE")
    assert(missing.getMessage.contains("[3]"))
    assert(compactionsOnDisk === Nil)

    // A planted empty file of the same name is never overwritten; the error says what to do.
    Files.write(compactionFile(path, 11, 13).toPath, Array.emptyByteArray)
    val planted = intercept[DeltaLifecycleException](compact(t, "FROM VERSION 11 TO VERSION 13"))
    assert(planted.condition === "DELTA_LIFECYCLE_COMPACTION_CONFLICT")
    assert(planted.getMessage.contains("safe to delete"))
    assert(compactionFile(path, 11, 13).length() === 0)

    // Partial overlap with an existing compaction.
    compact(t, "FROM VERSION 14 TO VERSION 16")
    assert(condition(compact(t, "FROM VERSION 12 TO VERSION 15")) ===
      "DELTA_LIFECYCLE_COMPACTION_CONFLICT")
    assert(compactionsOnDisk ===
      Seq(compactionFile(path, 11, 13).getName, compactionFile(path, 14, 16).getName))
  }

  test("a range whose surviving actions pass the memory limit fails clearly and writes nothing") {
    val path = table("too-large", 5)
    val key = "spark." + PolicySettings.MaxBytesInMemoryKey
    spark.conf.set(key, "1000")
    try {
      val e = intercept[DeltaLifecycleException](
        compact(s"delta.`$path`", "FROM VERSION 11 TO VERSION 15")
      )
      assert(e.condition === "DELTA_LIFECYCLE_COMPACTION_TOO_LARGE")
      assert(e.getMessage.contains("Compact a smaller range"), e.getMessage)
      assert(e.getMessage.contains(PolicySettings.MaxBytesInMemoryKey), e.getMessage)
      assert(!compactionFile(path, 11, 15).exists())
      assert(condition(compact(s"delta.`$path`")) === "DELTA_LIFECYCLE_COMPACTION_TOO_LARGE")
      // The table's property wins over the session's setting.
      spark.sql(s"ALTER TABLE delta.`$path` SET TBLPROPERTIES " +
        s"('${PolicySettings.MaxBytesInMemoryKey}' = '${64L << 20}')")
      assert(compact(s"delta.`$path`", "FROM VERSION 11 TO VERSION 16").getAs[String]("status") ===
        "written")
    } finally spark.conf.unset(key)
  }

  test("a range with a protocol this client does not support is refused") {
    val path = table("unsupported", after = 3)
    val commit = new File(logDir(path), f"${12}%020d.json")
    val protocol = """{"protocol":{"minReaderVersion":3,"minWriterVersion":7,""" +
      """"readerFeatures":["futureReaderFeature"],"writerFeatures":["futureReaderFeature"]}}"""
    Files.write(
      commit.toPath,
      (protocol + "\n").getBytes(StandardCharsets.UTF_8),
      StandardOpenOption.APPEND
    )
    val e =
      intercept[DeltaLifecycleException](compact(s"delta.`$path`", "FROM VERSION 11 TO VERSION 12"))
    assert(e.condition === "DELTA_LIFECYCLE_UNSUPPORTED_PROTOCOL")
    assert(e.getMessage.contains("futureReaderFeature"))
    assert(!compactionFile(path, 11, 12).exists())
  }

  test("the statement is parsed by this project only after ALTER TABLE <name> COMPACT|CLEAN LOG") {
    import io.github.deltalifecycle.sql.parser.DeltaLifecycleSqlParser.isOwnStatement
    assert(isOwnStatement("ALTER TABLE db.t COMPACT LOG"))
    assert(isOwnStatement("alter table delta.`/x/y` clean log retain 2 hours dry run"))
    assert(isOwnStatement("ALTER TABLE log COMPACT LOG"))
    assert(!isOwnStatement("ALTER TABLE t SET TBLPROPERTIES ('a' = 'b')"))
    assert(!isOwnStatement("ALTER TABLE compact ADD COLUMNS (log INT)"))
    // Spark and Delta still parse their own ALTER TABLE statements.
    val path = table("delegation", after = 0)
    spark.sql(s"ALTER TABLE delta.`$path` SET TBLPROPERTIES ('deltaLifecycle.note' = 'x')")
  }
}
