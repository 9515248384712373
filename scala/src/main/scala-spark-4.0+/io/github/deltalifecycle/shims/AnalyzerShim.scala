package io.github.deltalifecycle.shims

import scala.util.control.NonFatal

import org.apache.hadoop.fs.Path
import org.apache.spark.internal.Logging
import org.apache.spark.sql.{SparkSession, SparkSessionExtensions}
import org.apache.spark.sql.catalyst.analysis.{Analyzer, UnresolvedTableValuedFunction}
import org.apache.spark.sql.catalyst.expressions.Literal
import org.apache.spark.sql.catalyst.plans.logical.{LogicalPlan, UnresolvedDataSource}
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.delta.DeltaTableValueFunctions
import org.apache.spark.sql.delta.sources.{DeltaDataSource, DeltaSourceUtils}
import org.apache.spark.sql.deltalifecycle.SparkInternals
import org.apache.spark.sql.types.StringType

/**
 * Where the analyzer lets this project route the DataFrame API's path access (Spark 4: the reader's
 * `UnresolvedDataSource`, which the analyzer resolves).
 */
object AnalyzerShim extends Logging {

  /**
   * Injects path routing twice: in the hint batch, which runs before delta-spark opens a path (and
   * would refuse a reader-writer redirected source), and in the resolution batch, where it routes
   * the relations delta-spark built. Spark's Hive session (`enableHiveSupport()`) up to Spark 4.2.0
   * drops the rules extensions inject into the hint batch (SPARK-59081): there the second puts the
   * first back ([[restoreHintRouting]]).
   */
  def injectPathRouting(
      extensions: SparkSessionExtensions,
      rule: SparkSession => Rule[LogicalPlan]
  ): Unit = {
    extensions.injectHintResolutionRule(rule)
    extensions.injectResolutionRule(rule)
  }

  /**
   * Spark's Hive session up to Spark 4.2.0 builds an analyzer whose hint batch runs no rule of an
   * extension (SPARK-59081, fixed in Spark 4.2.1), so there the path routing above runs only in the
   * resolution batch, after delta-spark has opened the path. The first time `rule` runs in such an
   * analyzer (the resolution-batch copy), it puts itself into the analyzer's hint batch as well,
   * where Spark 4.2.1 puts it: from the session's next query on, a DataFrame path read is routed
   * before delta-spark opens it. The query being analyzed then already had its hint batch.
   *
   * Only this rule is added, not other extensions' hint rules that the session drops: those stay as
   * stock Spark 4.2.0 runs them. An analyzer that has the rule (any other session, Spark 4.2.1 and
   * later) is left alone.
   */
  def restoreHintRouting(spark: SparkSession, rule: Rule[LogicalPlan]): Unit =
    try {
      val analyzer = SparkInternals.analyzer(spark)
      if (!analyzer.hintResolutionRules.exists(_.getClass == rule.getClass)) {
        val field = classOf[Analyzer].getDeclaredField("hintResolutionRules")
        field.setAccessible(true)
        field.set(analyzer, analyzer.hintResolutionRules :+ rule)
      }
    } catch {
      // A Spark whose analyzer keeps its hint rules elsewhere: path reads stay routed on the
      // relations delta-spark builds, as on Spark 3.5.
      case NonFatal(e) => logWarning(s"Path routing stays in the resolution batch: $e")
    }

  /**
   * The path reads Spark's analyzer resolves itself, before delta-spark opens them: a DataFrame
   * batch read (`spark.read.format("delta").load(path)`) and delta-spark's
   * `table_changes_by_path('<path>', ...)` go to the destination `routeRead` gives; a streaming
   * read (`spark.readStream.format("delta").load(path)`) gets `streamProvider`, which routes it
   * when the query starts and follows the redirect while it runs.
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
    case f: UnresolvedTableValuedFunction if isChangesByPath(f.name) =>
      f.functionArgs match {
        case (path: Literal) +: rest
            if path.dataType.isInstanceOf[StringType] && path.value != null =>
          routeRead(path.value.toString)
            .map(dest => f.copy(functionArgs = Literal(dest.toString) +: rest))
            .getOrElse(f)
        case _ => f
      }
  }

  private def isChangesByPath(name: Seq[String]): Boolean =
    name.lastOption.exists(_.equalsIgnoreCase(DeltaTableValueFunctions.CDC_PATH_BASED))

  private def isDelta(source: String): Boolean =
    source.equalsIgnoreCase(DeltaSourceUtils.ALT_NAME) || source == classOf[DeltaDataSource].getName

  private def pathOf(paths: Seq[String], option: Option[String]): Option[String] =
    (paths, option) match {
      case (Seq(p), _) => Some(p)
      case (Seq(), Some(p)) => Some(p)
      case _ => None
    }
}
