package io.github.deltalifecycle.sql.analysis

import scala.util.Try

import io.github.deltalifecycle.features.redirect.Access
import io.github.deltalifecycle.sql.resolution.LifecycleTableRef
import io.github.deltalifecycle.sql.routing.SessionRouting
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.SparkSession
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
 * it. The same replacement of a redirected ``delta.`path` `` goes to the destination too. A
 * replacement that sets its own location, or of a table that does not exist yet, is delta-spark's
 * as it is.
 */
case class RouteTableReplacements(spark: SparkSession) extends Rule[LogicalPlan] {
  private val write = Access.Write(Set("WRITE"))

  override def apply(plan: LogicalPlan): LogicalPlan = plan.resolveOperators {
    case r: ReplaceTableAsSelect if r.tableSpec.location.isEmpty => r.mapChildren(routed)
    case r: ReplaceTable if r.tableSpec.location.isEmpty => r.mapChildren(routed)
  }

  private def routed(child: LogicalPlan): LogicalPlan = child match {
    case id @ ResolvedIdentifier(catalog, ident) if SparkInternals.isSessionCatalog(catalog) =>
      destination(ident.namespace.toSeq :+ ident.name).map(dest =>
        ResolvedIdentifier(catalog, Identifier.of(Array(DeltaSourceUtils.ALT_NAME), dest.toString))
      ).getOrElse(id)
    case other => other
  }

  /** Where a write to the Delta table `nameParts` name goes, if its redirect sends it elsewhere. */
  private def destination(nameParts: Seq[String]): Option[Path] =
    Try(LifecycleTableRef.resolve(spark, nameParts)).toOption.flatMap { ref =>
      SessionRouting.destinationPath(SessionRouting.route(spark, ref.path, write, ref.displayName))
    }
}
