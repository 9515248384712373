package io.github.deltalifecycle.shims

import org.apache.hadoop.fs.Path
import org.apache.spark.sql.{SparkSession, SparkSessionExtensions}
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.catalyst.rules.Rule

/**
 * Where Spark 3.5 lets this project route the DataFrame API's path access. It has no analyzer batch
 * before table resolution to inject into, and its `DataFrameReader.load(path)` and
 * `DataStreamReader.load(path)` resolve the path themselves, so routing sees the relations
 * delta-spark built (docs/spark-lines.md).
 */
object AnalyzerShim {

  /** Injects path routing: a resolution rule, since the access it routes arrives resolved. */
  def injectPathRouting(
      extensions: SparkSessionExtensions,
      rule: SparkSession => Rule[LogicalPlan]
  ): Unit = extensions.injectResolutionRule(rule)

  /** Spark 3.5's analyzer has no hint batch for an extension's rules: nothing to restore. */
  def restoreHintRouting(spark: SparkSession, rule: Rule[LogicalPlan]): Unit = ()

  /** Spark 3.5 builds no unresolved plan for a DataFrame path access: nothing to route early. */
  def routeUnresolved(
      routeRead: String => Option[Path],
      streamProvider: String
  ): PartialFunction[LogicalPlan, LogicalPlan] = PartialFunction.empty
}
