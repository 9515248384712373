package io.github.deltalifecycle.sql.analysis

import io.github.deltalifecycle.features.redirect.Access
import io.github.deltalifecycle.sql.routing.SessionRouting
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
      pathOf(u.paths, u.options.get("path"))
        .flatMap(path => routedPath(path, Access.Read))
        .map(dest => withPath(u, dest))
        .getOrElse(u)
    case s @ SaveIntoDataSourceCommand(_, _: DeltaDataSource, options, _) =>
      options.get("path")
        .flatMap(path => routedPath(path, Access.Write(Set("WRITE"))))
        .map(dest => s.copy(options = options + ("path" -> dest.toString)))
        .getOrElse(s)
  }

  private def routedPath(path: String, access: Access): Option[Path] =
    SessionRouting.destinationPath(SessionRouting.route(spark, new Path(path), access, path))

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
