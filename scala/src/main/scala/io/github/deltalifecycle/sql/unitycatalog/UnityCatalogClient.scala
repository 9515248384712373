package io.github.deltalifecycle.sql.unitycatalog

import java.net.{URI, URLEncoder}
import java.net.http.{HttpClient, HttpRequest, HttpResponse}
import java.nio.charset.StandardCharsets
import java.time.Duration

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.JsonNode
import io.unitycatalog.client.ApiException
import io.unitycatalog.client.auth.TokenProvider
import io.unitycatalog.hadoop.UCCredentialHadoopConfs
import org.apache.hadoop.conf.Configuration
import org.apache.spark.sql.delta.util.JsonUtils

/**
 * The one client of a Unity Catalog server, as a catalog of the session reaches it through UC's
 * connector: its `uri`, and its authentication as the connector reads it (`auth.*`, or the legacy
 * `token`). It reads what routing, SET REDIRECT and the maintenance of catalog-managed tables ask
 * of the catalog, and it asks the catalog for storage credentials the way the connector does
 * (through UC's own `unitycatalog-hadoop`), so a statement opens storage with what the catalog
 * vends and is refused what the catalog refuses.
 *
 * A missing object is None; a refusal of the catalog is [[UnityCatalogRefusal]]; any other failure
 * is an exception.
 */
final class UnityCatalogClient(val catalogName: String, settings: Map[String, String]) {
  import UnityCatalogClient._

  val uri: String = settings.getOrElse(
    "uri",
    throw new IllegalArgumentException(s"the catalog $catalogName has no uri setting")
  )
  private val base = uri.stripSuffix("/") + "/api/2.1/unity-catalog"

  /** The connector's authentication settings, as its `AuthConfigUtils` builds them. */
  private lazy val authConfigs: Map[String, String] = {
    val auth = settings.collect {
      case (k, v) if k.startsWith("auth.") && k.length > "auth.".length =>
        k.stripPrefix("auth.").trim -> v
    }
    settings.get("token").fold(auth)(t => auth ++ Map("type" -> "static", "token" -> t))
  }

  private lazy val tokenProvider: TokenProvider = TokenProvider.create(authConfigs.asJava)

  private def bearer: Option[String] =
    if (authConfigs.isEmpty) None else Option(tokenProvider.accessToken()).filter(_.nonEmpty)

  // ---- catalog objects ---------------------------------------------------------------------

  /** The table `fullName` (`catalog.schema.table`, unquoted parts), if it exists. */
  def table(fullName: String): Option[JsonNode] = get(s"$base/tables/${segment(fullName)}")

  /** The tables of `catalog`.`schema`, page after page. */
  def tables(catalog: String, schema: String): Iterator[JsonNode] = {
    def page(token: Option[String]): Option[JsonNode] = get(
      s"$base/tables?catalog_name=${query(catalog)}&schema_name=${query(schema)}" +
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
  lazy val metastoreId: Option[String] =
    get(s"$base/metastore_summary").flatMap(text(_, "metastore_id"))

  /** Where the table with id `tableId` keeps its files, if the server knows the id. */
  def locationOf(tableId: String): Option[String] = {
    val body = JsonUtils.mapper.createObjectNode()
    body.put("table_id", tableId)
    body.put("operation", "READ")
    post(s"$base/temporary-table-credentials", body.toString).flatMap(text(_, "url"))
  }

  /**
   * The storage root new tables of `catalog`.`schema` get: the schema's own, else its catalog's
   * with the schema's name under it.
   */
  def storageRoot(catalog: String, schema: String): Option[String] =
    get(s"$base/schemas/${segment(s"$catalog.$schema")}").flatMap(text(_, "storage_root"))
      .orElse(get(s"$base/catalogs/${segment(catalog)}").flatMap(text(_, "storage_root"))
        .map(_.stripSuffix("/") + "/" + schema))

  /** The table `schema`.`table` of this catalog as the server's Delta API answers for it. */
  def deltaTable(schema: String, table: String): Option[JsonNode] = get(
    s"${uri.stripSuffix("/")}$DeltaApi/catalogs/${segment(catalogName)}/schemas/" +
      s"${segment(schema)}/tables/${segment(table)}"
  )

  /**
   * Whether this principal may create a table in `schema` of this catalog, as the server's rule for
   * a new table reads (USE CATALOG on the catalog, or owning it; and owning the schema, or USE
   * SCHEMA and CREATE TABLE on it, which a grant on the catalog gives too), from the principal's
   * own grants the server lists. None where the server names no principal (authorization off) or
   * does not list them: the catalog then decides when the table is created.
   */
  def mayCreateTableIn(schema: String): Option[Boolean] =
    scala.util.Try {
      val me = get(s"${uri.stripSuffix("/")}$ControlApi/scim2/Me").flatMap(email)
      me.map { principal =>
        def held(kind: String, name: String): Set[String] =
          get(s"$base/permissions/$kind/${segment(name)}").toSeq.flatMap { answer =>
            Option(answer.get("privilege_assignments")).toSeq.flatMap(_.elements().asScala)
          }.filter(a => Option(a.get("principal")).exists(_.asText == principal))
            .flatMap(a => Option(a.get("privileges")).toSeq.flatMap(_.elements().asScala))
            .map(_.asText.trim.toUpperCase.replace(' ', '_')).toSet
        val onCatalog = held("catalog", catalogName)
        val onSchema = held("schema", s"$catalogName.$schema") ++ (onCatalog - "OWNER")
        (onCatalog("OWNER") || onCatalog("USE_CATALOG")) &&
        (onSchema("OWNER") || (onSchema("USE_SCHEMA") && onSchema("CREATE_TABLE")))
      }
    }.toOption.flatten

  private def email(user: JsonNode): Option[String] =
    Option(user.get("emails")).flatMap(_.elements().asScala.toSeq.headOption)
      .flatMap(e => Option(e.get("value"))).map(_.asText)
      .orElse(text(user, "userName")).filter(_.nonEmpty)

  // ---- storage credentials -----------------------------------------------------------------

  /**
   * The Hadoop settings that open the table `tableId` (at `location`) for reading, or for writing
   * too, with the credentials the catalog vends for it, as UC's connector builds them. The catalog
   * refuses a principal without the privilege ([[UnityCatalogRefusal]]).
   */
  def tableCredentials(
      tableId: String,
      location: String,
      write: Boolean,
      sessionConf: Configuration
  ): Map[String, String] = {
    val operation =
      if (write) UCCredentialHadoopConfs.TableOperation.READ_WRITE
      else UCCredentialHadoopConfs.TableOperation.READ
    vended(location, sessionConf)(_.buildForTable(tableId, operation))
  }

  /**
   * The Hadoop settings that open `path`, which no table of the catalog holds, for `operation`,
   * with the credentials the catalog vends for that path.
   */
  def pathCredentials(
      path: String,
      operation: PathOperation,
      sessionConf: Configuration
  ): Map[String, String] = vended(path, sessionConf)(
    _.buildForPath(path, UCCredentialHadoopConfs.PathOperation.valueOf(operation.name))
  )

  // UC's builder reads the session's configuration for the file systems it wraps.
  private def vended(location: String, sessionConf: Configuration)(
      build: UCCredentialHadoopConfs.Builder => java.util.Map[String, String]
  ): Map[String, String] = {
    val scheme = Option(new URI(location).getScheme).getOrElse("file")
    val builder = UCCredentialHadoopConfs.builder(uri, scheme).tokenProvider(tokenProvider)
      .enableCredentialRenewal(flag(RenewCredentialSetting, default = true))
      .enableCredentialScopedFs(flag(CredScopedFsSetting, default = true))
      .hadoopConf(sessionConf)
    try build(builder).asScala.toMap
    catch {
      case e: ApiException if e.getCode == 401 || e.getCode == 403 =>
        throw new UnityCatalogRefusal(e.getCode, Option(e.getResponseBody).getOrElse(""), e)
    }
  }

  private def flag(key: String, default: Boolean): Boolean =
    settings.get(key).map(_.trim.toBoolean).getOrElse(default)

  // ---- HTTP --------------------------------------------------------------------------------

  private def get(url: String): Option[JsonNode] = send(HttpRequest.newBuilder().GET(), url)

  private def post(url: String, body: String): Option[JsonNode] = send(
    HttpRequest.newBuilder().POST(HttpRequest.BodyPublishers.ofString(body))
      .header("Content-Type", "application/json"),
    url
  )

  private def send(request: HttpRequest.Builder, url: String): Option[JsonNode] = {
    bearer.foreach(t => request.header("Authorization", s"Bearer $t"))
    val response = httpClient.send(
      request.uri(URI.create(url)).timeout(Timeout).build(),
      HttpResponse.BodyHandlers.ofString()
    )
    response.statusCode match {
      case 200 => Some(JsonUtils.mapper.readTree(response.body))
      case 404 => None
      case status @ (401 | 403) => throw new UnityCatalogRefusal(status, response.body, null)
      case status => throw new IllegalStateException(
          s"Unity Catalog at $uri answered ${url.stripPrefix(uri)} with HTTP $status: " +
            response.body.take(500)
        )
    }
  }
}

object UnityCatalogClient {
  private val Timeout = Duration.ofSeconds(30)
  private lazy val httpClient =
    HttpClient.newBuilder().connectTimeout(Timeout).followRedirects(HttpClient.Redirect.NORMAL)
      .build()

  /** Unity Catalog's control API: its users (SCIM) and tokens. */
  private val ControlApi = "/api/1.0/unity-control"

  /** Unity Catalog's Delta REST API, where the server answers for its managed tables. */
  private val DeltaApi = "/api/2.1/unity-catalog/delta/v1"

  /** The connector's settings for credential renewal and its credential-scoped file system. */
  private val RenewCredentialSetting = "renewCredential.enabled"
  private val CredScopedFsSetting = "credScopedFs.enabled"

  private def segment(s: String): String = query(s).replace("+", "%20")
  private def query(s: String): String = URLEncoder.encode(s, StandardCharsets.UTF_8)

  private def text(node: JsonNode, field: String): Option[String] =
    Option(node.get(field)).filter(_.isTextual).map(_.asText)
}

/**
 * What a path credential is asked for, by the name of Unity Catalog's path operation. Only the
 * name: code that runs without Unity Catalog's client on the classpath names these too.
 */
sealed abstract class PathOperation(val name: String)
object PathOperation {
  case object Read extends PathOperation("PATH_READ")
  case object ReadWrite extends PathOperation("PATH_READ_WRITE")
  case object CreateTable extends PathOperation("PATH_CREATE_TABLE")
}

/** Unity Catalog refused a request of its principal (HTTP 401 or 403), with its reason. */
final class UnityCatalogRefusal(val status: Int, val body: String, cause: Throwable)
    extends RuntimeException(s"Unity Catalog refused the request (HTTP $status): $body", cause) {

  /** The server's own message, where its answer has one. */
  def reason: String = scala.util.Try(JsonUtils.mapper.readTree(body).get("message").asText)
    .toOption.filter(_.nonEmpty).getOrElse(body.take(300))
}
