package io.github.deltalifecycle.sql.catalogmanaged

import java.net.{URI, URLEncoder}
import java.net.http.{HttpClient, HttpRequest, HttpResponse}
import java.nio.charset.StandardCharsets
import java.time.Duration

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import io.github.deltalifecycle.sql.RoutingCatalog
import org.apache.spark.internal.Logging
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.catalog.CatalogTable
import org.apache.spark.sql.connector.catalog.CatalogPlugin
import org.apache.spark.sql.delta.util.JsonUtils

/** What Unity Catalog says about the managed tables it holds, as its Delta API says it. */
object UnityCatalogTables extends Logging {

  /** Unity Catalog's Spark connector, the class delta-spark also recognizes it by. */
  val ConnectorClass = "io.unitycatalog.spark.UCSingleCatalog"

  /** Whether `catalog` is Unity Catalog's connector, on its own or wrapped by this project. */
  def isConnector(catalog: CatalogPlugin): Boolean = catalog match {
    case routing: RoutingCatalog => isConnector(routing.delegate)
    case other => other.getClass.getName == ConnectorClass
  }

  /**
   * The features every managed table must keep: the required protocol of Unity Catalog's
   * managed-table contract (its Delta API returns it as `required-protocol` when a table is
   * staged). Unity Catalog OSS 0.6.0 refuses a commit whose protocol lacks one of them.
   */
  val RequiredFeatures: Set[String] =
    Set(
      "catalogManaged",
      "deletionVectors",
      "inCommitTimestamp",
      "v2Checkpoint",
      "vacuumProtocolCheck"
    )

  /** The field of the Delta API's table response that lists the permitted maintenance. */
  val PermissionField = "allowed-maintenance-operations"

  private val ApiPrefix = "/api/2.1/unity-catalog/delta/v1"

  /**
   * The maintenance operations Unity Catalog permits on `table` ([[PermissionField]] of its Delta
   * API's table response), or None when the response names none: Unity Catalog OSS 0.6.0 does not
   * return the field. A catalog that cannot be asked (an older server without the Delta API, an
   * authentication this client cannot use) gives no answer either; the reason is logged.
   */
  def permittedMaintenance(
      spark: SparkSession,
      catalogName: String,
      table: CatalogTable
  ): Option[Set[String]] = {
    val settings = catalogSettings(spark, catalogName)
    val parts = table.identifier.database.toSeq :+ table.identifier.table
    try settings.get("uri").flatMap { uri =>
        val path = s"$ApiPrefix/catalogs/${encode(catalogName)}/schemas/" +
          s"${encode(parts.init.mkString("."))}/tables/${encode(parts.last)}"
        val request = HttpRequest.newBuilder(URI.create(uri.stripSuffix("/") + path))
          .timeout(Duration.ofSeconds(30)).GET()
        token(settings).filter(_.nonEmpty).foreach(t =>
          request.header("Authorization", s"Bearer $t")
        )
        val response = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(30)).build()
          .send(request.build(), HttpResponse.BodyHandlers.ofString())
        if (response.statusCode() != 200) {
          logWarning(s"Unity Catalog answered ${response.statusCode()} for the table " +
            s"${table.identifier}; taking it as no maintenance permission")
          None
        } else permissions(response.body())
      }
    catch {
      case NonFatal(e) =>
        logWarning(
          s"Could not ask Unity Catalog which maintenance it permits on the table " +
            s"${table.identifier}; taking it as no maintenance permission",
          e
        )
        None
    }
  }

  /** [[PermissionField]] of a table response, if it has one. */
  def permissions(responseBody: String): Option[Set[String]] =
    Option(JsonUtils.mapper.readTree(responseBody).get(PermissionField))
      .filter(_.isArray)
      .map(_.elements().asScala.map(_.asText()).toSet)

  private def encode(s: String) = URLEncoder.encode(s, StandardCharsets.UTF_8)

  /** `spark.sql.catalog.<name>.*` without the prefix, as delta-spark collects them. */
  private def catalogSettings(spark: SparkSession, catalogName: String): Map[String, String] = {
    val prefix = s"spark.sql.catalog.$catalogName."
    spark.conf.getAll.collect { case (k, v) if k.startsWith(prefix) => k.stripPrefix(prefix) -> v }
  }

  /**
   * The bearer token the connector would use: Unity Catalog's own token provider (from the client
   * library the connector brings) given the `auth.*` settings, or the legacy `token`.
   */
  private def token(settings: Map[String, String]): Option[String] = {
    val auth =
      settings.collect { case (k, v) if k.startsWith("auth.") => k.stripPrefix("auth.") -> v }
    val config =
      if (auth.nonEmpty) auth
      else settings.get("token").filter(_.nonEmpty).map(t => Map("type" -> "static", "token" -> t))
        .getOrElse(Map.empty)
    if (config.isEmpty) None
    else {
      val provider = Class.forName("io.unitycatalog.client.auth.TokenProvider")
      val instance = provider.getMethod("create", classOf[java.util.Map[_, _]])
        .invoke(null, config.asJava)
      Option(provider.getMethod("accessToken").invoke(instance)).map(_.toString)
    }
  }
}
