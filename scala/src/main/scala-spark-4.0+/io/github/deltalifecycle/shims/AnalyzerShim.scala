package io.github.deltalifecycle.shims

import org.apache.hadoop.fs.Path
import org.apache.spark.sql.{SparkSession, SparkSessionExtensions}
import org.apache.spark.sql.catalyst.plans.logical.{LogicalPlan, UnresolvedDataSource}
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.delta.sources.{DeltaDataSource, DeltaSourceUtils}

/**
 * Where the analyzer lets this project route the DataFrame API's path access (Spark 4: the reader's
 * `UnresolvedDataSource`, which the analyzer resolves).
 */
object AnalyzerShim {

  /**
   * Injects path routing twice: in the hint batch, which runs before delta-spark opens a path (and
   * would refuse a reader-writer redirected source), and in the resolution batch, where it routes
   * the relations delta-spark built. Spark's Hive session (`enableHiveSupport()`) drops the rules
   * extensions inject into the hint batch (SPARK-59081), so there only the second runs.
   */
  def injectPathRouting(
      extensions: SparkSessionExtensions,
      rule: SparkSession => Rule[LogicalPlan]
  ): Unit = {
    extensions.injectHintResolutionRule(rule)
    extensions.injectResolutionRule(rule)
  }

  /**
   * The DataFrame API's path reads before delta-spark opens them: a batch read
   * (`spark.read.format("delta").load(path)`) goes to the destination `routeRead` gives, a
   * streaming read (`spark.readStream.format("delta").load(path)`) gets `streamProvider`, which
   * routes it when the query starts and follows the redirect while it runs.
   */
  def routeUnresolved(
      routeRead: String => Option[Path],
      streamProvider: String
  ): PartialFunction[LogicalPlan, LogicalPlan] = {
    case u: UnresolvedDataSource if isDelta(u.format) && u.isStreaming =>
      u.copy(format = streamProvider)
    case u: UnresolvedDataSource if isDelta(u.format) =>
      pathOf(u.paths, u.options.get("path")).flatMap(routeRead).map { dest =>
        if (u.paths.nonEmpty) u.copy(paths = Seq(dest.toString))
        else u.copy(options = u.options + ("path" -> dest.toString))
      }.getOrElse(u)
  }

  private def isDelta(source: String): Boolean =
    source.equalsIgnoreCase(DeltaSourceUtils.ALT_NAME) || source == classOf[DeltaDataSource].getName

  private def pathOf(paths: Seq[String], option: Option[String]): Option[String] =
    (paths, option) match {
      case (Seq(p), _) => Some(p)
      case (Seq(), Some(p)) => Some(p)
      case _ => None
    }
}
