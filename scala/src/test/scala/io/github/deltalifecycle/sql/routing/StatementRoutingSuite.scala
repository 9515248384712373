package io.github.deltalifecycle.sql.routing

import io.github.deltalifecycle.LifecycleSparkSession
import org.apache.spark.sql.{AnalysisException, Row}
import org.scalatest.funsuite.AnyFunSuite

/**
 * This project's statements follow a table's redirect as every query does (the Table Redirection
 * RFC routes all queries on a READY source), and say in their `table` column which table they acted
 * on; the redirect's own statements, and a drop of the redirect feature, act on the table named.
 */
class StatementRoutingSuite extends AnyFunSuite with LifecycleSparkSession {

  private def sql(text: String): Seq[Row] = spark.sql(text).collect().toSeq

  private def failure(statement: => Any): String = {
    val e = intercept[Exception](statement)
    Iterator.iterate[Throwable](e)(_.getCause).takeWhile(_ != null).collectFirst {
      case a: AnalysisException
          if Option(a.getErrorClass).exists(_.startsWith("DELTA_LIFECYCLE_")) => a.getErrorClass
    }.getOrElse(fail(s"expected a delta-lifecycle error, got $e", e))
  }

  /** A table with deletion vectors enabled, registered as `catalogName` too, then redirected. */
  private def redirected(name: String, catalogName: Option[String] = None): (String, String) = {
    val src = newTableDir(s"$name-src")
    val dest = newTableDir(s"$name-dest")
    sql(
      s"CREATE TABLE delta.`$src` (id BIGINT) USING delta " +
        "TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')"
    )
    for (i <- 0 until 3) sql(s"INSERT INTO delta.`$src` VALUES ($i)")
    catalogName.foreach(n => sql(s"CREATE TABLE $n USING delta LOCATION '$src'"))
    sql(s"ALTER TABLE delta.`$src` SET REDIRECT TO '$dest'")
    (src, dest)
  }

  test("by path, every statement of this project acts on the destination and names it") {
    val (src, dest) = redirected("statements")
    sql(s"INSERT INTO delta.`$src` VALUES (3)") // at the destination
    val actedOn = Set(s"delta.`file:$dest`", s"delta.`$dest`")
    def tables(rows: Seq[Row]): Set[String] = rows.map(_.getAs[String]("table")).toSet
    val history = sql(s"DESCRIBE PROTOCOL HISTORY delta.`$src`")
    assert(tables(history).subsetOf(actedOn) && tables(history).nonEmpty, tables(history))
    // The destination's history: the source's own versions, then its write, no redirect commits.
    assert(history.map(_.getAs[String]("operation")).last === "WRITE")
    assert(tables(sql(s"DESCRIBE COMPATIBILITY delta.`$src`")).subsetOf(actedOn))
    val compaction = sql(s"ALTER TABLE delta.`$src` COMPACT LOG").head
    assert(actedOn(compaction.getAs[String]("table")))
    assert(compaction.getAs[String]("file").contains("-dest/_delta_log/"))
    assert(tables(sql(s"ALTER TABLE delta.`$src` CLEAN LOG RETAIN 0 HOURS DRY RUN")).subsetOf(
      actedOn
    ))
    val drop = sql(s"ALTER TABLE delta.`$src` DROP FEATURE deletionVectors DRY RUN").head
    assert(actedOn(drop.getAs[String]("table")) && drop.getAs[String]("status") === "planned")
    // The redirect is the source's: dropping its feature is refused and points to UNSET REDIRECT.
    assert(failure(sql(s"ALTER TABLE delta.`$src` DROP FEATURE redirectReaderWriter")) ===
      "DELTA_LIFECYCLE_REDIRECT_STATE")
    assert(sql(s"DESCRIBE REDIRECT delta.`$src`").head.getAs[String]("state") === "READY")
  }

  test("by name, DROP FEATURE drops the feature at the destination, which the name then reads") {
    val (_, dest) = redirected("by-name", Some("routed_events"))
    val drop = sql("ALTER TABLE routed_events DROP FEATURE deletionVectors").head
    assert(drop.getAs[String]("status") === "dropped")
    assert(drop.getAs[String]("table").contains(dest.split('/').last))
    val detail = sql(s"DESCRIBE DETAIL delta.`$dest`").head
    val features = detail.getSeq[String](detail.fieldIndex("tableFeatures"))
    assert(!features.contains("deletionVectors"))
    assert(sql("SELECT count(*) FROM routed_events").head.getLong(0) === 3)
  }

  test("while a redirect is IN-PROGRESS, a statement that writes is refused, typed") {
    val src = newTableDir("enabling-src")
    sql(s"CREATE TABLE delta.`$src` (id BIGINT) USING delta")
    sql(s"INSERT INTO delta.`$src` VALUES (1), (2)")
    sql(
      s"ALTER TABLE delta.`$src` SET TBLPROPERTIES ('delta.redirectReaderWriter' = " +
        s"""'{"Type":"Object Store","State":"ENABLE-REDIRECT-IN-PROGRESS",""" +
        s""""Spec":{"Location":"${newTableDir("enabling-dest")}"}}')"""
    )
    assert(failure(sql(s"ALTER TABLE delta.`$src` COMPACT LOG")) ===
      "DELTA_LIFECYCLE_REDIRECT_WRITE_REFUSED")
    // Reads stay on the source while it is being enabled.
    assert(sql(s"DESCRIBE PROTOCOL HISTORY delta.`$src`").head.getAs[String]("table") ===
      s"delta.`$src`")
  }
}
