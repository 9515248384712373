package io.github.deltalifecycle.sql.catalogmanaged

import io.github.deltalifecycle.core.{
  CommitCoordination,
  MaintenancePolicy,
  ManagingCatalog,
  RatifiedCommit,
  TableLog
}
import io.github.deltalifecycle.shims.CatalogManagedShim
import io.github.deltalifecycle.sql.settings.AdministratorSettings
import io.github.deltalifecycle.sql.unitycatalog.UnityCatalogs
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.catalog.CatalogTable
import org.apache.spark.sql.deltalifecycle.SparkInternals

/**
 * The catalog that manages a table's commits, when a statement reached a catalog-managed table
 * through a catalog delta-spark commits through (Unity Catalog's connector). A table of any other
 * catalog, or named by its path, has none: it is read from `_delta_log` alone and a catalog-managed
 * one is not written.
 */
object ManagingCatalogs {

  /** The catalog of `entry` if it manages the commits of the table whose log is `log`. */
  def of(spark: SparkSession, entry: CatalogTable, log: TableLog): Option[ManagingCatalog] = {
    // Read only where the catalog has a commit path of its own, which most catalogs have not.
    lazy val head = log.latestHead()
    CatalogManagedShim.ratifiedCommits(spark, entry, log.logPath, head.metadata.configuration)
      .filter(_ => CommitCoordination.isCatalogManaged(head.protocol))
      .map { ratified =>
        val catalogName = entry.identifier.catalog.getOrElse(SparkInternals.SessionCatalogName)
        val unity = UnityCatalogs.isConnector(SparkInternals.catalog(spark, catalogName))
        new ConnectorCatalog(
          description =
            if (unity) s"the catalog $catalogName (Unity Catalog)" else s"the catalog $catalogName",
          ratified = ratified,
          answer = () =>
            if (unity) UnityCatalogTables.permittedMaintenance(spark, catalogName, entry)
            else None,
          requiredFeatures = if (unity) UnityCatalogTables.RequiredFeatures else Set.empty,
          setting = () => AdministratorSettings.catalogManagedMaintenance(spark)
        )
      }
  }

  private final class ConnectorCatalog(
      val description: String,
      ratified: Long => Seq[RatifiedCommit],
      answer: () => Option[Set[String]],
      val requiredFeatures: Set[String],
      setting: () => MaintenancePolicy
  ) extends ManagingCatalog {
    def ratifiedFrom(fromVersion: Long): Seq[RatifiedCommit] = ratified(fromVersion)

    // Both asked once, and only by a statement that needs a permission: a statement that only
    // reads fails neither on an unreachable permission API nor on a mistyped setting.
    lazy val permittedMaintenance: Option[Set[String]] = answer()
    lazy val policy: MaintenancePolicy = setting()

    def policySetting: String = AdministratorSettings.CatalogManagedMaintenance
  }
}
