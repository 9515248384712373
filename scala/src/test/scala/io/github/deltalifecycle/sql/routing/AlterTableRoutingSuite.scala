package io.github.deltalifecycle.sql.routing

import io.github.deltalifecycle.LifecycleSparkSession
import io.github.deltalifecycle.features.redirect.CountingLocalFileSystem
import org.apache.spark.sql.SparkSession
import org.scalatest.funsuite.AnyFunSuite

/**
 * What routing adds to an `ALTER TABLE`, counted in listings of the table's log (one listing is an
 * S3 LIST request per 1,000 log files with delta-spark's default S3 LogStore). The whole session
 * reads through [[CountingLocalFileSystem]].
 */
class AlterTableRoutingSuite extends AnyFunSuite with LifecycleSparkSession {

  override protected lazy val spark: SparkSession =
    LifecycleSparkSession.builder(getClass.getSimpleName)
      .config("spark.sql.warehouse.dir", scratch.resolve("warehouse").toString)
      .config("spark.hadoop.fs.file.impl", classOf[CountingLocalFileSystem].getName)
      .config("spark.hadoop.fs.file.impl.disable.cache", "true")
      .getOrCreate()

  private def logListings(path: String)(body: => Unit): Int = {
    CountingLocalFileSystem.reset()
    body
    CountingLocalFileSystem.snapshot(CountingLocalFileSystem.listings)
      .collect { case (p, n) if p.endsWith(s"$path/_delta_log") => n }.sum
  }

  test("SET TBLPROPERTIES routes the table once per step, not on every load of it") {
    val path = newTableDir("alter")
    spark.sql(s"CREATE TABLE delta.`$path` (id BIGINT) USING delta")
    spark.sql(s"INSERT INTO delta.`$path` VALUES (1)")
    val listings = logListings(path) {
      spark.sql(s"ALTER TABLE delta.`$path` SET TBLPROPERTIES ('delta.appendOnly' = 'false')")
    }
    // Stock delta-spark lists the log twice: resolving the table, then its transaction.
    // delta-spark's alterTable loads the table twice more (before the change and after it, to
    // return it); routing the first of these loads one more snapshot, the second reuses its
    // route. Routing each load would make it 4.
    assert(listings >= 2, "no listing counted: the counting file system is not in use")
    assert(listings <= 3, s"$listings listings of the log")
    val properties = spark.sql(s"SHOW TBLPROPERTIES delta.`$path`").collect()
      .map(r => r.getString(0) -> r.getString(1)).toMap
    assert(properties.get("delta.appendOnly").contains("false"))
  }
}
