package io.github.deltalifecycle.sql.analysis

import io.github.deltalifecycle.shims.StreamingShim
import io.github.deltalifecycle.sql.streaming.{
  ForeachBatchRedirects,
  RoutedDeltaSink,
  RoutedDeltaSourceProvider,
  StreamedTable
}
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.catalyst.streaming.WriteToStream
import org.apache.spark.sql.delta.sources.{DeltaDataSource, DeltaSink, DeltaSourceUtils}
import org.apache.spark.sql.execution.datasources.DataSource
import org.apache.spark.sql.execution.streaming.sources.ForeachBatchSink

/**
 * Gives every Delta streaming read and write of a query the routed source and sink: reads by name
 * (the catalog table's v1 form) and by path, writes by `toTable` and by `start(path)`. They route
 * when the query starts and follow the redirect while it runs ([[RoutedDeltaSourceProvider]],
 * [[RoutedDeltaSink]]); a table that is not redirected is read and written by delta-spark's own
 * source and sink, which they hold. A `foreachBatch` query's batches route their own statements;
 * its sink only types the failures a redirect's state commit causes ([[ForeachBatchRedirects]]).
 *
 * A table by name is named by its catalog entry, not by the location the relation carries (a
 * redirected table's destination, as the catalog routed it), so a query follows the table the user
 * named wherever its redirect later sends it.
 */
case class RouteStreams(spark: SparkSession) extends Rule[LogicalPlan] {

  override def apply(plan: LogicalPlan): LogicalPlan = plan.resolveOperators {
    case s: StreamingShim.StreamingRelation if isDelta(s.dataSource.className) =>
      s.copy(dataSource = routedSource(s.dataSource))
    case w: WriteToStream if w.sink.isInstanceOf[DeltaSink] =>
      val sink = w.sink.asInstanceOf[DeltaSink]
      val table = StreamedTable(spark, sink.path.toString, sink.catalogTable.orElse(w.catalogTable))
      w.copy(sink =
        new RoutedDeltaSink(
          sink.sqlContext,
          table,
          sink.partitionColumns,
          sink.outputMode,
          sink.options
        )
      )
    case w: WriteToStream if w.sink.isInstanceOf[ForeachBatchSink[_]] =>
      w.copy(sink = ForeachBatchRedirects.typed(w.sink.asInstanceOf[ForeachBatchSink[_]]))
  }

  private def isDelta(className: String): Boolean =
    DeltaSourceUtils.isDeltaDataSourceName(className) ||
      className == classOf[DeltaDataSource].getName

  private def routedSource(dataSource: DataSource): DataSource = {
    val byName = dataSource.catalogTable.map { ct =>
      val table = StreamedTable(spark, ct.location.toString, Some(ct))
      Map(
        RoutedDeltaSourceProvider.TableLocationOption -> table.origin.toString,
        RoutedDeltaSourceProvider.TableNameOption -> table.name
      )
    }
    dataSource.copy(
      className = RoutedDeltaSourceProvider.ClassName,
      options = dataSource.options ++ byName.getOrElse(Map.empty)
    )
  }
}
