package io.github.deltalifecycle.sql.unitycatalog

import java.util.concurrent.ConcurrentHashMap

import com.fasterxml.jackson.databind.JsonNode
import io.github.deltalifecycle.core.TableName
import io.github.deltalifecycle.features.redirect.{
  FoundTable,
  RedirectSpec,
  UnityCatalogAccess,
  UnityCatalogTableInfo
}
import io.github.deltalifecycle.sql.RoutingCatalog
import io.github.deltalifecycle.sql.routing.CatalogTables
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.QueryPlanningTracker
import org.apache.spark.sql.connector.catalog.CatalogPlugin

/**
 * The Unity Catalog catalogs of a session: every catalog it configures with UC's connector, wrapped
 * by [[RoutingCatalog]] or not, each reached through one [[UnityCatalogClient]] with the catalog's
 * own settings. Unity Catalog names its catalogs as the session does (the connector passes the
 * Spark catalog's name to the server), so a table's first name part is its catalog in both.
 */
object UnityCatalogs {

  /** Unity Catalog's Spark connector, the class delta-spark also recognizes it by. */
  val ConnectorClass = "io.unitycatalog.spark.UCSingleCatalog"

  /** Whether `catalog` is Unity Catalog's connector, on its own or wrapped by this project. */
  def isConnector(catalog: CatalogPlugin): Boolean = catalog match {
    case routing: RoutingCatalog => isConnector(routing.delegate)
    case other => other.getClass.getName == ConnectorClass
  }

  /** The client of the session's catalog `catalog`, if that is a Unity Catalog catalog. */
  def client(spark: SparkSession, catalog: String): Option[UnityCatalogClient] = {
    val prefix = s"spark.sql.catalog.$catalog"
    val conf = spark.conf
    val isConnector = conf.getOption(prefix).exists {
      case ConnectorClass => true
      case c if c == classOf[RoutingCatalog].getName =>
        conf.getOption(s"$prefix.${CatalogTables.DelegateOption}").contains(ConnectorClass)
      case _ => false
    }
    if (!isConnector) None
    else {
      val settings = conf.getAll.collect {
        case (k, v) if k.startsWith(s"$prefix.") => k.stripPrefix(s"$prefix.") -> v
      } - CatalogTables.DelegateOption
      settings.get("uri").map(_ =>
        clients.computeIfAbsent((catalog, settings), k => new UnityCatalogClient(k._1, k._2))
      )
    }
  }

  /** The catalogs of the session that are Unity Catalog's, by name. */
  def catalogs(spark: SparkSession): Seq[String] =
    spark.conf.getAll.keys.toSeq.collect {
      case k
          if k.startsWith("spark.sql.catalog.") && !k.stripPrefix("spark.sql.catalog.")
            .contains(".") => k.stripPrefix("spark.sql.catalog.")
    }.filter(client(spark, _).isDefined).sorted

  /** Routing's and SET REDIRECT's access to Unity Catalog in `spark`. */
  def access(spark: SparkSession): UnityCatalogAccess = new UnityCatalogAccess {
    def find(spec: RedirectSpec.UnityCatalogTable): Option[FoundTable] =
      spec.tableId.flatMap(id => perQuery(id)(findById(spark, spec, id)))

    def describe(name: String): Option[UnityCatalogTableInfo] = {
      val parts = TableName.parts(name)
      client(spark, parts.head).flatMap { uc =>
        uc.table(parts.mkString(".")).flatMap(info(_, uc.metastoreId))
      }
    }
  }

  /** A table's answer as this project uses it. */
  def info(table: JsonNode, metastoreId: Option[String]): Option[UnityCatalogTableInfo] = for {
    id <- Option(table.get("table_id")).map(_.asText)
    location <- Option(table.get("storage_location")).map(_.asText)
  } yield UnityCatalogTableInfo(id, metastoreId, new Path(location))

  /** `catalog.schema.table` of a table's answer, as SQL text. */
  def nameOf(table: JsonNode): String = TableName.sql(
    Seq("catalog_name", "schema_name", "name").map(f => table.get(f).asText)
  )

  /**
   * The table with id `id`: by the name the redirect recorded when the table still has it; else by
   * its id among the tables of that schema (Unity Catalog renames tables within their schema); else
   * its location only, which the server gives for an id. Only servers whose metastore is the one
   * the redirect recorded are asked.
   */
  private def findById(
      spark: SparkSession,
      spec: RedirectSpec.UnityCatalogTable,
      id: String
  ): Option[FoundTable] = {
    val named = spec.name.map(TableName.parts).filter(_.size == 3)
    val candidates = named.map(p => Seq(p.head)).getOrElse(catalogs(spark))
    candidates.iterator.flatMap(c => client(spark, c)).filter { uc =>
      spec.metastoreId.forall(m => uc.metastoreId.forall(_ == m))
    }.map { uc =>
      def found(table: JsonNode) =
        FoundTable(Some(nameOf(table)), new Path(table.get("storage_location").asText))
      def hasId(table: JsonNode) = Option(table.get("table_id")).exists(_.asText == id)
      named.flatMap(p => uc.table(p.mkString(".")).filter(hasId).map(found))
        .orElse(named.flatMap(p => uc.tables(p.head, p(1)).find(hasId).map(found)))
        .orElse(uc.locationOf(id).map(l => FoundTable(None, new Path(l))))
    }.collectFirst { case Some(f) => f }
  }

  private val clients =
    new ConcurrentHashMap[(String, Map[String, String]), UnityCatalogClient]()

  private val cachePerQuery =
    new java.util.WeakHashMap[QueryPlanningTracker, ConcurrentHashMap[String, Option[FoundTable]]]()

  /** `lookup`, once per query being planned (a query that names a table twice asks once). */
  private def perQuery(id: String)(lookup: => Option[FoundTable]): Option[FoundTable] =
    QueryPlanningTracker.get match {
      case Some(tracker) =>
        val cache = cachePerQuery.synchronized(
          cachePerQuery.computeIfAbsent(tracker, _ => new ConcurrentHashMap())
        )
        Option(cache.get(id)).getOrElse {
          val found = lookup
          cache.put(id, found)
          found
        }
      case None => lookup
    }
}
