package io.github.deltalifecycle.sql

import scala.util.control.NonFatal

import io.github.deltalifecycle.core.DeltaLifecycleException
import io.github.deltalifecycle.features.redirect.RoutingContext
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.deltalifecycle.SparkInternals

/** The session settings redirection reads, and the routing context built from them. */
object RedirectSession {

  /** Comma-separated location prefixes a redirect may point to; empty (the default) allows any. */
  val AllowedPrefixesKey = "spark.deltaLifecycle.redirect.allowedLocationPrefixes"

  /** Threads that copy files for SET and UNSET REDIRECT. */
  val CopyThreadsKey = "spark.deltaLifecycle.redirect.copyThreads"
  val DefaultCopyThreads = 8

  def context(spark: SparkSession): RoutingContext = RoutingContext(
    hadoopConf = SparkInternals.newHadoopConf(spark),
    appName = spark.conf.getOption("spark.app.name").getOrElse(""),
    allowedPrefixes = spark.conf.getOption(
      AllowedPrefixesKey
    ).toSeq.flatMap(_.split(",")).map(_.trim).filter(_.nonEmpty),
    catalogTableLocation = name => catalogLocation(spark, name)
  )

  def copyThreads(spark: SparkSession): Int =
    spark.conf.getOption(
      CopyThreadsKey
    ).flatMap(_.toIntOption).filter(_ > 0).getOrElse(DefaultCopyThreads)

  /**
   * The location of a catalog table named `name` (db.t or t), if it exists and is a Delta table.
   */
  def catalogLocation(spark: SparkSession, name: String): Option[Path] =
    try Some(LifecycleTableRef.resolve(spark, name.split('.').toSeq).path)
    catch { case _: DeltaLifecycleException => None; case NonFatal(_) => None }
}
