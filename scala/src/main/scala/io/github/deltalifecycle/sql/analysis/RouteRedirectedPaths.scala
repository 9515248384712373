package io.github.deltalifecycle.sql.analysis

import io.github.deltalifecycle.features.redirect.Access
import io.github.deltalifecycle.shims.AnalyzerShim
import io.github.deltalifecycle.sql.routing.Router
import io.github.deltalifecycle.sql.streaming.RoutedDeltaSourceProvider
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.plans.logical.{LogicalPlan, V2WriteCommand}
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.delta.{UnresolvedPathBasedDeltaTable, UnresolvedPathBasedTable}
import org.apache.spark.sql.delta.catalog.DeltaTableV2
import org.apache.spark.sql.delta.files.TahoeLogFileIndex
import org.apache.spark.sql.delta.sources.DeltaDataSource
import org.apache.spark.sql.execution.datasources.{
  HadoopFsRelation,
  LogicalRelation,
  SaveIntoDataSourceCommand
}
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation

/**
 * Routes the DataFrame API's path-based reads and writes, which never ask a catalog:
 * `spark.read.format("delta").load(path)`, `spark.readStream.format("delta").load(path)` and
 * `df.write.format("delta").save(path)`. Where the analyzer lets it, it runs before delta-spark
 * opens the path ([[AnalyzerShim]]); everywhere it also routes the relations delta-spark built for
 * a path (Spark 3.5, and the first query of Spark's Hive session up to Spark 4.2.0, whose analyzer
 * runs no rule of an extension before that until this rule puts itself there). A relation is
 * rebuilt for the destination before the query's attributes are fixed; time travel is left alone.
 * Whether a relation delta-spark built is redirected is read from the snapshot it loaded, with no
 * request of its own when it names no redirect.
 */
case class RouteRedirectedPaths(spark: SparkSession) extends Rule[LogicalPlan] {
  private val write = Access.Write(Set("WRITE"))
  @volatile private var hintRoutingChecked = false

  override def apply(plan: LogicalPlan): LogicalPlan = {
    if (!hintRoutingChecked) {
      hintRoutingChecked = true
      AnalyzerShim.restoreHintRouting(spark, this)
    }
    route(plan)
  }

  private def route(plan: LogicalPlan): LogicalPlan = plan.transformDown(
    AnalyzerShim.routeUnresolved(routedPath(_, Access.Read), RoutedDeltaSourceProvider.ClassName)
      .orElse(quotedPaths)
      .orElse(resolvedReads)
      .orElse(resolvedWrites)
      .orElse {
        case s @ SaveIntoDataSourceCommand(_, _: DeltaDataSource, options, _) =>
          options.get("path")
            .flatMap(path => routedPath(path, write))
            .map(dest => s.copy(options = options + ("path" -> dest.toString)))
            .getOrElse(s)
      }
  )

  /**
   * delta-spark's statements on a quoted path (`DESCRIBE HISTORY '<path>'`, `DESCRIBE DETAIL
   * '<path>'`, `VACUUM '<path>'`, `OPTIMIZE '<path>'`), which delta-spark resolves itself from the
   * path, in its resolution rule: the path becomes the destination's before that rule runs (in the
   * hint batch). The DESCRIBEs are reads; VACUUM and OPTIMIZE write by their name, as the source's
   * NoRedirectRules name them.
   */
  private def quotedPaths: PartialFunction[LogicalPlan, LogicalPlan] = {
    case u: UnresolvedPathBasedDeltaTable =>
      routedPath(u.path, accessOf(u.commandName)).map(d => u.copy(path = d.toString)).getOrElse(u)
    case u: UnresolvedPathBasedTable =>
      routedPath(u.path, accessOf(u.commandName)).map(d => u.copy(path = d.toString)).getOrElse(u)
  }

  private def accessOf(command: String): Access =
    if (command.toUpperCase(java.util.Locale.ROOT).startsWith("DESC")) Access.Read
    else Access.Write(Set(command))

  private def resolvedReads: PartialFunction[LogicalPlan, LogicalPlan] = {
    case l: LogicalRelation if l.catalogTable.isEmpty =>
      l.relation match {
        case h: HadoopFsRelation => h.location match {
            case index: TahoeLogFileIndex if !index.isTimeTravelQuery =>
              val route = Router.routeOpened(
                spark,
                index.deltaLog,
                (index.version, index.protocol, index.metadata),
                index.path,
                Access.Read,
                index.path.toString
              )
              // A read by path: its destination opens with the session's configuration, as the
              // path itself does.
              route.destinationPath.map { dest =>
                LogicalRelation(DeltaTableV2(spark, dest).toBaseRelation, l.isStreaming)
              }.getOrElse(l)
            case _ => l
          }
        case _ => l
      }
    case r: DataSourceV2Relation => routedRelation(r, Access.Read).getOrElse(r)
  }

  /** Spark 3.5's path writes are V2 writes on a path-based table. */
  private def resolvedWrites: PartialFunction[LogicalPlan, LogicalPlan] = {
    case w: V2WriteCommand => w.table match {
        case r: DataSourceV2Relation => routedRelation(r, write).map(w.withNewTable).getOrElse(w)
        case _ => w
      }
  }

  /** A path-based (no catalog entry), latest-version Delta relation, rebuilt where it routes. */
  private def routedRelation(
      r: DataSourceV2Relation,
      access: Access
  ): Option[DataSourceV2Relation] =
    r.table match {
      case d: DeltaTableV2 if d.catalogTable.isEmpty && d.timeTravelOpt.isEmpty =>
        val route = Router.route(spark, d, d.path, access, d.path.toString)
        route.destinationPath.map { dest =>
          DataSourceV2Relation.create(
            d.copy(path = dest, tableIdentifier = None),
            None,
            None,
            r.options
          )
        }
      case _ => None
    }

  private def routedPath(path: String, access: Access): Option[Path] =
    Router.route(spark, new Path(path), access, path).destinationPath
}
