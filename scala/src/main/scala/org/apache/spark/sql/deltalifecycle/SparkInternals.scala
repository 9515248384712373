package org.apache.spark.sql.deltalifecycle

import org.apache.hadoop.conf.Configuration
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.catalog.SessionCatalog
import org.apache.spark.sql.connector.catalog.CatalogPlugin

/**
 * The one place where delta-lifecycle reaches Spark members that are `private[sql]` (session state,
 * the catalog manager, the context's SparkConf). It lives in Spark's package for that reason only;
 * keep it small, and keep every such access here.
 */
object SparkInternals {
  private def classic(spark: SparkSession) =
    spark.asInstanceOf[org.apache.spark.sql.classic.SparkSession]

  def sessionCatalog(spark: SparkSession): SessionCatalog = classic(spark).sessionState.catalog

  def isCatalogRegistered(spark: SparkSession, name: String): Boolean =
    classic(spark).sessionState.catalogManager.isCatalogRegistered(name)

  def catalog(spark: SparkSession, name: String): CatalogPlugin =
    classic(spark).sessionState.catalogManager.catalog(name)

  def currentCatalogName(spark: SparkSession): String =
    classic(spark).sessionState.catalogManager.currentCatalog.name

  def currentNamespace(spark: SparkSession): Array[String] =
    classic(spark).sessionState.catalogManager.currentNamespace

  def sparkConf(spark: SparkSession, key: String): Option[String] =
    spark.sparkContext.conf.getOption(key)

  /**
   * Sets a static Spark configuration after the context started, if it is not set, and returns the
   * value in force. Only for settings that are read lazily, when first needed.
   */
  def setSparkConfIfMissing(spark: SparkSession, key: String, value: String): Option[String] = {
    val conf = spark.sparkContext.conf
    conf.setIfMissing(key, value)
    conf.getOption(key)
  }

  /** Hadoop configuration including the session's `spark.hadoop.*` and SQL-level overrides. */
  def newHadoopConf(spark: SparkSession): Configuration =
    classic(spark).sessionState.newHadoopConf()
}
