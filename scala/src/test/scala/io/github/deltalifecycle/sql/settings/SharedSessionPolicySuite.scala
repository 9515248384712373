package io.github.deltalifecycle.sql.settings

import java.nio.file.Files

import io.github.deltalifecycle.LifecycleSparkSession
import io.github.deltalifecycle.core.FaultInjection
import org.apache.commons.io.FileUtils
import org.apache.spark.sql.{AnalysisException, SparkSession}
import org.apache.spark.sql.delta.DeltaLog
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

/**
 * What a SQL user of a shared session can and cannot change (docs/settings.md): the redirect
 * allow-list the application was started with holds against SQL `SET`, `spark.conf.set` and new
 * sessions, at SET REDIRECT and at resolution; test switches do nothing in a JVM not started for
 * tests. Two applications in turn: one without an allow-list that redirects a table somewhere, then
 * one whose administrator allows only `allowed/`.
 */
class SharedSessionPolicySuite extends AnyFunSuite with BeforeAndAfterAll {
  private val scratch = Files.createTempDirectory("delta-lifecycle-policy")
  private def dir(name: String): String = scratch.resolve(name).toString
  private val allowed = dir("allowed")
  private val Key = AdministratorSettings.AllowedLocationPrefixes

  /** Redirected by an application without an allow-list, to a location outside `allowed`. */
  private val redirectedElsewhere = dir("redirected-elsewhere")

  private lazy val spark: SparkSession = {
    val before = LifecycleSparkSession.builder("policy-setup").getOrCreate()
    try {
      table(before, redirectedElsewhere, 3)
      before.sql(s"ALTER TABLE delta.`$redirectedElsewhere` SET REDIRECT TO '${dir("elsewhere")}'")
    } finally before.stop()
    DeltaLog.clearCache()
    LifecycleSparkSession.builder("policy").config(Key, allowed).getOrCreate()
  }

  private def table(session: SparkSession, path: String, rows: Int): Unit = {
    session.sql(s"CREATE TABLE delta.`$path` (id BIGINT) USING delta")
    session.sql(s"INSERT INTO delta.`$path` SELECT id FROM range(0, $rows)")
  }

  private def condition(statement: => Any): String = {
    val e = intercept[AnalysisException](statement)
    Option(e.getErrorClass).getOrElse(fail(s"no condition: $e", e))
  }

  // Spark refuses the change itself; Spark 4.0 names it CANNOT_MODIFY_CONFIG, the other lines
  // CANNOT_MODIFY_STATIC_CONFIG.
  private def refusedAsStatic(attempt: => Any): Unit = {
    val e = intercept[AnalysisException](attempt)
    assert(e.getMessage.contains(Key), e.getMessage)
    assert(Set("CANNOT_MODIFY_STATIC_CONFIG", "CANNOT_MODIFY_CONFIG").contains(e.getErrorClass), e)
  }

  private def refusedOutside(source: String): Unit =
    assert(condition(
      spark.sql(s"ALTER TABLE delta.`$source` SET REDIRECT TO '${dir("outside")}'")
    ) === "DELTA_LIFECYCLE_REDIRECT_LOCATION_NOT_ALLOWED")

  override protected def afterAll(): Unit =
    try spark.stop()
    finally {
      FileUtils.deleteQuietly(scratch.toFile)
      super.afterAll()
    }

  test("no session can widen the allow-list the application was started with") {
    val source = dir("source")
    table(spark, source, 2)
    refusedOutside(source)

    val set = intercept[AnalysisException](spark.sql(s"SET $Key=/"))
    assert(set.getErrorClass === "DELTA_LIFECYCLE_ADMINISTRATOR_SETTING")
    assert(set.getMessage.contains(Key) && set.getMessage.contains("administrator"))
    assert(set.getMessage.contains("started with"))
    // The API path and a new session are refused by Spark itself: the key is a static setting
    // (CANNOT_MODIFY_STATIC_CONFIG on Spark 4, _LEGACY_ERROR_TEMP_1325 on 3.5).
    refusedAsStatic(spark.conf.set(Key, "/"))
    refusedAsStatic(spark.newSession().conf.set(Key, "/"))
    refusedAsStatic(spark.sql(s"RESET $Key"))
    assert(spark.conf.get(Key) === allowed)
    refusedOutside(source)

    // Inside the allow-list nothing is in the way.
    spark.sql(s"ALTER TABLE delta.`$source` SET REDIRECT TO '$allowed/moved'")
    assert(spark.sql(s"SELECT id FROM delta.`$source`").count() === 2)
  }

  test("a redirect outside the allow-list, set by another application, is refused at reads") {
    assert(condition(spark.sql(s"SELECT * FROM delta.`$redirectedElsewhere`").collect()) ===
      "DELTA_LIFECYCLE_REDIRECT_LOCATION_NOT_ALLOWED")
  }

  test("NoRedirectRules match the name the application was started with, not a SET one") {
    val source = dir("rules-source")
    val dest = s"$allowed/rules"
    table(spark, source, 2)
    spark.sql(
      s"ALTER TABLE delta.`$source` SET REDIRECT WRITER ONLY TO '$dest' " +
        "NO REDIRECT RULES ('maintenance' ALLOW ())"
    )
    spark.sql(s"INSERT INTO delta.`$dest` VALUES (7)")
    // Spark lets a session SET the name (it is no registered setting); the rule must not follow.
    spark.sql("SET spark.app.name=maintenance")
    assert(spark.conf.get("spark.app.name") === "maintenance")
    DeltaLog.clearCache()
    assert(spark.sql(s"SELECT id FROM delta.`$source`").collect().map(_.getLong(0)).sorted ===
      Array(0L, 1L, 7L))
  }

  test("test switches work only in a JVM started for tests") {
    assert(FaultInjection.inTestJvm, "build.sbt starts the test JVM with the property")
    val table = dir("switches")
    spark.sql(s"CREATE TABLE delta.`$table` (id BIGINT) USING delta")
    (1 to 3).foreach(i => spark.sql(s"INSERT INTO delta.`$table` VALUES ($i)"))
    spark.sql(s"SET ${FaultInjection.CopyDelayKey}=5")
    assert(FaultInjection.copyDelayMillis(Some(spark)) === 5L)
    spark.conf.unset(FaultInjection.CopyDelayKey)

    val property = System.getProperty(FaultInjection.TestingProperty)
    System.clearProperty(FaultInjection.TestingProperty)
    try {
      FaultInjection.Keys.foreach { key =>
        val e = intercept[AnalysisException](spark.sql(s"SET $key=compactLog.beforeWrite"))
        assert(e.getErrorClass === "DELTA_LIFECYCLE_TEST_SWITCH_UNAVAILABLE")
        assert(e.getMessage.contains(key) && e.getMessage.contains(FaultInjection.TestingProperty))
      }
      // Set through the API (which no guard sees), the switches still do nothing: a halt here
      // would end this JVM and fail the run.
      spark.conf.set(FaultInjection.HaltAtStepKey, "compactLog.beforeWrite")
      spark.conf.set(FaultInjection.CopyDelayKey, "60000")
      assert(!FaultInjection.armed("compactLog.beforeWrite", Some(spark)))
      assert(FaultInjection.copyDelayMillis(Some(spark)) === 0L)
      val compacted = spark.sql(s"ALTER TABLE delta.`$table` COMPACT LOG").collect()
      assert(compacted.nonEmpty)
      FaultInjection.halt("compactLog.beforeWrite")
    } finally {
      System.setProperty(FaultInjection.TestingProperty, property)
      FaultInjection.Keys.foreach(spark.conf.unset)
    }
  }
}
