package io.github.deltalifecycle.sql.resolution

import scala.jdk.CollectionConverters._

import io.github.deltalifecycle.core.{ErrorConditions, Locations, TableName}
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.TableIdentifier
import org.apache.spark.sql.catalyst.analysis.{
  NoSuchDatabaseException,
  NoSuchNamespaceException,
  NoSuchTableException
}
import org.apache.spark.sql.catalyst.catalog.CatalogTable
import org.apache.spark.sql.connector.catalog.TableCatalog
import org.apache.spark.sql.delta.catalog.DeltaTableV2
import io.github.deltalifecycle.sql.RoutingCatalog
import io.github.deltalifecycle.sql.routing.Router
import org.apache.spark.sql.deltalifecycle.SparkInternals

/**
 * A table a statement works on, resolved to the location of its Delta log. `catalog` is the catalog
 * it was named in (None for ``delta.`<path>` ``), and `catalogTable` its entry there when the
 * catalog has one.
 */
case class LifecycleTableRef(
    path: Path,
    displayName: String,
    catalogTable: Option[CatalogTable],
    catalog: Option[String] = None
)

/**
 * Resolves a statement's table name the way Delta users expect: ``delta.`/path` `` is a path;
 * anything else is a catalog name (with or without catalog and namespace). It reads only catalog
 * metadata, never the Delta log, so it works on tables delta-spark cannot open, and it names the
 * table registered under the name, not where a redirect of it goes.
 */
object LifecycleTableRef {
  private val SessionCatalogName = "spark_catalog"

  def resolve(spark: SparkSession, nameParts: Seq[String]): LifecycleTableRef = nameParts match {
    case Seq(_, location) if isPathName(nameParts) =>
      val path = Locations.parse(location)(reason =>
        ErrorConditions.InvalidArgument.invalidTablePath(location = location, reason = reason)
      )
      LifecycleTableRef(path, TableName.ofPath(location), None)
    case _ => resolveInCatalog(spark, nameParts)
  }

  /** Whether `nameParts` is ``delta.`<path>` ``, which names a table by its location. */
  def isPathName(nameParts: Seq[String]): Boolean = nameParts match {
    case Seq(provider, location) => provider.equalsIgnoreCase("delta") && looksLikePath(location)
    case _ => false
  }

  private def looksLikePath(s: String): Boolean = s.contains("/") || s.contains(":") ||
    s.contains("\\")

  // Spark 3.5's session catalog throws NoSuchDatabaseException for a missing database, which
  // only Spark 4 makes a NoSuchNamespaceException.
  private def notFound(displayName: String): PartialFunction[Throwable, Nothing] = {
    case _: NoSuchTableException | _: NoSuchNamespaceException | _: NoSuchDatabaseException =>
      throw ErrorConditions.tableNotFound(displayName)
  }

  private def resolveInCatalog(spark: SparkSession, nameParts: Seq[String]): LifecycleTableRef = {
    val displayName = TableName.sql(nameParts)
    val (plugin, ident) = Router.catalogAndIdentifier(spark, nameParts)
    if (plugin.name().equalsIgnoreCase(SessionCatalogName)) {
      val table = ident.namespace match {
        case Array(db) =>
          try SparkInternals.sessionCatalog(spark).getTableMetadata(TableIdentifier(
              ident.name,
              Some(db)
            ))
          catch notFound(displayName)
        case _ => throw ErrorConditions.tableNotFound(displayName)
      }
      val provider = table.provider.getOrElse("")
      if (!provider.equalsIgnoreCase("delta"))
        throw ErrorConditions.notDeltaProvider(table = displayName, provider = provider)
      LifecycleTableRef(new Path(table.location), displayName, Some(table), Some(plugin.name()))
    } else {
      val catalog = plugin match {
        case t: TableCatalog => t
        case _ => throw ErrorConditions.tableNotFound(displayName)
      }
      val table =
        try catalog match {
            case r: RoutingCatalog => r.loadUnrouted(ident)
            case other => other.loadTable(ident)
          }
        catch notFound(displayName)
      table match {
        // Its properties would open the log, which delta-spark may refuse (a redirect feature).
        case d: DeltaTableV2 =>
          val location = d.catalogTable.map(t => new Path(t.location)).getOrElse(d.path)
          return LifecycleTableRef(location, displayName, d.catalogTable, Some(catalog.name()))
        case _ =>
      }
      val props = table.properties().asScala
      val provider = props.getOrElse(TableCatalog.PROP_PROVIDER, "")
      if (!provider.equalsIgnoreCase("delta"))
        throw ErrorConditions.notDeltaProvider(table = displayName, provider = provider)
      val location = props.getOrElse(
        TableCatalog.PROP_LOCATION,
        throw ErrorConditions.tableNotFound(displayName)
      )
      LifecycleTableRef(new Path(location), displayName, None, Some(catalog.name()))
    }
  }
}
