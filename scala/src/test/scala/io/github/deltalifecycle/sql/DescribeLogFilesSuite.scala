package io.github.deltalifecycle.sql

import java.io.File

import io.github.deltalifecycle.LifecycleSparkSession
import io.github.deltalifecycle.core.DeltaLifecycleException
import io.github.deltalifecycle.sql.plans.LifecycleStatement
import org.apache.spark.sql.Row
import org.apache.spark.sql.types.{ArrayType, IntegerType, TimestampType}
import org.scalatest.funsuite.AnyFunSuite

class DescribeLogFilesSuite extends AnyFunSuite with LifecycleSparkSession {

  private def files(table: String): Seq[Row] =
    spark.sql(s"DESCRIBE LOG FILES $table").collect().toSeq

  /** The log's files as a listing of it sees them: hidden files (Hadoop's sidecars) are not. */
  private def onDisk(path: String): Set[(String, Long)] =
    new File(path, "_delta_log").listFiles().filter(f => f.isFile && !f.getName.startsWith("."))
      .map(f => (f.getName, f.length)).toSet

  test("one row per file of _delta_log, each with its kind and versions, in version order") {
    val path = newTableDir("inventory")
    spark.range(3).write.format("delta").save(path)
    (1 to 3).foreach(_ => spark.range(1).write.format("delta").mode("append").save(path))
    spark.sql(s"ALTER TABLE delta.`$path` COMPACT LOG FROM VERSION 1 TO VERSION 3")
    org.apache.spark.sql.delta.DeltaLog.forTable(spark, path).checkpoint()
    // A copy someone kept of a commit: in the log folder, but no file of the protocol.
    java.nio.file.Files.copy(
      new File(path, "_delta_log/00000000000000000001.json").toPath,
      new File(path, "_delta_log/00000000000000000001.json.bak").toPath
    )

    val rows = files(s"delta.`$path`")
    // Exactly the files on disk, with their sizes: nothing listed twice, nothing left out.
    assert(rows.map(r => (r.getAs[String]("file"), r.getAs[Long]("size"))).toSet === onDisk(path))
    assert(rows.size === onDisk(path).size)
    def kindOf(file: String): (String, Any, Any) = {
      val r = rows.find(_.getAs[String]("file") == file).get
      (r.getAs[String]("kind"), r.get(r.fieldIndex("version")), r.get(r.fieldIndex("endVersion")))
    }
    assert(kindOf("00000000000000000002.json") === (("commit", 2L, 2L)))
    assert(kindOf("00000000000000000001.00000000000000000003.compacted.json") ===
      (("compaction", 1L, 3L)))
    assert(kindOf("00000000000000000003.checkpoint.parquet") === (("checkpoint", 3L, 3L)))
    assert(kindOf("_last_checkpoint") === (("last_checkpoint", null, null)))
    assert(kindOf("00000000000000000001.json.bak") === (("other", null, null)))
    val versions =
      rows.flatMap(r => Option(r.get(r.fieldIndex("version"))).map(_.asInstanceOf[Long]))
    assert(versions === versions.sorted)
    assert(rows.forall(_.getAs[String]("table") === s"delta.`$path`"))
    assert(rows.forall(_.getAs[java.sql.Timestamp]("modificationTime") != null))
  }

  test("a redirected table's log files are the destination's, and the rows say so") {
    val path = newTableDir("inventory-moved-src")
    val dest = newTableDir("inventory-moved-dest")
    spark.range(3).write.format("delta").save(path)
    spark.sql(s"ALTER TABLE delta.`$path` SET REDIRECT TO '$dest'")
    val rows = files(s"delta.`$path`")
    assert(rows.map(_.getAs[String]("file")).toSet === onDisk(dest).map(_._1))
    assert(rows.head.getAs[String]("table").contains("inventory-moved-dest"))
  }

  test("a path that is not a Delta table is refused, typed") {
    val e = intercept[DeltaLifecycleException](files(s"delta.`${newTableDir("nothing-here")}`"))
    assert(e.condition === "DELTA_LIFECYCLE_NOT_A_DELTA_TABLE")
  }

  test("a result's TIMESTAMP is Spark's default whatever the session makes TIMESTAMP mean") {
    spark.conf.set("spark.sql.timestampType", "TIMESTAMP_NTZ")
    try {
      val columns = LifecycleStatement.result("modificationTime TIMESTAMP NOT NULL, ids ARRAY<INT>")
      assert(columns("modificationTime").dataType === TimestampType)
      assert(columns("ids").dataType === ArrayType(IntegerType, containsNull = false))
      val path = newTableDir("ntz-session")
      spark.range(1).write.format("delta").save(path)
      val result = spark.sql(s"DESCRIBE LOG FILES delta.`$path`").schema
      assert(result("modificationTime").dataType === TimestampType)
    } finally spark.conf.unset("spark.sql.timestampType")
  }
}
