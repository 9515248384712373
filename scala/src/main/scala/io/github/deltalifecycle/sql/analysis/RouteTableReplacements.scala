package io.github.deltalifecycle.sql.analysis

import io.github.deltalifecycle.features.redirect.{Access, Route}
import io.github.deltalifecycle.sql.resolution.LifecycleTableRef
import io.github.deltalifecycle.sql.routing.Router
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.analysis.ResolvedIdentifier
import org.apache.spark.sql.catalyst.plans.logical.{
  LogicalPlan,
  ReplaceTable,
  ReplaceTableAsSelect,
  TableSpec,
  TableSpecBase,
  UnresolvedTableSpec
}
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.connector.catalog.CatalogPlugin
import io.github.deltalifecycle.sql.RoutingCatalog
import org.apache.spark.sql.deltalifecycle.SparkInternals

/**
 * Routes the replacement of a table by name: `CREATE OR REPLACE TABLE … [AS SELECT]`, `REPLACE
 * TABLE`, `DeltaTable.createOrReplace()`, and the DataFrame API's `saveAsTable` in overwrite mode
 * (with or without `replaceWhere`), which Spark plans as a replace. delta-spark stages a
 * replacement at the location of the table's catalog entry without asking the catalog to load it,
 * so neither [[io.github.deltalifecycle.sql.LifecycleCatalog]] nor a [[RoutingCatalog]] sees it.
 * For a redirected source the replacement goes to the destination instead, named by its path: the
 * catalog entry keeps the source's location (the redirect lives in the source's log), as every
 * other write by name leaves it. The same replacement of a redirected ``delta.`path` `` goes to the
 * destination too, and so does its location when it names the source itself
 * (`DeltaTable.createOrReplace().location(…)`). A replacement that sets another location, or of a
 * table that does not exist yet, is delta-spark's as it is.
 *
 * A schema-only `CREATE OR REPLACE` by name becomes a `REPLACE` of the destination's path: the
 * table exists (a redirect's destination is a Delta table), so both replace it, while delta-spark
 * takes a `CREATE OR REPLACE` of a path for a creation at an existing location and refuses a new
 * schema (`DELTA_CREATE_TABLE_SCHEME_MISMATCH`). The history names it `REPLACE TABLE`.
 */
case class RouteTableReplacements(spark: SparkSession) extends Rule[LogicalPlan] {
  private val write = Access.Write(Set("WRITE"))

  override def apply(plan: LogicalPlan): LogicalPlan = plan.resolveOperators {
    case r: ReplaceTableAsSelect if r.tableSpec.location.isEmpty =>
      routed(r.name) match {
        case (name, Some(_)) => r.copy(name = name, tableSpec = delta(r.tableSpec))
        case _ => r
      }
    case r: ReplaceTable if r.tableSpec.location.isEmpty =>
      routed(r.name) match {
        // By name the table exists, so CREATE OR REPLACE is a REPLACE (see above).
        case (name, Some(_)) => r.copy(
            name = name,
            tableSpec = delta(r.tableSpec),
            orCreate = r.orCreate && isPathIdentifier(r.name)
          )
        case _ => r
      }
    case r: ReplaceTable if isPathIdentifier(r.name) && namesItself(r) =>
      routed(r.name) match {
        case (name, Some(dest)) => r.copy(name = name, tableSpec = located(r.tableSpec, dest))
        case _ => r
      }
  }

  /**
   * `child` named by the destination's path (in the session catalog, which resolves Delta paths) if
   * it is a redirected table of the session catalog or of a wrapped one, and that destination.
   */
  private def routed(child: LogicalPlan): (LogicalPlan, Option[Path]) = child match {
    case ResolvedIdentifier(catalog, ident) if routes(catalog) =>
      val parts = ident.namespace.toSeq :+ ident.name
      val named = if (SparkInternals.isSessionCatalog(catalog)) parts else catalog.name +: parts
      destination(named) match {
        case Some(dest) =>
          val (session, byPath) = Router.destinationIdentifier(spark, Route.Destination(dest)).get
          (ResolvedIdentifier(session, byPath), Some(dest))
        case None => (child, None)
      }
    case other => (other, None)
  }

  private def routes(catalog: CatalogPlugin): Boolean =
    SparkInternals.isSessionCatalog(catalog) || catalog.isInstanceOf[RoutingCatalog]

  private def isPathIdentifier(name: LogicalPlan): Boolean = name match {
    case ResolvedIdentifier(catalog, ident) =>
      SparkInternals.isSessionCatalog(catalog) &&
      LifecycleTableRef.isPathName(ident.namespace.toSeq :+ ident.name)
    case _ => false
  }

  /** Whether the location `r` sets is the path its identifier (a ``delta.`path` ``) names. */
  private def namesItself(r: ReplaceTable): Boolean = (r.tableSpec.location, r.name) match {
    case (Some(location), ResolvedIdentifier(_, ident)) =>
      Router.sameLocation(spark, new Path(location), new Path(ident.name))
    case _ => false
  }

  /**
   * A replacement routed to a destination's path replaces a Delta table: one that names no format
   * (`saveAsTable` without `format`, which a catalog other than the session's resolves itself) is
   * given Delta's, which the session catalog would otherwise take for its default source.
   */
  private def delta(spec: TableSpecBase): TableSpecBase = spec match {
    case s: UnresolvedTableSpec if s.provider.isEmpty => s.copy(provider = Some("delta"))
    case s: TableSpec if s.provider.isEmpty => s.copy(provider = Some("delta"))
    case other => other
  }

  private def located(spec: TableSpecBase, dest: Path): TableSpecBase = spec match {
    case s: UnresolvedTableSpec => s.copy(location = Some(dest.toString))
    case s: TableSpec => s.copy(location = Some(dest.toString))
    case other => other
  }

  /** Where a write to the Delta table `nameParts` name goes, if its redirect sends it elsewhere. */
  private def destination(nameParts: Seq[String]): Option[Path] =
    Router.tableNamed(spark, nameParts).flatMap { ref =>
      Router.route(spark, ref.path, write, ref.displayName).destinationPath
    }
}
