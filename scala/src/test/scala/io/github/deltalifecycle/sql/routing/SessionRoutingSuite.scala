package io.github.deltalifecycle.sql.routing

import io.github.deltalifecycle.SparkLines

import io.github.deltalifecycle.LifecycleSparkSession
import io.github.deltalifecycle.core.DeltaLifecycleException
import io.github.deltalifecycle.features.redirect.{Access, RedirectLookup, Route}
import io.github.deltalifecycle.sql.routing.Router
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.{AnalysisException, Row}
import org.apache.spark.sql.catalyst.TableIdentifier
import org.apache.spark.sql.catalyst.catalog.CatalogDatabase
import org.apache.spark.sql.delta.DeltaLog
import org.scalatest.funsuite.AnyFunSuite

/**
 * Routing through the session: names whose quoted parts contain a dot, on either side of a
 * redirect, and the one error policy of [[Router]].
 */
class SessionRoutingSuite extends AnyFunSuite with LifecycleSparkSession {
  import spark.implicits._

  private def sql(text: String): Seq[Row] = spark.sql(text).collect().toSeq
  private def idsOf(table: String): Seq[Long] = {
    DeltaLog.clearCache()
    spark.sql(s"SELECT id FROM $table").collect().map(_.getLong(0)).toSeq.sorted
  }

  /**
   * Spark's CREATE DATABASE accepts only names of letters, digits and '_', but a metastore shared
   * with other engines may hold others; the database is made in the external catalog directly, as
   * such an engine would. Spark then creates and finds tables in it.
   */
  override protected def beforeAll(): Unit = {
    super.beforeAll()
    val location = scratch.resolve("warehouse").resolve("my.db.db").toUri
    spark.sharedState.externalCatalog.createDatabase(
      CatalogDatabase("my.db", "", location, Map.empty),
      ignoreIfExists = false
    )
  }

  test("a table of the database `my.db`, redirected TO TABLE in that database, by name") {
    sql("USE `my.db`")
    try {
      sql("CREATE TABLE dotted_source (id BIGINT) USING delta")
      sql("INSERT INTO dotted_source SELECT id FROM range(0, 3)")
      val r = sql("ALTER TABLE `my.db`.dotted_source SET REDIRECT TO TABLE dotted_target").head
      assert(r.getAs[String]("destination") === "`my.db`.dotted_target")

      sql("INSERT INTO `my.db`.dotted_source VALUES (3)")
      Seq(4L).toDF("id").write.format("delta").mode("append").saveAsTable("dotted_source")
      assert(idsOf("`my.db`.dotted_source") === (0L to 4L))
      assert(idsOf("dotted_source") === (0L to 4L))
      assert(idsOf("spark_catalog.`my.db`.dotted_target") === (0L to 4L))
      assert(sql("DESCRIBE REDIRECT dotted_source").head.getAs[String]("state") === "READY")

      sql("ALTER TABLE dotted_source UNSET REDIRECT")
      sql("INSERT INTO dotted_source VALUES (5)")
      assert(idsOf("`my.db`.dotted_source") === (0L to 5L))
    } finally sql("USE default")
  }

  test("a replacement by name of a redirected table replaces it at the destination") {
    sql("CREATE TABLE replaced (id BIGINT, part STRING) USING delta PARTITIONED BY (part)")
    sql("INSERT INTO replaced VALUES (1, 'x'), (2, 'y')")
    val entry = spark.sessionState.catalog.getTableMetadata(TableIdentifier("replaced"))
    val dest = scratch.resolve("replaced-moved").toString
    sql(s"ALTER TABLE replaced SET REDIRECT TO '$dest'")

    // delta-spark 3.3 cannot overwrite a table by name with a condition, redirected or not.
    if (!SparkLines.isSpark35) {
      Seq((20L, "y")).toDF("id", "part").write.format("delta").mode("overwrite")
        .option("replaceWhere", "part = 'y'").saveAsTable("replaced")
      assert(idsOf(s"delta.`$dest`") === Seq(1L, 20L))
    }
    sql("CREATE OR REPLACE TABLE replaced USING delta AS SELECT id * 10 AS id FROM range(3, 5)")
    assert(idsOf(s"delta.`$dest`") === Seq(30L, 40L))
    assert(idsOf("replaced") === Seq(30L, 40L))
    // The catalog entry, where the redirect is found, still names the source.
    val after = spark.sessionState.catalog.getTableMetadata(TableIdentifier("replaced"))
    assert(after.location === entry.location)
    assert(sql("DESCRIBE REDIRECT replaced").head.getAs[String]("state") === "READY")

    // The same replacement of a redirected table by its path.
    val source = new Path(entry.location).toString
    sql(s"CREATE OR REPLACE TABLE delta.`$source` USING delta AS SELECT id FROM range(7, 9)")
    assert(idsOf(s"delta.`$dest`") === Seq(7L, 8L))

    // A schema-only replacement by name replaces the destination's schema, as it would the
    // table's without a redirect (delta-spark refuses a new schema in CREATE OR REPLACE of a path).
    sql("CREATE OR REPLACE TABLE replaced (label STRING) USING delta")
    assert(spark.table(s"delta.`$dest`").columns.toSeq === Seq("label"))
    assert(spark.table(s"delta.`$dest`").count() === 0)
    assert(spark.table("replaced").columns.toSeq === Seq("label"))
    // By its path with the source as its location, it goes to the destination, where
    // delta-spark judges it as it judges the destination's own path.
    val e = intercept[Exception](
      sql(s"CREATE OR REPLACE TABLE delta.`$source` (n INT) USING delta LOCATION '$source'")
    )
    assert(e.getMessage.contains("DELTA_CREATE_TABLE_SCHEME_MISMATCH"), e)
    assert(e.getMessage.contains(new Path(dest).getName), e)
  }

  /**
   * `load(path)` of a redirected source reads the destination's `rows`, except where delta-spark
   * 3.3 opens a reader-writer redirected source itself and refuses it (docs/spark-lines.md).
   */
  private def assertPathLoad(path: String, readerRedirected: Boolean, rows: Long): Unit =
    if (SparkLines.isSpark35 && readerRedirected) {
      val e = intercept[Exception](spark.read.format("delta").load(path).count())
      assert(e.getMessage.contains("DELTA_UNSUPPORTED_FEATURES_FOR_READ"), e)
    } else assert(spark.read.format("delta").load(path).count() === rows)

  test("a redirect whose destination table lives in the database `my.db`") {
    sql("CREATE TABLE plain_source (id BIGINT) USING delta")
    sql("INSERT INTO plain_source SELECT id FROM range(0, 2)")
    val r = sql("ALTER TABLE plain_source SET REDIRECT TO TABLE `my.db`.moved").head
    assert(r.getAs[String]("type") === "Session Catalog")
    assert(r.getAs[String]("destination") === "`my.db`.moved")
    assert(spark.catalog.tableExists("`my.db`.moved"))

    sql("INSERT INTO plain_source VALUES (2)")
    Seq(3L).toDF("id").write.format("delta").mode("append").saveAsTable("plain_source")
    assert(idsOf("plain_source") === (0L to 3L))
    assert(idsOf("`my.db`.moved") === (0L to 3L))
    // The destination is found through the catalog, so a path-based read follows it as well;
    // delta-spark 3.3 refuses to open the reader-writer redirected source by path first.
    val sourcePath = spark.sessionState.catalog
      .getTableMetadata(org.apache.spark.sql.catalyst.TableIdentifier("plain_source")).location
    assertPathLoad(sourcePath.toString, readerRedirected = true, rows = 4)
    // Running the same statement again finds its own destination table, not a foreign one.
    val again = sql("ALTER TABLE plain_source SET REDIRECT TO TABLE `my.db`.moved").head
    assert(again.getAs[Seq[String]]("steps").head.contains("already READY"))
  }

  for (mode <- Seq("READER WRITER", "WRITER ONLY")) {
    test(s"a table delta-spark opens without a redirect is not looked up; $mode is followed") {
      val path = newTableDir(s"opened-${mode.replace(' ', '-')}")
      val source = new Path(path)
      val conf = spark.sessionState.newHadoopConf()
      sql(s"CREATE TABLE delta.`$path` (id BIGINT) USING delta")
      sql(s"INSERT INTO delta.`$path` VALUES (1)")
      assert(idsOf(s"delta.`$path`") === Seq(1L))
      // delta-spark's snapshot, loaded for each statement anyway, showed no redirect: the log core
      // never read this table (on S3 that saves the lookup's requests on every statement). On
      // Spark 3.5 routing runs on the parser's output, before delta-spark opens the table, so
      // there the lookup reads it.
      assert(RedirectLookup.remembers(conf, source) === SparkLines.isSpark35)

      val dest = newTableDir(s"opened-dest-${mode.replace(' ', '-')}")
      sql(s"ALTER TABLE delta.`$path` SET REDIRECT $mode TO '$dest'")
      sql(s"INSERT INTO delta.`$path` VALUES (2)")
      assert(idsOf(s"delta.`$path`") === Seq(1L, 2L))
      assert(idsOf(s"delta.`$dest`") === Seq(1L, 2L))
      assertPathLoad(path, readerRedirected = mode == "READER WRITER", rows = 2)
      // Once found redirected, the source goes to the lookup first; delta-spark does not open it.
      assert(RedirectLookup.rememberedRedirected(conf, source))

      sql(s"ALTER TABLE delta.`$path` UNSET REDIRECT")
      sql(s"INSERT INTO delta.`$path` VALUES (3)")
      assert(idsOf(s"delta.`$path`") === Seq(1L, 2L, 3L))
      assert(!RedirectLookup.rememberedRedirected(conf, source))
    }
  }

  test("an unreadable log is not routed; this project's typed errors propagate") {
    // No file system serves the scheme: the log cannot be read, so delta-spark judges the path.
    val unreadable = new Path("no-such-scheme:/tables/t")
    assert(Router.route(spark, unreadable, Access.Read, "t") === Route.Direct)

    val path = scratch.resolve("malformed-redirect").toString
    sql(s"CREATE TABLE delta.`$path` (id BIGINT) USING delta")
    val log = DeltaLog.forTable(spark, path)
    val txn = log.startTransaction(None)
    val broken = Map("delta.redirectWriterOnly" -> "{not json")
    txn.commit(
      Seq(txn.metadata.copy(configuration = txn.metadata.configuration ++ broken)),
      org.apache.spark.sql.delta.DeltaOperations.ManualUpdate
    )
    val e = intercept[DeltaLifecycleException] {
      Router.route(spark, new Path(path), Access.Read, path)
    }
    assert(e.getCondition === "DELTA_LIFECYCLE_INVALID_REDIRECT")
    val viaQuery = intercept[AnalysisException](sql(s"SELECT * FROM delta.`$path`"))
    assert(viaQuery.getCondition === "DELTA_LIFECYCLE_INVALID_REDIRECT")
  }
}
