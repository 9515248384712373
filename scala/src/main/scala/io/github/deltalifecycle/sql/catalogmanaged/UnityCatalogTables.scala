package io.github.deltalifecycle.sql.catalogmanaged

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import io.github.deltalifecycle.sql.unitycatalog.UnityCatalogs
import org.apache.spark.internal.Logging
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.catalog.CatalogTable
import org.apache.spark.sql.delta.util.JsonUtils

/** What Unity Catalog says about the managed tables it holds, as its Delta API says it. */
object UnityCatalogTables extends Logging {

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
    val schema = table.identifier.database.getOrElse("")
    try UnityCatalogs.client(spark, catalogName).flatMap { uc =>
        val answer = uc.deltaTable(schema, table.identifier.table)
        if (answer.isEmpty)
          logWarning(s"Unity Catalog has no Delta API answer for the table ${table.identifier}; " +
            "taking it as no maintenance permission")
        answer.flatMap(a => permissions(a.toString))
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
}
