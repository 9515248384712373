package io.github.deltalifecycle.sql.routing

import java.net.URI
import java.net.URLEncoder
import java.net.http.{HttpClient, HttpRequest, HttpResponse}
import java.nio.charset.StandardCharsets
import java.time.Duration
import java.util.concurrent.ConcurrentHashMap

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.JsonNode
import io.github.deltalifecycle.core.TableName
import io.github.deltalifecycle.features.redirect.{
  FoundTable,
  RedirectSpec,
  UnityCatalogAccess,
  UnityCatalogTableInfo
}
import io.github.deltalifecycle.sql.RoutingCatalog
import io.github.deltalifecycle.sql.catalogmanaged.UnityCatalogTables
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.QueryPlanningTracker
import org.apache.spark.sql.delta.util.JsonUtils

/**
 * A Unity Catalog server's REST API (`/api/2.1/unity-catalog`), as a catalog of the session reaches
 * it: the `uri` and `token` options of UC's connector. Only what redirection needs: a table by
 * name, the tables of a schema, the server's metastore id, a table's location by its id (the
 * temporary-credentials call, the one call of the API that takes a table id), and storage roots. A
 * missing object is None; any other failure is an exception.
 */
final class UnityCatalogRest(uri: String, token: Option[String]) {
  private val base = uri.stripSuffix("/") + "/api/2.1/unity-catalog"

  /** The table `fullName` (`catalog.schema.table`, unquoted parts), if it exists. */
  def table(fullName: String): Option[JsonNode] = get(s"/tables/${segment(fullName)}")

  /** The tables of `catalog`.`schema`, page after page. */
  def tables(catalog: String, schema: String): Iterator[JsonNode] = {
    def page(token: Option[String]): Option[JsonNode] = get(
      s"/tables?catalog_name=${query(catalog)}&schema_name=${query(schema)}" +
        token.map(t => s"&page_token=${query(t)}").getOrElse("")
    )
    def next(answer: JsonNode): Option[String] = text(answer, "next_page_token").filter(_.nonEmpty)
    Iterator.iterate(page(None))(_.flatMap(next).flatMap(t => page(Some(t))))
      .takeWhile(_.isDefined).flatMap { answer =>
        answer.flatMap(a => Option(a.get("tables"))).map(
          _.elements().asScala
        ).getOrElse(Iterator.empty)
      }
  }

  /** The id of the metastore this server holds. */
  lazy val metastoreId: Option[String] = get("/metastore_summary").flatMap(text(_, "metastore_id"))

  /** Where the table with id `tableId` keeps its files, if the server knows the id. */
  def locationOf(tableId: String): Option[String] = {
    val body = JsonUtils.mapper.createObjectNode()
    body.put("table_id", tableId)
    body.put("operation", "READ")
    post("/temporary-table-credentials", body.toString).flatMap(text(_, "url"))
  }

  /**
   * The storage root new tables of `catalog`.`schema` get: the schema's own, else its catalog's
   * with the schema's name under it.
   */
  def storageRoot(catalog: String, schema: String): Option[String] =
    get(s"/schemas/${segment(s"$catalog.$schema")}").flatMap(text(_, "storage_root"))
      .orElse(get(s"/catalogs/${segment(catalog)}").flatMap(text(_, "storage_root"))
        .map(_.stripSuffix("/") + "/" + schema))

  private def get(path: String): Option[JsonNode] = send(HttpRequest.newBuilder().GET(), path)

  private def post(path: String, body: String): Option[JsonNode] = send(
    HttpRequest.newBuilder().POST(HttpRequest.BodyPublishers.ofString(body))
      .header("Content-Type", "application/json"),
    path
  )

  private def send(request: HttpRequest.Builder, path: String): Option[JsonNode] = {
    token.filter(_.nonEmpty).foreach(t => request.header("Authorization", s"Bearer $t"))
    val response = UnityCatalogRest.client.send(
      request.uri(URI.create(base + path)).timeout(UnityCatalogRest.Timeout).build(),
      HttpResponse.BodyHandlers.ofString()
    )
    response.statusCode match {
      case 200 => Some(JsonUtils.mapper.readTree(response.body))
      case 404 => None
      case status => throw new IllegalStateException(
          s"Unity Catalog at $uri answered $path with HTTP $status: ${response.body.take(500)}"
        )
    }
  }

  private def segment(s: String): String = query(s).replace("+", "%20")
  private def query(s: String): String = URLEncoder.encode(s, StandardCharsets.UTF_8)

  private def text(node: JsonNode, field: String): Option[String] =
    Option(node.get(field)).filter(_.isTextual).map(_.asText)
}

object UnityCatalogRest {
  private val Timeout = Duration.ofSeconds(30)
  private lazy val client =
    HttpClient.newBuilder().connectTimeout(Timeout).followRedirects(HttpClient.Redirect.NORMAL)
      .build()

  /** A table's answer as this project uses it. */
  def info(table: JsonNode, metastoreId: Option[String]): Option[UnityCatalogTableInfo] = for {
    id <- Option(table.get("table_id")).map(_.asText)
    location <- Option(table.get("storage_location")).map(_.asText)
  } yield UnityCatalogTableInfo(id, metastoreId, new Path(location))

  /** `catalog.schema.table` of a table's answer, as SQL text. */
  def nameOf(table: JsonNode): String = TableName.sql(
    Seq("catalog_name", "schema_name", "name").map(f => table.get(f).asText)
  )
}

/**
 * The Unity Catalog servers of a session: every catalog it configures with UC's connector, wrapped
 * by [[RoutingCatalog]] or not. Unity Catalog names its catalogs as the session does (the connector
 * passes the Spark catalog's name to the server), so a table's first name part is its catalog in
 * both.
 */
object UnityCatalogs {
  val ConnectorClass: String = UnityCatalogTables.ConnectorClass

  /** The server behind the session's catalog `catalog`, if that is a Unity Catalog catalog. */
  def server(spark: SparkSession, catalog: String): Option[UnityCatalogRest] = {
    val key = s"spark.sql.catalog.$catalog"
    val conf = spark.conf
    val isConnector = conf.getOption(key).exists {
      case ConnectorClass => true
      case c if c == classOf[RoutingCatalog].getName =>
        conf.getOption(s"$key.${RoutingCatalog.DelegateOption}").contains(ConnectorClass)
      case _ => false
    }
    if (!isConnector) None
    else conf.getOption(s"$key.uri").map { uri =>
      servers.computeIfAbsent(
        (uri, conf.getOption(s"$key.token")),
        k => new UnityCatalogRest(k._1, k._2)
      )
    }
  }

  /** The catalogs of the session that are Unity Catalog's, by name. */
  def catalogs(spark: SparkSession): Seq[String] =
    spark.conf.getAll.keys.toSeq.collect {
      case k
          if k.startsWith("spark.sql.catalog.") && !k.stripPrefix("spark.sql.catalog.")
            .contains(".") => k.stripPrefix("spark.sql.catalog.")
    }.filter(server(spark, _).isDefined).sorted

  /** Routing's and SET REDIRECT's access to Unity Catalog in `spark`. */
  def access(spark: SparkSession): UnityCatalogAccess = new UnityCatalogAccess {
    def find(spec: RedirectSpec.UnityCatalogTable): Option[FoundTable] =
      spec.tableId.flatMap(id => perQuery(id)(findById(spark, spec, id)))

    def describe(name: String): Option[UnityCatalogTableInfo] = {
      val parts = TableName.parts(name)
      server(spark, parts.head).flatMap { uc =>
        uc.table(parts.mkString(".")).flatMap(UnityCatalogRest.info(_, uc.metastoreId))
      }
    }
  }

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
    candidates.iterator.flatMap(c => server(spark, c)).filter { uc =>
      spec.metastoreId.forall(m => uc.metastoreId.forall(_ == m))
    }.map { uc =>
      def found(table: JsonNode) =
        FoundTable(
          Some(UnityCatalogRest.nameOf(table)),
          new Path(table.get("storage_location").asText)
        )
      def hasId(table: JsonNode) = Option(table.get("table_id")).exists(_.asText == id)
      named.flatMap(p => uc.table(p.mkString(".")).filter(hasId).map(found))
        .orElse(named.flatMap(p => uc.tables(p.head, p(1)).find(hasId).map(found)))
        .orElse(uc.locationOf(id).map(l => FoundTable(None, new Path(l))))
    }.collectFirst { case Some(f) => f }
  }

  private val servers = new ConcurrentHashMap[(String, Option[String]), UnityCatalogRest]()

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
