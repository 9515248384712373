package io.github.deltalifecycle

/**
 * The Spark line the tests run on, for assertions of a line's own behaviour where lines differ
 * (docs/spark-lines.md, "Known differences between lines").
 */
object SparkLines {

  /** Spark 3.5, whose delta-spark is 3.3. */
  val isSpark35: Boolean = org.apache.spark.SPARK_VERSION.startsWith("3.5.")
}
