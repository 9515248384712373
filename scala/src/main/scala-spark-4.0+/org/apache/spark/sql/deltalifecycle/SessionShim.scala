package org.apache.spark.sql.deltalifecycle

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.internal.SessionState

/**
 * The session state behind a SparkSession, for [[SparkInternals]] (Spark 4: only the classic
 * session has one).
 */
private[deltalifecycle] object SessionShim {
  def sessionState(spark: SparkSession): SessionState =
    spark.asInstanceOf[org.apache.spark.sql.classic.SparkSession].sessionState

  def cloneSession(spark: SparkSession): SparkSession =
    spark.asInstanceOf[org.apache.spark.sql.classic.SparkSession].cloneSession()
}
