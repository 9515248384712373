package io.github.deltalifecycle.core

import io.github.deltalifecycle.sql.catalogmanaged.UnityCatalogTables
import io.github.deltalifecycle.sql.settings.{AdministratorSettings, SettingsGuard}
import org.scalatest.funsuite.AnyFunSuite

/**
 * Who permits maintenance of a catalog-managed table: the catalog's answer where it gives one (a
 * Unity Catalog table response's `allowed-maintenance-operations`), the administrator's setting
 * where it does not, and the administrator's `refuse` over both. (Against a real Unity Catalog
 * server, which gives no answer: tests/unitycatalog/test_catalog_managed.py.)
 */
class ManagingCatalogSuite extends AnyFunSuite {
  import MaintenanceOperation._
  import MaintenancePolicy._

  private def catalog(answer: Option[Set[String]], setting: MaintenancePolicy) =
    new ManagingCatalog {
      def description = "the catalog lake (Unity Catalog)"
      def ratifiedFrom(fromVersion: Long): Seq[RatifiedCommit] = Nil
      def permittedMaintenance: Option[Set[String]] = answer
      def requiredFeatures: Set[String] = Set.empty
      def policy: MaintenancePolicy = setting
      def policySetting: String = AdministratorSettings.CatalogManagedMaintenance
    }

  private val everything = Some(Set("DATA_REORGANIZATION", "DATA_CLEANUP", "METADATA_CLEANUP"))

  test("where the catalog answers, its answer decides, unless the administrator refuses") {
    for (policy <- Seq(Catalog, Allow)) {
      assert(catalog(everything, policy).permission(DataReorganization).isRight)
      val partial = catalog(Some(Set("DATA_CLEANUP")), policy)
      assert(
        partial.permission(MetadataCleanup).left.exists(_.contains("it permits: DATA_CLEANUP"))
      )
      assert(catalog(Some(Set.empty), policy).permission(DataReorganization).left
        .exists(_.contains("it permits: none")))
    }
    assert(catalog(everything, Refuse).permission(DataReorganization).left
      .exists(_.contains("is 'refuse'")))
  }

  test("where the catalog gives no answer, the administrator's setting decides") {
    assert(catalog(None, Allow).permission(MetadataCleanup) ===
      Right(s"the administrator's setting ${AdministratorSettings.CatalogManagedMaintenance} " +
        "is 'allow'"))
    for (policy <- Seq(Catalog, Refuse))
      assert(catalog(None, policy).permission(DataReorganization).isLeft, policy)
  }

  test("the refusal is typed, names the operation, the catalog's answer and the setting") {
    val e = intercept[DeltaLifecycleException] {
      catalog(None, Catalog).requirePermission("lake.s.t", MetadataCleanup)
    }
    assert(e.condition === "DELTA_LIFECYCLE_CATALOG_MANAGED_TABLE")
    assert(e.getMessage.contains("cannot delete its expired log files"))
    assert(e.getMessage.contains("(METADATA_CLEANUP)"))
    assert(e.getMessage.contains("gives no maintenance permission for the table"))
    assert(e.getMessage.contains(s"${AdministratorSettings.CatalogManagedMaintenance}=allow"))
  }

  test("the policy's values, and the default that follows the RFC") {
    assert(MaintenancePolicy.parse(" Allow ") === Some(Allow))
    assert(MaintenancePolicy.parse("yes") === None)
    assert(MaintenancePolicy.Default === Catalog)
  }

  test("Unity Catalog's answer is the table response's allowed-maintenance-operations") {
    assert(UnityCatalogTables.permissions("""{"metadata": {"table-type": "MANAGED"}}""") === None)
    assert(UnityCatalogTables.permissions(
      """{"metadata": {}, "allowed-maintenance-operations": ["DATA_REORGANIZATION"]}"""
    ) === Some(Set("DATA_REORGANIZATION")))
    assert(UnityCatalogTables.permissions("""{"allowed-maintenance-operations": []}""") ===
      Some(Set.empty))
  }

  test("the policy is the administrator's: a session's SQL SET of it is refused") {
    val e = intercept[DeltaLifecycleException] {
      SettingsGuard.checkSettable(AdministratorSettings.CatalogManagedMaintenance)
    }
    assert(e.condition === "DELTA_LIFECYCLE_ADMINISTRATOR_SETTING")
  }
}
