package io.github.deltalifecycle.sql

import java.util

import scala.jdk.CollectionConverters._

import io.github.deltalifecycle.core.ErrorConditions
import io.github.deltalifecycle.features.redirect.Access
import io.github.deltalifecycle.shims.CatalogOwnedShim
import io.github.deltalifecycle.sql.routing.{CatalogTables, Router}
import io.github.deltalifecycle.sql.unitycatalog.UnityCatalogs
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.connector.catalog._
import org.apache.spark.sql.delta.catalog.DeltaTableV2
import org.apache.spark.sql.util.CaseInsensitiveStringMap

/**
 * Any catalog, made redirect-aware: Unity Catalog's connector (`UCSingleCatalog`) or any other
 * catalog that serves Delta tables under a name other than `spark_catalog`. It loads every table
 * through the catalog it wraps, its delegate, and hands each Delta table to [[CatalogTables]], as
 * [[LifecycleCatalog]] does for the session catalog; everything else (namespaces, views, creating
 * and dropping tables, credentials the delegate vends) is the delegate's ([[DelegatingCatalog]]).
 *
 * {{{
 * spark.sql.catalog.lake=io.github.deltalifecycle.sql.RoutingCatalog
 * spark.sql.catalog.lake.deltaLifecycle.delegate=io.unitycatalog.spark.UCSingleCatalog
 * spark.sql.catalog.lake.uri=...            (the delegate's own options, unchanged)
 * }}}
 *
 * The delegate is initialized with the catalog's name and every option but
 * `deltaLifecycle.delegate`, so it sees what it would see configured on its own. For Unity
 * Catalog's connector the wrapper also registers the commit coordinator of the catalog's managed
 * tables, which delta-spark finds by the connector's class name otherwise; their streams read by
 * name get the catalog's settings the same way ([[catalogmanaged.WrappedCatalogStreams]]).
 */
class RoutingCatalog extends DelegatingCatalog {
  private var catalogName: String = _
  private var wrapped: TableCatalog = _

  override def initialize(name: String, options: CaseInsensitiveStringMap): Unit = {
    val delegateClass = Option(options.get(CatalogTables.DelegateOption)).map(_.trim)
      .getOrElse("")
    def noDelegate = ErrorConditions.InvalidArgument.routingCatalogWithoutDelegate(
      catalog = name,
      setting = CatalogTables.delegateSetting(name),
      value = delegateClass
    )
    if (delegateClass.isEmpty) throw noDelegate
    val delegateOptions = options.asCaseSensitiveMap().asScala
      .filter { case (k, _) => !k.equalsIgnoreCase(CatalogTables.DelegateOption) }
    val plugin =
      try Class.forName(delegateClass, true, Thread.currentThread().getContextClassLoader)
          .getDeclaredConstructor().newInstance()
      catch { case _: ReflectiveOperationException => throw noDelegate }
    plugin match {
      case t: TableCatalog => wrapped = t
      case _ => throw noDelegate
    }
    catalogName = name
    wrapped.initialize(name, new CaseInsensitiveStringMap(delegateOptions.asJava))
    if (delegateClass == UnityCatalogs.ConnectorClass) {
      CatalogOwnedShim.registerUnityCatalogCommits(name, Set(CatalogTables.DelegateOption))
    }
  }

  /** The catalog this one wraps. */
  override def delegate: TableCatalog = wrapped

  /** The table `ident` as the delegate loads it, without following its redirect. */
  def loadUnrouted(ident: Identifier): Table = wrapped.loadTable(ident)

  override def name(): String = catalogName

  // ---- tables: loaded through the delegate, then routed --------------------------------------

  override def loadTable(ident: Identifier): Table = routed(ident, wrapped.loadTable(ident))

  override def loadTable(
      ident: Identifier,
      writePrivileges: util.Set[TableWritePrivilege]
  ): Table = CatalogTables.routed(
    catalogName,
    ident,
    wrapped.loadTable(ident, writePrivileges),
    Access.Write(writePrivileges.asScala.map(_.toString).toSet)
  )

  /**
   * Time travel applies to the table routed to, with its own version numbers. The delegate's own
   * time travel would load the table without routing it, so it is applied here as delta-spark's
   * catalog applies it.
   */
  override def loadTable(ident: Identifier, version: String): Table =
    CatalogTables.atVersion(loadTable(ident), version)
      .getOrElse(wrapped.loadTable(ident, version))

  override def loadTable(ident: Identifier, timestamp: Long): Table =
    CatalogTables.atTimestamp(loadTable(ident), timestamp)
      .getOrElse(wrapped.loadTable(ident, timestamp))

  override protected def routed(ident: Identifier, table: Table): Table =
    CatalogTables.routed(catalogName, ident, table, Access.Read)

  /**
   * A change of a redirected table goes where its redirect sends the change: to the destination
   * table through its own catalog, or to the destination's location through the session catalog
   * (``delta.`<path>` ``). delta-spark's catalog inside the delegate would load the source itself.
   */
  override def alterTable(ident: Identifier, changes: TableChange*): Table =
    CatalogTables.altering {
      val destination = wrapped.loadTable(ident) match {
        case d: DeltaTableV2 => Router.destinationIdentifier(
            SparkSession.active,
            CatalogTables.routeOf(catalogName, ident, d, Access.Read)
          )
        case _ => None
      }
      destination match {
        case Some((catalog, destIdent)) => catalog.alterTable(destIdent, changes: _*)
        case None => wrapped.alterTable(ident, changes: _*)
      }
    }
}
