package io.github.deltalifecycle.sql.routing

import scala.util.control.NonFatal

import io.github.deltalifecycle.features.redirect.RoutingContext
import io.github.deltalifecycle.core.TableName
import io.github.deltalifecycle.sql.resolution.LifecycleTableRef
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.deltalifecycle.SparkInternals

/** The session settings redirection reads, and the routing context built from them. */
object RedirectSession {

  /** Comma-separated location prefixes a redirect may point to; empty (the default) allows any. */
  val AllowedPrefixesKey = "spark.deltaLifecycle.redirect.allowedLocationPrefixes"

  def context(spark: SparkSession): RoutingContext = RoutingContext(
    hadoopConf = SparkInternals.newHadoopConf(spark),
    appName = appName(spark),
    allowedPrefixes = allowedPrefixes(spark),
    catalogTableLocation = name => catalogLocation(spark, name)
  )

  /** The application name NoRedirectRules are matched against. */
  def appName(spark: SparkSession): String = spark.conf.getOption("spark.app.name").getOrElse("")

  private def allowedPrefixes(spark: SparkSession): Seq[String] =
    spark.conf.getOption(AllowedPrefixesKey).toSeq.flatMap(_.split(",")).map(_.trim)
      .filter(_.nonEmpty)

  /**
   * The location of the catalog table `name` (SQL text such as db.t or `` `my.db`.t ``), if it
   * exists and is a Delta table. Routing asks this of a redirect's destination; a name that does
   * not resolve leaves routing to the location the redirect recorded.
   */
  private def catalogLocation(spark: SparkSession, name: String): Option[Path] =
    try Some(LifecycleTableRef.resolve(spark, TableName.parts(name)).path)
    catch { case NonFatal(_) => None }
}
