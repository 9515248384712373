package io.github.deltalifecycle.sql

import java.io.File
import java.nio.file.Files

import scala.jdk.CollectionConverters._

import io.github.deltalifecycle.LifecycleSparkSession
import io.github.deltalifecycle.core.DeltaLifecycleException
import org.apache.spark.sql.Row
import org.apache.spark.sql.catalyst.parser.ParseException
import org.apache.spark.sql.delta.util.JsonUtils
import org.scalatest.funsuite.AnyFunSuite

class DescribeProtocolHistorySuite extends AnyFunSuite with LifecycleSparkSession {

  /** The protocol each commit file writes, read straight from the JSON on disk. */
  private def protocolsOnDisk(path: String): Map[Long, (Int, Int)] = {
    val log = new File(path, "_delta_log")
    log.listFiles().filter(_.getName.matches("\\d{20}\\.json")).sortBy(_.getName).flatMap { f =>
      Files.readAllLines(
        f.toPath
      ).asScala.map(JsonUtils.mapper.readTree).find(_.has("protocol")).map { p =>
        f.getName.take(20).toLong ->
          (
            p.get("protocol").get("minReaderVersion").asInt(),
            p.get("protocol").get("minWriterVersion").asInt()
          )
      }
    }.toMap
  }

  private def strings(row: Row, field: String): Seq[String] =
    row.getSeq[String](row.fieldIndex(field))

  private def history(table: String): Seq[Row] =
    spark.sql(s"DESCRIBE PROTOCOL HISTORY $table").collect().toSeq

  test("one row per version, with the protocol each commit put in force") {
    val path = newTableDir("gains-features")
    spark.range(5).write.format("delta").save(path)
    spark.sql(
      s"ALTER TABLE delta.`$path` SET TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')"
    )
    spark.range(5, 8).write.format("delta").mode("append").save(path)
    spark.sql(
      s"ALTER TABLE delta.`$path` SET TBLPROPERTIES ('delta.enableChangeDataFeed' = 'true')"
    )

    val rows = history(s"delta.`$path`")
    assert(rows.map(_.getAs[Long]("version")) === (0L to 3L))
    var inForce = (0, 0)
    val onDisk = protocolsOnDisk(path)
    for (row <- rows) {
      inForce = onDisk.getOrElse(row.getAs[Long]("version"), inForce)
      assert((row.getAs[Int]("minReaderVersion"), row.getAs[Int]("minWriterVersion")) === inForce)
    }
    assert(strings(rows(1), "readerFeatures").contains("deletionVectors"))
    assert(strings(rows(3), "writerFeatures").contains("changeDataFeed"))
    assert(rows.head.getAs[String]("operation") === "WRITE")
    assert(rows.forall(_.getAs[java.sql.Timestamp]("timestamp") != null))
    assert(rows.forall(strings(_, "compactions").isEmpty))
  }

  test(
    "checkpoints are reported, and history starts at the oldest checkpoint " +
      "once old commits are gone"
  ) {
    val path = newTableDir("checkpointed")
    spark.range(1).write.format("delta").save(path)
    spark.sql(s"ALTER TABLE delta.`$path` SET TBLPROPERTIES ('delta.checkpointInterval' = '2')")
    (1 to 3).foreach(i => spark.range(i, i + 1).write.format("delta").mode("append").save(path))
    val rows = history(s"delta.`$path`")
    val checkpointed =
      rows.filter(_.getAs[String]("checkpoint") != null).map(_.getAs[Long]("version"))
    assert(checkpointed === Seq(2L, 4L))
    assert(
      rows.filter(_.getAs[String]("checkpoint") != null).forall(_.getAs[String]("checkpoint") ==
        "classic")
    )

    // Drop commits 0..1: version 2 (a checkpoint) is now the oldest reconstructable version.
    Seq(0, 1).foreach(v => new File(path, f"_delta_log/$v%020d.json").delete())
    val truncated = history(s"delta.`$path`")
    assert(truncated.map(_.getAs[Long]("version")) === (2L to 4L))
    assert(truncated.head.getAs[Int]("minWriterVersion") === rows(2).getAs[Int]("minWriterVersion"))
  }

  test("a catalog table is found by name, qualified or not") {
    spark.sql("CREATE TABLE by_name (id BIGINT) USING delta")
    spark.sql("INSERT INTO by_name VALUES (1)")
    assert(history("by_name").size === 2)
    assert(history("default.by_name").size === 2)
    assert(history("spark_catalog.default.by_name").size === 2)
  }

  test("bad targets fail with typed errors that say what is wrong") {
    val notDelta = newTableDir("plain-dir")
    new File(notDelta).mkdirs()
    val e1 = intercept[DeltaLifecycleException](history(s"delta.`$notDelta`"))
    assert(e1.getCondition === "DELTA_LIFECYCLE_NOT_A_DELTA_TABLE")
    assert(e1.getMessage.contains("_delta_log"))

    val e2 = intercept[DeltaLifecycleException](history("no_such_table"))
    assert(e2.getCondition === "DELTA_LIFECYCLE_TABLE_NOT_FOUND")

    spark.sql("CREATE TABLE parquet_table (id INT) USING parquet")
    val e3 = intercept[DeltaLifecycleException](history("parquet_table"))
    assert(e3.getCondition === "DELTA_LIFECYCLE_NOT_DELTA_PROVIDER")

    val path = newTableDir("gap")
    (0 to 2).foreach(i => spark.range(i, i + 1).write.format("delta").mode("append").save(path))
    new File(path, f"_delta_log/${1}%020d.json").delete()
    val e4 = intercept[DeltaLifecycleException](history(s"delta.`$path`"))
    assert(e4.getCondition === "DELTA_LIFECYCLE_NON_CONTIGUOUS_VERSIONS")
    assert(e4.getMessage.contains("[1]"))
  }

  test("a log whose states cannot be rebuilt is refused, as delta-spark refuses it") {
    val expected = Map(
      "deltalog-state-reconstruction-without-metadata" -> "DELTA_LIFECYCLE_CORRUPT_LOG",
      "deltalog-state-reconstruction-without-protocol" -> "DELTA_LIFECYCLE_INVALID_PROTOCOL",
      "deltalog-state-reconstruction-from-checkpoint-missing-metadata" ->
        "DELTA_LIFECYCLE_CORRUPT_LOG",
      "deltalog-state-reconstruction-from-checkpoint-missing-protocol" ->
        "DELTA_LIFECYCLE_INVALID_PROTOCOL"
    )
    for ((name, condition) <- expected) {
      val path = copyOfSharedTable("delta-golden", name)
      val e = intercept[DeltaLifecycleException](history(s"delta.`$path`"))
      assert(e.getCondition === condition, s"$name: ${e.getMessage}")
      if (condition.endsWith("CORRUPT_LOG") && name.contains("checkpoint"))
        assert(e.getMessage.contains("checkpoint"), e.getMessage)
    }
  }

  test("the parser owns only its statements and hands everything else on") {
    val e = intercept[ParseException](spark.sql("DESCRIBE PROTOCOL HISTORY"))
    assert(e.getCondition === "PARSE_SYNTAX_ERROR")
    intercept[ParseException](spark.sql("DESCRIBE PROTOCOL HISTORY t extra"))

    val path = newTableDir("delegation")
    spark.range(3).write.format("delta").save(path)
    assert(spark.sql(s"DESCRIBE HISTORY delta.`$path`").count() === 1)
    assert(spark.sql("SELECT 1 AS one").collect().head.getInt(0) === 1)
    assert(spark.sql(s"desc protocol history delta.`$path`;").count() === 1)
    assert(spark.sql(s"/* why */ DESCRIBE -- comment\n PROTOCOL HISTORY delta.`$path`").count() ===
      1)
  }
}
