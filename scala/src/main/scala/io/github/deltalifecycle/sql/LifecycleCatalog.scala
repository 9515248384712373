package io.github.deltalifecycle.sql

import scala.collection.mutable
import scala.jdk.CollectionConverters._
import scala.util.DynamicVariable

import io.github.deltalifecycle.features.redirect.{Access, Route}
import io.github.deltalifecycle.core.TableName
import io.github.deltalifecycle.sql.routing.SessionRouting
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.connector.catalog.{Identifier, Table, TableChange, TableWritePrivilege}
import org.apache.spark.sql.delta.catalog.{DeltaCatalog, DeltaTableV2}
import org.apache.spark.sql.delta.sources.{DeltaDataSource, DeltaSQLConf}
import org.apache.spark.sql.deltalifecycle.SparkInternals

/**
 * Delta's session catalog, made redirect-aware: every table it loads, by name or as
 * ``delta.`path` ``, for reading or writing, goes where the table's redirect says (see
 * [[SessionRouting]]). This is where SQL reads and writes, time travel, DESCRIBE DETAIL and
 * `saveAsTable` find their table. Set it with
 * `spark.sql.catalog.spark_catalog=io.github.deltalifecycle.sql.LifecycleCatalog`.
 */
class LifecycleCatalog extends DeltaCatalog {

  override def loadTable(ident: Identifier): Table =
    routed(ident, super.loadTable(ident), Access.Read)

  /* delta-spark's catalog does not distinguish writes; Spark passes the privileges of a write
   * target here. */
  override def loadTable(
      ident: Identifier,
      writePrivileges: java.util.Set[TableWritePrivilege]
  ): Table =
    routed(
      ident,
      super.loadTable(ident),
      Access.Write(writePrivileges.asScala.map(_.toString).toSet)
    )

  /**
   * delta-spark's alterTable loads the table it changes through [[loadTable]] before the change,
   * and again after it to return it. Within one alterTable a table is routed once: routing it again
   * would load another snapshot of its latest version (a listing of its log) for the same answer.
   * The table itself is opened afresh each time, so the one returned sees the change.
   */
  override def alterTable(ident: Identifier, changes: TableChange*): Table =
    LifecycleCatalog.routesOfAlteration.withValue(Some(mutable.Map.empty)) {
      super.alterTable(ident, changes: _*)
    }

  override def loadTable(ident: Identifier, version: String): Table =
    timeTravel(
      ident,
      Map(DeltaDataSource.TIME_TRAVEL_VERSION_KEY -> version)
    )(super.loadTable(ident, version))

  override def loadTable(ident: Identifier, timestamp: Long): Table =
    timeTravel(
      ident,
      Map(DeltaDataSource.TIME_TRAVEL_TIMESTAMP_KEY ->
        new java.sql.Timestamp(timestamp / 1000).toString)
    )(
      super.loadTable(ident, timestamp)
    )

  /** Time travel on a routed table applies to the table routed to, with its own version numbers. */
  private def timeTravel(
      ident: Identifier,
      options: Map[String, String]
  )(unrouted: => Table): Table =
    loadTable(ident) match {
      case d: DeltaTableV2 =>
        d.withOptions(options + (DeltaDataSource.TIME_TRAVEL_SOURCE_KEY -> "SQL"))
      case _ => unrouted
    }

  private def routed(ident: Identifier, table: Table, access: Access): Table = table match {
    case d: DeltaTableV2 =>
      val route = LifecycleCatalog.routesOfAlteration.value match {
        case Some(routes) => routes.getOrElseUpdate((ident, access), routeOf(d, access))
        case None => routeOf(d, access)
      }
      route match {
        case Route.Direct => d
        case Route.Destination(dest) => atDestination(d, dest)
        case Route.DestinationTable(destName, _) => super.loadTable(sessionIdentifier(destName))
      }
    case other => other
  }

  /**
   * The table `d` names, at its redirect's destination. A table by name keeps its catalog entry
   * with the destination's location: Spark asks a table for that entry (its v1 form) where it
   * streams from or to a table by name. Unless delta-spark writes a table's schema back to its
   * entry after each commit (its internal `catalog.update.enabled`), which would move the entry
   * itself to the destination.
   */
  private def atDestination(d: DeltaTableV2, dest: Path): Table = {
    val spark = SparkSession.active
    d.catalogTable.filterNot(_ => updatesCatalogEntries(spark)) match {
      case Some(ct) =>
        val entry = ct.copy(storage = ct.storage.copy(locationUri = Some(dest.toUri)))
        DeltaTableV2(spark, dest, catalogTable = Some(entry), tableIdentifier = d.tableIdentifier)
      case None => DeltaTableV2(spark, dest)
    }
  }

  private def updatesCatalogEntries(spark: SparkSession): Boolean =
    SparkInternals.sqlConf(spark).getConf(DeltaSQLConf.DELTA_UPDATE_CATALOG_ENABLED)

  private def routeOf(d: DeltaTableV2, access: Access): Route = {
    val path = d.catalogTable.map(t => new Path(t.location)).getOrElse(d.path)
    // Not d.name(): for a path table it opens the Delta log, which delta-spark may refuse.
    val name = d.catalogTable.map(t => TableName.sql(t.identifier.nameParts))
      .getOrElse(s"delta.`$path`")
    SessionRouting.route(SparkSession.active, d, path, access, name)
  }

  /** A redirect's destination table, named as SQL text, as this catalog's identifier. */
  private def sessionIdentifier(tableName: String): Identifier = {
    val parts = TableName.parts(tableName) match {
      case Seq(catalog, db, t) if catalog.equalsIgnoreCase(name()) => Seq(db, t)
      case other => other
    }
    Identifier.of(parts.init.toArray, parts.last)
  }
}

private object LifecycleCatalog {

  /** The routes decided within the alterTable running on this thread, if one is. */
  val routesOfAlteration =
    new DynamicVariable[Option[mutable.Map[(Identifier, Access), Route]]](None)
}
