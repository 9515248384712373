package io.github.deltalifecycle.sql.analysis

import io.github.deltalifecycle.features.redirect.Access
import io.github.deltalifecycle.shims.AnalyzerShim
import io.github.deltalifecycle.sql.routing.SessionRouting
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.delta.sources.DeltaDataSource
import org.apache.spark.sql.execution.datasources.SaveIntoDataSourceCommand

/**
 * Routes the DataFrame API's path-based reads and writes, which never ask a catalog:
 * `spark.read.format("delta").load(path)` and `df.write.format("delta").save(path)`. On Spark 4 it
 * runs in the analyzer's hint batch, before delta-spark resolves the path (and, for a redirected
 * reader-writer source, would refuse it); how Spark 3.5 differs is in [[AnalyzerShim]].
 */
case class RouteRedirectedPaths(spark: SparkSession) extends Rule[LogicalPlan] {
  private val write = Access.Write(Set("WRITE"))

  override def apply(plan: LogicalPlan): LogicalPlan = plan.transformDown(
    AnalyzerShim.routePathWrites(routedPath(_, write))
      .orElse(AnalyzerShim.routePathReads(routedPath(_, Access.Read)))
      .orElse {
        case s @ SaveIntoDataSourceCommand(_, _: DeltaDataSource, options, _) =>
          options.get("path")
            .flatMap(path => routedPath(path, write))
            .map(dest => s.copy(options = options + ("path" -> dest.toString)))
            .getOrElse(s)
      }
  )

  private def routedPath(path: String, access: Access): Option[Path] =
    SessionRouting.destinationPath(SessionRouting.route(spark, new Path(path), access, path))
}
