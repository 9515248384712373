package io.github.deltalifecycle.core

import java.io.File

import io.github.deltalifecycle.LifecycleSparkSession
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.delta.DeltaLog
import org.apache.spark.sql.delta.util.FileNames
import org.scalatest.funsuite.AnyFunSuite

/**
 * Commits written by the core's committer are read back by delta-spark, and never overwrite a
 * commit.
 */
class LogCommitterSuite extends AnyFunSuite with LifecycleSparkSession {

  private def table(name: String, properties: String = ""): (String, TableLog) = {
    val path = newTableDir(name)
    val props = if (properties.isEmpty) "" else s" TBLPROPERTIES ($properties)"
    spark.sql(s"CREATE TABLE delta.`$path` (id BIGINT) USING delta$props")
    (1 to 2).foreach(i => spark.sql(s"INSERT INTO delta.`$path` VALUES ($i)"))
    (path, TableLog.forPath(spark.sessionState.newHadoopConf(), path))
  }

  private def withProperty(log: TableLog, key: String, value: String) = {
    val metadata = log.latestSnapshot().metadata
    metadata.copy(configuration = metadata.configuration + (key -> value))
  }

  test("a metadata commit is read back by delta-spark, rows unchanged") {
    val (path, log) = table("metadata")
    val rows = spark.read.format("delta").load(path).collect().toSet
    val version = LogCommitter.commit(
      log,
      2,
      Seq(withProperty(log, "lifecycle.test", "yes")),
      "SET TBLPROPERTIES",
      Map("properties" -> Map("lifecycle.test" -> "yes"))
    )
    assert(version === 3)
    DeltaLog.clearCache()
    val snapshot = DeltaLog.forTable(spark, path).update()
    assert(snapshot.version === 3)
    assert(snapshot.metadata.configuration.get("lifecycle.test") === Some("yes"))
    assert(spark.read.format("delta").load(path).collect().toSet === rows)
    val history = spark.sql(s"DESCRIBE HISTORY delta.`$path` LIMIT 1").collect().head
    assert(history.getAs[String]("operation") === "SET TBLPROPERTIES")
  }

  test("with in-commit timestamps the commit carries a later timestamp than the one before") {
    val (path, log) = table("ict", "'delta.enableInCommitTimestamps' = 'true'")
    DeltaLog.clearCache()
    val before = DeltaLog.forTable(spark, path).update().timestamp
    LogCommitter.commit(
      log,
      2,
      Seq(withProperty(log, "lifecycle.test", "yes")),
      "SET TBLPROPERTIES",
      Map.empty
    )
    DeltaLog.clearCache()
    val after = DeltaLog.forTable(spark, path).update()
    assert(after.version === 3)
    assert(after.timestamp > before)
  }

  test("a stale read version is a typed conflict, and the existing commit is untouched") {
    val (path, log) = table("conflict")
    def commitFile(v: Long) =
      new File(FileNames.unsafeDeltaFile(new Path(path, "_delta_log"), v).toUri.getPath)
    val commit2 = commitFile(2)
    val bytes = java.nio.file.Files.readAllBytes(commit2.toPath)
    val e = intercept[DeltaLifecycleException] {
      LogCommitter.commit(
        log,
        1,
        Seq(withProperty(log, "lifecycle.test", "no")),
        "SET TBLPROPERTIES",
        Map.empty
      )
    }
    assert(e.condition === "DELTA_LIFECYCLE_CONCURRENT_COMMIT")
    assert(java.util.Arrays.equals(java.nio.file.Files.readAllBytes(commit2.toPath), bytes))
    assert(!commitFile(3).exists())
  }
}
