package io.github.deltalifecycle.shims

import org.apache.hadoop.fs.Path
import org.apache.spark.sql.{SparkSession, SparkSessionExtensions}
import org.apache.spark.sql.catalyst.plans.logical.{LogicalPlan, UnresolvedDataSource}
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.delta.sources.{DeltaDataSource, DeltaSourceUtils}

/**
 * Where the analyzer lets this project see a plan before delta-spark resolves its tables (Spark 4:
 * the hint batch, and the DataFrame reader's `UnresolvedDataSource`).
 */
object AnalyzerShim {

  /** Injects `rule` where it runs before tables are resolved: the analyzer's hint batch. */
  def injectBeforeTableResolution(
      extensions: SparkSessionExtensions,
      rule: SparkSession => Rule[LogicalPlan]
  ): Unit = extensions.injectHintResolutionRule(rule)

  /**
   * Injects the routing of path-based DataFrame access: the hint batch, as for the other early
   * rules.
   */
  def injectPathRouting(
      extensions: SparkSessionExtensions,
      rule: SparkSession => Rule[LogicalPlan]
  ): Unit = extensions.injectHintResolutionRule(rule)

  /**
   * Path-based batch reads of the DataFrame API (`spark.read.format("delta").load(path)`): Spark 4
   * leaves them unresolved for the analyzer, so the path is rewritten before delta-spark opens it.
   * `route` gives the destination of a path that is read, if it is redirected.
   */
  def routePathReads(route: String => Option[Path]): PartialFunction[LogicalPlan, LogicalPlan] = {
    case u: UnresolvedDataSource if isDelta(u.format) && !u.isStreaming =>
      pathOf(u.paths, u.options.get("path")).flatMap(route).map { dest =>
        if (u.paths.nonEmpty) u.copy(paths = Seq(dest.toString))
        else u.copy(options = u.options + ("path" -> dest.toString))
      }.getOrElse(u)
  }

  /** Spark 4's path-based writes are `SaveIntoDataSourceCommand`s, routed in common code. */
  def routePathWrites(route: String => Option[Path]): PartialFunction[LogicalPlan, LogicalPlan] =
    PartialFunction.empty

  private def isDelta(source: String): Boolean =
    source.equalsIgnoreCase(DeltaSourceUtils.ALT_NAME) || source == classOf[DeltaDataSource].getName

  private def pathOf(paths: Seq[String], option: Option[String]): Option[String] =
    (paths, option) match {
      case (Seq(p), _) => Some(p)
      case (Seq(), Some(p)) => Some(p)
      case _ => None
    }
}
