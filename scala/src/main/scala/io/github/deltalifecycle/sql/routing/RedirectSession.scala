package io.github.deltalifecycle.sql.routing

import scala.util.control.NonFatal

import io.github.deltalifecycle.features.redirect.RoutingContext
import io.github.deltalifecycle.core.TableName
import io.github.deltalifecycle.sql.resolution.LifecycleTableRef
import io.github.deltalifecycle.sql.settings.AdministratorSettings
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.deltalifecycle.SparkInternals

/** The session settings redirection reads, and the routing context built from them. */
object RedirectSession {

  def context(spark: SparkSession): RoutingContext = RoutingContext(
    hadoopConf = SparkInternals.newHadoopConf(spark),
    appName = appName(spark),
    allowedPrefixes = allowedPrefixes(spark),
    allowedPrefixesSetting = AdministratorSettings.AllowedLocationPrefixes,
    catalogTableLocation = name => catalogLocation(spark, name),
    unityCatalog = UnityCatalogs.access(spark)
  )

  /**
   * The application name NoRedirectRules are matched against: the one the application was started
   * with, which a session cannot change (a rule exempts an application, not whoever claims its
   * name).
   */
  def appName(spark: SparkSession): String = spark.sparkContext.appName

  /** The administrator's allow-list (docs/settings.md): no session can widen it. */
  private def allowedPrefixes(spark: SparkSession): Seq[String] =
    AdministratorSettings.value(spark, AdministratorSettings.AllowedLocationPrefixes).toSeq
      .flatMap(_.split(",")).map(_.trim).filter(_.nonEmpty)

  /**
   * The location of the catalog table `name` (SQL text such as db.t or `` `my.db`.t ``), if it
   * exists and is a Delta table. Routing asks this of a redirect's destination; a name that does
   * not resolve leaves routing to the location the redirect recorded.
   */
  private def catalogLocation(spark: SparkSession, name: String): Option[Path] =
    try Some(LifecycleTableRef.resolve(spark, TableName.parts(name)).path)
    catch { case NonFatal(_) => None }
}
