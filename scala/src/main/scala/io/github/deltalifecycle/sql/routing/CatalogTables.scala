package io.github.deltalifecycle.sql.routing

import scala.collection.mutable
import scala.jdk.CollectionConverters._
import scala.util.DynamicVariable

import io.github.deltalifecycle.core.{ErrorConditions, TableName}
import io.github.deltalifecycle.features.redirect.{Access, Route}
import io.github.deltalifecycle.sql.{LifecycleCatalog, RoutingCatalog}
import io.github.deltalifecycle.sql.resolution.{LifecycleTableRef, TableStorage}
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.connector.catalog.{Identifier, Table, TableWritePrivilege}
import org.apache.spark.sql.delta.catalog.DeltaTableV2
import org.apache.spark.sql.delta.sources.{DeltaDataSource, DeltaSQLConf}
import org.apache.spark.sql.deltalifecycle.SparkInternals

/**
 * What a redirect-aware catalog does with a table it loaded: every catalog of this project (the
 * session catalog [[io.github.deltalifecycle.sql.LifecycleCatalog]] and the wrapper of any other
 * catalog, [[io.github.deltalifecycle.sql.RoutingCatalog]]) hands each Delta table it loads here,
 * and gets back the table the access goes to, as [[Router]] decides it.
 */
object CatalogTables {

  /** The option naming the class of the catalog a [[RoutingCatalog]] wraps. */
  val DelegateOption = "deltaLifecycle.delegate"

  /** The setting of [[DelegateOption]] for the catalog `name`. */
  def delegateSetting(name: String): String = s"spark.sql.catalog.$name.$DelegateOption"

  /**
   * The table `table` (as `catalog` loaded it under `ident`) goes to for `access`: itself, the same
   * table at its redirect's destination, or the destination table, loaded through its own catalog.
   */
  def routed(catalog: String, ident: Identifier, table: Table, access: Access): Table =
    table match {
      case d: DeltaTableV2 => served(d, routeOf(catalog, ident, d, access), access)
      case other => other
    }

  /** The route of `d`, which `catalog` loaded under `ident`, within an alteration decided once. */
  def routeOf(catalog: String, ident: Identifier, d: DeltaTableV2, access: Access): Route =
    routesOfAlteration.value match {
      case Some(routes) => routes.getOrElseUpdate((catalog, ident, access), decide(d, access))
      case None => decide(d, access)
    }

  /**
   * Runs `alteration`, an `alterTable` of a catalog: delta-spark loads the table it changes before
   * the change and again after it, and within one alteration a table is routed once. Routing again
   * would read the latest version of its log (a listing) for the same answer; the table itself is
   * opened afresh each time, so the one returned sees the change.
   */
  def altering[T](alteration: => T): T =
    if (routesOfAlteration.value.isDefined) alteration
    else routesOfAlteration.withValue(Some(mutable.Map.empty))(alteration)

  /**
   * `table`, loaded for time travel: delta-spark's catalog applies a version or timestamp to the
   * table its `loadTable(ident)` gives, with the options below; a wrapped catalog's own time travel
   * would load the table unrouted, so the wrapper applies it to the routed table the same way.
   */
  def atVersion(table: Table, version: String): Option[Table] =
    timeTravel(table, DeltaDataSource.TIME_TRAVEL_VERSION_KEY -> version)

  /** As [[atVersion]], at `timestamp` (microseconds, as Spark passes it). */
  def atTimestamp(table: Table, timestamp: Long): Option[Table] = timeTravel(
    table,
    DeltaDataSource.TIME_TRAVEL_TIMESTAMP_KEY -> new java.sql.Timestamp(timestamp / 1000).toString
  )

  private def timeTravel(table: Table, option: (String, String)): Option[Table] = table match {
    case d: DeltaTableV2 =>
      Some(d.withOptions(Map(option, DeltaDataSource.TIME_TRAVEL_SOURCE_KEY -> "SQL")))
    case _ => None
  }

  /**
   * The table a catalog serves for `d` on `route`. A destination by location is `d` there, keeping
   * `d`'s catalog entry with the destination's location: Spark asks a table for that entry (its v1
   * form) where it streams from or to a table by name. Unless delta-spark writes a table's schema
   * back to its entry after each commit (its internal `catalog.update.enabled`), which would move
   * the entry itself to the destination.
   */
  def served(d: DeltaTableV2, route: Route, access: Access): Table = route match {
    case Route.Direct => d
    case Route.Destination(dest) =>
      val spark = SparkSession.active
      d.catalogTable.filterNot(_ => updatesCatalogEntries(spark)) match {
        case Some(ct) =>
          val entry = TableStorage.movedTo(spark, ct, dest, write = access != Access.Read)
          DeltaTableV2(spark, dest, catalogTable = Some(entry), tableIdentifier = d.tableIdentifier)
        // No entry to carry (a table named by its path, or delta-spark writes entries back):
        // the destination opens with the session's configuration, as a path does.
        case None => DeltaTableV2(spark, dest)
      }
    case table: Route.DestinationTable => loadByName(SparkSession.active, table, access)
  }

  /** The destination table of `route` as its catalog loads it for `access`. */
  private def loadByName(spark: SparkSession, route: Route, access: Access): Table = {
    val (catalog, ident) = Router.destinationIdentifier(spark, route).get
    access match {
      case Access.Write(ops) =>
        val privileges = ops.flatMap(o =>
          TableWritePrivilege.values().find(_.name.equalsIgnoreCase(o))
        ).asJava
        if (privileges.isEmpty) catalog.loadTable(ident) else catalog.loadTable(ident, privileges)
      case Access.Read => catalog.loadTable(ident)
    }
  }

  /**
   * Refuses `operation` (which sets a redirect) on `table` unless the catalog it is named in
   * follows redirects in this session: the session catalog when it is [[LifecycleCatalog]] (a table
   * named by its path, ``delta.`<path>` ``, resolves there too), any other catalog when a
   * [[RoutingCatalog]] wraps it. Otherwise the redirect would leave the table unusable by that
   * name.
   */
  def requireRouted(spark: SparkSession, table: LifecycleTableRef, operation: String): Unit = {
    val name = table.catalog.getOrElse(SparkInternals.SessionCatalogName)
    SparkInternals.catalog(spark, name) match {
      case _: LifecycleCatalog | _: RoutingCatalog =>
      case plugin if name.equalsIgnoreCase(SparkInternals.SessionCatalogName) =>
        throw ErrorConditions.CatalogNotRouted.sessionCatalog(
          operation = operation,
          table = table.displayName,
          catalog = "spark_catalog",
          catalogClass = plugin.getClass.getName,
          lifecycleCatalog = classOf[LifecycleCatalog].getName
        )
      case plugin =>
        throw ErrorConditions.CatalogNotRouted.otherCatalog(
          operation = operation,
          table = table.displayName,
          catalog = plugin.name(),
          catalogClass = plugin.getClass.getName,
          routingCatalog = classOf[RoutingCatalog].getName,
          delegateSetting = delegateSetting(plugin.name())
        )
    }
  }

  private def decide(d: DeltaTableV2, access: Access): Route = {
    val path = d.catalogTable.map(t => new Path(t.location)).getOrElse(d.path)
    // Not d.name(): for a path table it opens the Delta log, which delta-spark may refuse.
    val name = d.catalogTable.map(t => TableName.sql(t.identifier.nameParts))
      .getOrElse(TableName.ofPath(path.toString))
    Router.route(SparkSession.active, d, path, access, name)
  }

  private def updatesCatalogEntries(spark: SparkSession): Boolean =
    SparkInternals.sqlConf(spark).getConf(DeltaSQLConf.DELTA_UPDATE_CATALOG_ENABLED)

  /** The routes decided within the alteration running on this thread, if one is. */
  private val routesOfAlteration =
    new DynamicVariable[Option[mutable.Map[(String, Identifier, Access), Route]]](None)
}
