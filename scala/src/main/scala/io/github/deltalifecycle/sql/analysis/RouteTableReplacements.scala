package io.github.deltalifecycle.sql.analysis

import scala.util.control.NonFatal

import io.github.deltalifecycle.core.TableName
import io.github.deltalifecycle.features.redirect.Access
import io.github.deltalifecycle.sql.routing.SessionRouting
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.TableIdentifier
import org.apache.spark.sql.catalyst.analysis.ResolvedIdentifier
import org.apache.spark.sql.catalyst.plans.logical.{LogicalPlan, ReplaceTable, ReplaceTableAsSelect}
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.connector.catalog.Identifier
import org.apache.spark.sql.delta.sources.DeltaSourceUtils
import org.apache.spark.sql.deltalifecycle.SparkInternals

/**
 * Routes the replacement of a table by name: `CREATE OR REPLACE TABLE … [AS SELECT]`, `REPLACE
 * TABLE`, and the DataFrame API's `saveAsTable` in overwrite mode (with or without `replaceWhere`),
 * which Spark plans as a replace. delta-spark stages a replacement at the location of the table's
 * catalog entry without asking the catalog to load it, so
 * [[io.github.deltalifecycle.sql.LifecycleCatalog]] never sees it. For a redirected source the
 * replacement goes to the destination instead, named by its path: the catalog entry keeps the
 * source's location (the redirect lives in the source's log), as every other write by name leaves
 * it. A replacement that sets its own location, or of a table that does not exist yet, is
 * delta-spark's as it is.
 */
case class RouteTableReplacements(spark: SparkSession) extends Rule[LogicalPlan] {
  private val write = Access.Write(Set("WRITE"))

  override def apply(plan: LogicalPlan): LogicalPlan = plan.resolveOperators {
    case r: ReplaceTableAsSelect if r.tableSpec.location.isEmpty => r.mapChildren(routed)
    case r: ReplaceTable if r.tableSpec.location.isEmpty => r.mapChildren(routed)
  }

  private def routed(child: LogicalPlan): LogicalPlan = child match {
    case id @ ResolvedIdentifier(catalog, ident)
        if SparkInternals.isSessionCatalog(catalog) && !isPath(ident) =>
      destination(ident).map(dest =>
        ResolvedIdentifier(catalog, Identifier.of(Array(DeltaSourceUtils.ALT_NAME), dest.toString))
      ).getOrElse(id)
    case other => other
  }

  /** Where a write to the Delta table `ident` names goes, if its redirect sends it elsewhere. */
  private def destination(ident: Identifier): Option[Path] = {
    val name = TableIdentifier(ident.name, ident.namespace.lastOption)
    val entry =
      try Some(SparkInternals.sessionCatalog(spark).getTableMetadata(name))
      catch { case NonFatal(_) => None }
    entry.filter(e => DeltaSourceUtils.isDeltaTable(e.provider)).flatMap { e =>
      val what = TableName.sql(e.identifier.nameParts)
      SessionRouting.destinationPath(
        SessionRouting.route(spark, new Path(e.location), write, what)
      )
    }
  }

  private def isPath(ident: Identifier): Boolean =
    ident.namespace.length == 1 && DeltaSourceUtils.isDeltaDataSourceName(ident.namespace.head) &&
      new Path(ident.name).isAbsolute
}
