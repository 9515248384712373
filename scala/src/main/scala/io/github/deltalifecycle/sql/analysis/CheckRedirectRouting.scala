package io.github.deltalifecycle.sql.analysis

import io.github.deltalifecycle.core.ErrorConditions
import io.github.deltalifecycle.features.redirect.RedirectConfig
import io.github.deltalifecycle.sql.LifecycleCatalog
import io.github.deltalifecycle.sql.routing.Router
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.analysis.ResolvedTable
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.connector.catalog.Table
import org.apache.spark.sql.delta.commands.DescribeDeltaHistoryCommand
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.delta.actions.Metadata
import org.apache.spark.sql.delta.catalog.DeltaTableV2
import org.apache.spark.sql.delta.files.TahoeFileIndex
import org.apache.spark.sql.execution.datasources.{HadoopFsRelation, LogicalRelation}
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation

/**
 * The safety net behind routing: a query must never read a redirected source's stale rows by an
 * entry point that bypassed it (for example `DeltaTable.forPath` from Scala on a writer-only
 * source, which delta-spark can open, or a catalog this project does not wrap). It looks at every
 * relation and every table delta-spark resolved for a statement of its own, only at the snapshot
 * delta-spark already loaded for the query, so it costs no I/O. It runs as a check after analysis
 * and again as an optimizer rule, because some APIs hand Spark plans marked as already analyzed.
 */
case class CheckRedirectRouting(spark: SparkSession) extends Rule[LogicalPlan] {
  override def apply(plan: LogicalPlan): LogicalPlan = {
    check(plan)
    plan
  }

  def check(plan: LogicalPlan): Unit = plan.foreach {
    case l: LogicalRelation => l.relation match {
        case h: HadoopFsRelation => h.location match {
            case index: TahoeFileIndex => check(index.path.toString, index.metadata)
            case _ =>
          }
        case _ =>
      }
    case r: DataSourceV2Relation => check(r.table)
    // delta-spark's statements on a table it resolved itself (a quoted path's DESCRIBE DETAIL,
    // VACUUM and OPTIMIZE hold the table, DESCRIBE HISTORY's command carries it).
    case r: ResolvedTable => check(r.table)
    case h: DescribeDeltaHistoryCommand => check(h.table)
    case _ =>
  }

  private def check(table: Table): Unit = table match {
    case d: DeltaTableV2 => check(d.path.toString, d.initialSnapshot.metadata)
    case _ =>
  }

  private def check(path: String, metadata: Metadata): Unit =
    RedirectConfig.fromMetadata(metadata, path).foreach { c =>
      if (Router.readsElsewhere(spark, c)) throw ErrorConditions.redirectNotRouted(
        path = path,
        state = c.state.name,
        catalogClass = classOf[LifecycleCatalog].getName
      )
    }
}
