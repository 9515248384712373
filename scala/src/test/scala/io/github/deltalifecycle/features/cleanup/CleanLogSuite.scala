package io.github.deltalifecycle.features.cleanup

import java.io.File
import java.nio.charset.StandardCharsets
import java.nio.file.Files

import scala.jdk.CollectionConverters._

import io.github.deltalifecycle.LifecycleSparkSession
import io.github.deltalifecycle.LogTestFiles._
import io.github.deltalifecycle.core.TableLog
import org.apache.spark.sql.Row
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.delta.DeltaLog
import org.apache.spark.sql.delta.catalog.DeltaTableV2
import org.apache.spark.sql.delta.commands.AlterTableDropFeatureDeltaCommand
import org.scalatest.funsuite.AnyFunSuite

/**
 * `ALTER TABLE … CLEAN LOG`: PROTOCOL.md's metadata cleanup (with compactions and checksums), DRY
 * RUN, and the Checkpoint Protection RFC's rules on a table whose deletionVectors feature
 * delta-spark dropped with its own checkpoint-protected DROP FEATURE.
 */
class CleanLogSuite extends AnyFunSuite with LifecycleSparkSession {

  private def clean(path: String, options: String): Seq[Row] =
    spark.sql(s"ALTER TABLE delta.`$path` CLEAN LOG $options").collect().toSeq

  private def rows(path: String, version: Option[Long] = None): Set[Row] = {
    DeltaLog.clearCache()
    val reader = spark.read.format("delta")
    version.fold(reader)(v => reader.option("versionAsOf", v)).load(path).collect().toSet
  }

  test(
    "expired commits, checksums and compactions before the cut-off checkpoint go; DRY RUN " +
      "only lists them"
  ) {
    val path = newTableDir("plain")
    spark.sql(
      s"CREATE TABLE delta.`$path` (id BIGINT) USING delta TBLPROPERTIES " +
        "('delta.checkpointInterval' = '5')"
    )
    (1 to 12).foreach(i => spark.sql(s"INSERT INTO delta.`$path` VALUES ($i)"))
    spark.sql(s"ALTER TABLE delta.`$path` COMPACT LOG FROM VERSION 1 TO VERSION 3")
    spark.sql(s"ALTER TABLE delta.`$path` COMPACT LOG FROM VERSION 6 TO VERSION 8")
    age(path, through = 10, hours = 48)
    val (latest, at10) = (rows(path), rows(path, Some(10)))
    val before = logNames(path)

    val planned = clean(path, "RETAIN 24 HOURS DRY RUN")
    assert(logNames(path) === before)
    assert(planned.forall(_.getAs[String]("action") == "to delete"))
    val byKind = planned.groupBy(_.getAs[String]("kind")).map { case (k, rs) =>
      k -> rs.map(_.getAs[Long]("version"))
    }
    assert(byKind("commit") === (0L to 9L))
    assert(byKind("checksum") === (0L to 9L))
    assert(byKind("compaction") === Seq(1L, 6L))
    assert(byKind("checkpoint") === Seq(5L))
    // Deletion order: commits first, checkpoints last (RFC rule d).
    assert(planned.map(_.getAs[String]("kind")).distinct ===
      Seq("commit", "checksum", "compaction", "checkpoint"))

    val done = clean(path, "RETAIN 24 HOURS")
    assert(done.map(_.getAs[String]("path")) === planned.map(_.getAs[String]("path")))
    assert(done.forall(_.getAs[String]("action") == "deleted"))
    assert(logNames(path) ===
      before -- planned.map(r => new File(r.getAs[String]("path").stripPrefix("file:")).getName))
    assert(logNames(path).contains(name(10, "json")) &&
      logNames(path).contains(name(10, "checkpoint.parquet")))
    assert(rows(path) === latest)
    assert(rows(path, Some(10)) === at10)
    // A re-run finds nothing more; the table's own 30-day retention deletes nothing at all.
    assert(clean(path, "RETAIN 24 HOURS").isEmpty)
    assert(clean(path, "").isEmpty)
  }

  test(
    "sidecars of expired V2 checkpoints, and orphaned ones, go after the checkpoints; those a " +
      "retained checkpoint names stay"
  ) {
    val path = newTableDir("v2-sidecars")
    spark.sql(
      s"CREATE TABLE delta.`$path` (id BIGINT) USING delta TBLPROPERTIES " +
        "('delta.checkpointInterval' = '4', 'delta.checkpointPolicy' = 'v2')"
    )
    (1 to 9).foreach(i => spark.sql(s"INSERT INTO delta.`$path` VALUES ($i)"))
    val log = TableLog.forPath(spark.sessionState.newHadoopConf(), path)
    def sidecarsAt(v: Long): Set[String] =
      log.sidecarsOf(log.listing().checkpointsAt(v).head).map(_.getName).toSet
    val (expiring, retained) = (sidecarsAt(4), sidecarsAt(8))
    assert(expiring.nonEmpty && retained.nonEmpty, "delta-spark wrote no sidecars")
    val dir = new File(logDir(path), "_sidecars")
    // One left by a checkpoint that never completed.
    Files.write(new File(dir, "orphan.parquet").toPath, "x".getBytes(StandardCharsets.UTF_8))
    age(path, through = 8, hours = 48)
    val old = System.currentTimeMillis() - 48L * 3600 * 1000
    dir.listFiles().foreach(_.setLastModified(old))
    val latest = rows(path)

    val done = clean(path, "RETAIN 24 HOURS")
    assert(done.map(_.getAs[String]("kind")).distinct.last === "sidecar")
    val sidecars = done.filter(_.getAs[String]("kind") == "sidecar")
    assert(sidecars.map(r => new Path(r.getAs[String]("path")).getName).toSet ===
      expiring + "orphan.parquet")
    assert(sidecars.forall(_.getAs[String]("action") == "deleted"))
    assert(dir.list().filterNot(_.startsWith(".")).toSet === retained)
    assert(rows(path) === latest)
    assert(clean(path, "RETAIN 24 HOURS").isEmpty)
  }

  /**
   * A table where delta-spark dropped a reader-writer feature with checkpoint protection; returns
   * the boundary. vacuumProtocolCheck, because delta-spark declares it removable on every line;
   * delta-spark 3.3 drops with protection only behind its development flag (on by default in 4.4).
   */
  private def droppedFeatureTable(dir: String): (String, Long) = {
    val path = newTableDir(dir)
    spark.sql(s"CREATE TABLE delta.`$path` (id BIGINT) USING delta TBLPROPERTIES " +
      "('delta.feature.vacuumProtocolCheck' = 'supported', 'delta.checkpointInterval' = '3')")
    (0 until 5).foreach(i => spark.sql(s"INSERT INTO delta.`$path` VALUES ($i), (${i + 100})"))
    spark.sql(s"DELETE FROM delta.`$path` WHERE id = 2")
    val fastDrop = "spark.databricks.delta.tableFeatures.dev.fastDropFeature.enabled"
    spark.conf.set(fastDrop, "true")
    // delta-spark's own command, not this project's (which owns the SQL statement).
    try AlterTableDropFeatureDeltaCommand(
        DeltaTableV2(spark, new Path(path)),
        "vacuumProtocolCheck"
      ).run(spark)
    finally spark.conf.unset(fastDrop)
    val snapshot = TableLog.forPath(spark.sessionState.newHadoopConf(), path).latestSnapshot()
    val boundary = LogCleanup.protectedBefore(snapshot.protocol, snapshot.metadata)
    assert(boundary.isDefined, "delta-spark's DROP FEATURE should have added checkpointProtection")
    (path, boundary.get)
  }

  private def checkpointsBefore(path: String, boundary: Long): Set[String] =
    logNames(path).filter(n => n.endsWith(".checkpoint.parquet") && n.take(20).toLong < boundary)

  test(
    "protection: a cleanup that would split the protected range keeps every checkpoint " +
      "before the boundary"
  ) {
    val (path, boundary) = droppedFeatureTable("protected-split")
    val protectedCheckpoints = checkpointsBefore(path, boundary)
    val cut = protectedCheckpoints.map(_.take(20).toLong).max
    age(path, through = cut, hours = 48)
    val latest = rows(path)

    val result = clean(path, "RETAIN 24 HOURS")
    val kept = result.filter(_.getAs[String]("action") == "kept")
    assert(kept.map(_.getAs[String]("kind")).toSet === Set("checkpoint"))
    assert(kept.head.getAs[String]("reason").contains(s"before version $boundary"))
    assert(result.exists(r =>
      r.getAs[String]("kind") == "commit" && r.getAs[String]("action") == "deleted"
    ))
    assert(checkpointsBefore(path, boundary) === protectedCheckpoints)
    assert(rows(path) === latest)
  }

  test(
    "protection: versions this client does not support are cleaned only in one pass up to " +
      "the boundary"
  ) {
    val (path, boundary) = droppedFeatureTable("protected-unsupported")
    // Version 0 now names a feature this client does not know.
    val commit0 = new File(logDir(path), name(0, "json"))
    val text = Files.readAllLines(commit0.toPath).asScala.map { l =>
      if (l.startsWith("{\"protocol\""))
        l.replace("\"writerFeatures\":[", "\"writerFeatures\":[\"futureFeature\",")
      else l
    }
    Files.write(commit0.toPath, text.mkString("", "\n", "\n").getBytes(StandardCharsets.UTF_8))
    val cut = checkpointsBefore(path, boundary).map(_.take(20).toLong).max
    age(path, through = cut, hours = 48)
    val before = logNames(path)

    val refused = clean(path, "RETAIN 24 HOURS")
    assert(refused.nonEmpty && refused.forall(_.getAs[String]("action") == "kept"))
    assert(refused.head.getAs[String]("reason").contains("futureFeature"))
    assert(logNames(path) === before)

    // Once the retention reaches the boundary, everything before it goes in one pass.
    age(path, through = boundary, hours = 48)
    val latest = rows(path)
    val onePass = clean(path, "RETAIN 24 HOURS")
    assert(onePass.forall(_.getAs[String]("action") == "deleted"))
    assert(checkpointsBefore(path, boundary).isEmpty)
    assert(!logNames(path).contains(name(0, "json")))
    assert(rows(path) === latest)
  }

  test(
    "a writer feature this client does not know keeps every log file, and DRY RUN says so; " +
      "reading the log is not refused"
  ) {
    val golden = copyOfSharedTable("delta-golden", "collations-preview-table")
    assert(clean(golden, "RETAIN 0 HOURS DRY RUN").isEmpty) // one version: nothing expired

    val path = newTableDir("unknown-writer-feature")
    spark.sql(
      s"CREATE TABLE delta.`$path` (id BIGINT) USING delta TBLPROPERTIES " +
        "('delta.checkpointInterval' = '3')"
    )
    (1 to 7).foreach(i => spark.sql(s"INSERT INTO delta.`$path` VALUES ($i)"))
    // A later writer, which this client's delta-spark does not know, adds its writer feature.
    Files.write(
      new File(path, f"_delta_log/${8}%020d.json").toPath,
      ("""{"commitInfo":{"timestamp":1,"operation":"SET TBLPROPERTIES"}}""" + "\n" +
        """{"protocol":{"minReaderVersion":1,"minWriterVersion":7,""" +
        """"writerFeatures":["appendOnly","invariants","collations-preview"]}}""" + "\n")
        .getBytes(StandardCharsets.UTF_8)
    )
    age(path, through = 8, hours = 48)
    val before = logNames(path)
    val planned = clean(path, "RETAIN 24 HOURS DRY RUN")
    assert(planned.nonEmpty && planned.forall(_.getAs[String]("action") == "kept"))
    assert(planned.forall(_.getAs[String]("reason").contains("collations-preview")))
    assert(clean(path, "RETAIN 24 HOURS").forall(_.getAs[String]("action") == "kept"))
    assert(logNames(path) === before)
    val e = intercept[Exception](spark.sql(s"ALTER TABLE delta.`$path` COMPACT LOG").collect())
    assert(e.getMessage.contains("DELTA_LIFECYCLE_UNSUPPORTED_PROTOCOL"), e.getMessage)
    assert(spark.sql(s"DESCRIBE PROTOCOL HISTORY delta.`$path`").collect().length === 9)
  }
}
