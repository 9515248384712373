package io.github.deltalifecycle.sql

import io.github.deltalifecycle.LifecycleSparkSession
import io.github.deltalifecycle.core.{DeltaLifecycleException, TableLog}
import io.github.deltalifecycle.features.compatibility.ClientCapabilities
import org.apache.spark.sql.Row
import org.scalatest.funsuite.AnyFunSuite

/** DESCRIBE COMPATIBILITY and DROP FEATURES FOR CLIENT on real delta-spark tables. */
class CompatibilityStatementsSuite extends AnyFunSuite with LifecycleSparkSession {

  private def strings(row: Row, field: String): Seq[String] =
    row.getSeq[String](row.fieldIndex(field))

  private def describe(table: String, rest: String = ""): Seq[Row] =
    spark.sql(s"DESCRIBE COMPATIBILITY $table $rest").collect().toSeq

  private def latestVersion(path: String): Long =
    TableLog.forPath(spark.sessionState.newHadoopConf(), path).latestHead().version

  /** Version 0 plain, version 1 enables deletion vectors, version 2 deletes with one. */
  private def deletionVectorTable(name: String): String = {
    val path = newTableDir(name)
    spark.range(0, 10, 1, 1).write.format("delta").save(path)
    spark.sql(
      s"ALTER TABLE delta.`$path` SET TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')"
    )
    spark.sql(s"DELETE FROM delta.`$path` WHERE id = 3")
    path
  }

  test("DESCRIBE COMPATIBILITY: one row per known client, or the named client's rows") {
    val path = deletionVectorTable("describe")
    val all = describe(s"delta.`$path`")
    assert(all.map(_.getAs[String]("client")) === ClientCapabilities.all.map(_.id))
    val Seq(rs) = describe(s"delta.`$path`", "FOR 'deltalake-0.25'")
    assert(rs.getAs[String]("canRead") === "no")
    assert(strings(rs, "readBlockers") === Seq("deletionVectors"))
    assert(strings(rs, "dropForRead") === Seq("deletionVectors"))
    assert(strings(rs, "notDroppable").isEmpty)
    assert(strings(rs, "sources").nonEmpty)
    // Before deletion vectors were enabled, the same client reads the table.
    val Seq(before) = describe(s"delta.`$path`", "VERSION AS OF 0 FOR 'deltalake-0.25'")
    assert(before.getAs[String]("canRead") === "yes")
    assert(describe(s"delta.`$path`", "FOR 'delta-spark'").size === 7)
  }

  test("DESCRIBE COMPATIBILITY: an unknown client or version is a typed error") {
    val path = deletionVectorTable("describe-errors")
    val e = intercept[DeltaLifecycleException](describe(s"delta.`$path`", "FOR 'nope'"))
    assert(e.condition === "DELTA_LIFECYCLE_UNKNOWN_CLIENT")
    val v = intercept[DeltaLifecycleException](describe(s"delta.`$path`", "VERSION AS OF 99"))
    assert(v.condition === "DELTA_LIFECYCLE_VERSION_NOT_FOUND")
  }

  test(
    "DROP FEATURES FOR CLIENT: plans, drops, leaves the table readable, and re-runs as a no-op"
  ) {
    val path = deletionVectorTable("for-client")
    val table = s"delta.`$path`"
    val before = latestVersion(path)
    val plan = spark.sql(s"ALTER TABLE $table DROP FEATURES FOR CLIENT 'deltalake-0.25' DRY RUN")
      .collect()
    assert(plan.map(r => (r.getAs[String]("feature"), r.getAs[String]("status"))).toSeq === Seq(
      "deletionVectors" -> "planned"
    ))
    assert(latestVersion(path) === before, "DRY RUN writes nothing")
    val done = spark.sql(s"ALTER TABLE $table DROP FEATURES FOR CLIENT 'deltalake-0.25'")
      .collect()
    assert(done.map(_.getAs[String]("status")).toSeq === Seq("dropped"))
    val Seq(after) = describe(table, "FOR 'deltalake-0.25'")
    assert(after.getAs[String]("canRead") === "yes")
    assert(spark.read.format("delta").load(path).count() === 9L)
    // A re-run (as after a crash once the drop committed) finds nothing left to drop.
    assert(spark.sql(s"ALTER TABLE $table DROP FEATURES FOR CLIENT 'deltalake-0.25'").isEmpty)
  }

  test("DROP FEATURE DRY RUN names the clients each way of dropping lets in") {
    val path = deletionVectorTable("drop-impact")
    val Seq(plan) =
      spark.sql(s"ALTER TABLE delta.`$path` DROP FEATURE deletionVectors DRY RUN").collect().toSeq
    assert(strings(plan, "clientsGainingAccess").contains(
      "deltalake-1.x: read (fast), read+write (truncate-history)"
    ))
    assert(strings(plan, "clientsBlockedByProtection").contains("deltalake-1.x"))
  }

  test("FOR WRITES: a client without checkpointProtection needs TRUNCATE HISTORY, checked first") {
    val path = deletionVectorTable("for-writes")
    val table = s"delta.`$path`"
    val before = latestVersion(path)
    val e = intercept[DeltaLifecycleException](
      spark.sql(s"ALTER TABLE $table DROP FEATURES FOR CLIENT 'deltalake-1.x' FOR WRITES")
    )
    assert(e.condition === "DELTA_LIFECYCLE_INVALID_ARGUMENT")
    assert(e.getMessage.contains("TRUNCATE HISTORY"))
    assert(latestVersion(path) === before)
  }

  test("a blocker DROP FEATURE cannot remove: refused before anything is written") {
    // delta-spark 2.4 cannot write identity columns, and delta-spark removes no such feature.
    val path = newTableDir("identity")
    // The feature by property: Spark 3.5 does not parse GENERATED ALWAYS AS IDENTITY.
    spark.sql(s"CREATE TABLE delta.`$path` (id BIGINT, v BIGINT) USING delta " +
      "TBLPROPERTIES ('delta.feature.identityColumns' = 'supported')")
    val before = latestVersion(path)
    val e = intercept[DeltaLifecycleException](spark.sql(
      s"ALTER TABLE delta.`$path` DROP FEATURES FOR CLIENT 'delta-spark-2.4' FOR WRITES"
    ))
    assert(e.condition === "DELTA_LIFECYCLE_CLIENT_NEEDS_UNDROPPABLE")
    assert(e.getMessage.contains("identityColumns"))
    assert(latestVersion(path) === before)
    val f = intercept[DeltaLifecycleException](
      spark.sql(s"ALTER TABLE delta.`$path` DROP FEATURES FOR CLIENT 'delta-spark'")
    )
    assert(f.condition === "DELTA_LIFECYCLE_INVALID_ARGUMENT", "a family names several ranges")
  }

  test("a read-only client: DESCRIBE says it cannot write, FOR WRITES is refused, reads work") {
    val path = deletionVectorTable("read-only-client")
    val athena = describe(s"delta.`$path`", "FOR 'athena'").head
    assert(athena.getAs[String]("canRead") === "yes")
    assert(athena.getAs[String]("canWrite") === "no")
    assert(strings(athena, "dropForWrite").isEmpty)
    val before = latestVersion(path)
    val e = intercept[DeltaLifecycleException](spark.sql(
      s"ALTER TABLE delta.`$path` DROP FEATURES FOR CLIENT 'athena' FOR WRITES"
    ))
    assert(e.condition === "DELTA_LIFECYCLE_INVALID_ARGUMENT")
    assert(e.getMessage.contains("writes none"))
    // Nothing blocks its reads, so the read drop has nothing to do.
    assert(spark.sql(s"ALTER TABLE delta.`$path` DROP FEATURES FOR CLIENT 'athena'").isEmpty)
    assert(latestVersion(path) === before)
  }
}
