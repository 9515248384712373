package org.apache.spark.sql.deltalifecycle

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.internal.SessionState

/**
 * The session state behind a SparkSession, for [[SparkInternals]] (Spark 3.5: every session is the
 * classic one).
 */
private[deltalifecycle] object SessionShim {
  def sessionState(spark: SparkSession): SessionState = spark.sessionState

  def cloneSession(spark: SparkSession): SparkSession = spark.cloneSession()
}
