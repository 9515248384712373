package io.github.deltalifecycle.sql.analysis

import io.github.deltalifecycle.features.redirect.{Access, RedirectRouting, Route}
import io.github.deltalifecycle.sql.RedirectSession
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.plans.logical.{LogicalPlan, UnresolvedDataSource}
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.delta.sources.{DeltaDataSource, DeltaSourceUtils}
import org.apache.spark.sql.execution.datasources.SaveIntoDataSourceCommand

/**
 * Routes the DataFrame API's path-based reads and writes, which never ask a catalog:
 * `spark.read.format("delta").load(path)` and `df.write.format("delta").save(path)`. It runs in the
 * analyzer's hint batch, before delta-spark resolves the path (and, for a redirected reader-writer
 * source, would refuse it).
 */
case class RouteRedirectedPaths(spark: SparkSession) extends Rule[LogicalPlan] {
  override def apply(plan: LogicalPlan): LogicalPlan = plan.transformDown {
    case u: UnresolvedDataSource if isDelta(u.format) && !u.isStreaming =>
      pathOf(u.paths, u.options.get("path")) match {
        case Some(path) =>
          RedirectRouting.route(
            RedirectSession.context(spark),
            new Path(path),
            Access.Read,
            path
          ) match {
            case Route.Direct => u
            case Route.ToLocation(dest) => withPath(u, dest)
            case Route.ToTable(_, dest) => withPath(u, dest)
          }
        case None => u
      }
    case s @ SaveIntoDataSourceCommand(_, _: DeltaDataSource, options, mode) =>
      options.get("path") match {
        case Some(path) =>
          RedirectRouting.route(
            RedirectSession.context(spark),
            new Path(path),
            Access.Write(Set("WRITE")),
            path
          ) match {
            case Route.ToLocation(dest) => s.copy(options = options + ("path" -> dest.toString))
            case Route.ToTable(_, dest) => s.copy(options = options + ("path" -> dest.toString))
            case _ => s
          }
        case None => s
      }
  }

  private def isDelta(source: String): Boolean =
    source.equalsIgnoreCase(DeltaSourceUtils.ALT_NAME) || source == classOf[DeltaDataSource].getName

  private def pathOf(paths: Seq[String], option: Option[String]): Option[String] =
    (paths, option) match {
      case (Seq(p), _) => Some(p)
      case (Seq(), Some(p)) => Some(p)
      case _ => None
    }

  private def withPath(u: UnresolvedDataSource, dest: Path): UnresolvedDataSource =
    if (u.paths.nonEmpty) u.copy(paths = Seq(dest.toString))
    else u.copy(options = u.options + ("path" -> dest.toString))
}
