package io.github.deltalifecycle.sql.settings

import io.github.deltalifecycle.core.{ErrorConditions, MaintenancePolicy}
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.deltalifecycle.SparkInternals

/**
 * The settings that are an administrator's policy, not a user's preference (docs/settings.md). On a
 * shared server (Spark Connect, Thrift, a notebook cluster) the administrator sets them once at
 * start-up and users only send SQL, so they are read from the configuration the application was
 * started with, never from a session. They are also registered as static SQL configurations, so
 * `spark.conf.set` and `RESET` of one fail in Spark itself, and SQL `SET` of one fails with
 * DELTA_LIFECYCLE_ADMINISTRATOR_SETTING ([[SettingsGuard]]).
 */
object AdministratorSettings {

  /** Comma-separated location prefixes a redirect may point to; unset or empty allows any. */
  val AllowedLocationPrefixes = "spark.deltaLifecycle.redirect.allowedLocationPrefixes"

  /**
   * Who permits maintenance of catalog-managed tables that delta-spark itself does not run there
   * (rewriting data files, deleting log files): `catalog` (the default: what the table's catalog
   * permits), `allow` (also where the catalog gives no answer) or `refuse`
   * ([[io.github.deltalifecycle.core.MaintenancePolicy]]).
   */
  val CatalogManagedMaintenance = "spark.deltaLifecycle.catalogManaged.maintenance"

  private val Docs: Seq[(String, String)] = Seq(
    AllowedLocationPrefixes ->
      ("delta-lifecycle: comma-separated location prefixes a table redirect may point to " +
        "(empty: any). Set by the administrator when the application starts; a session " +
        "cannot change it."),
    CatalogManagedMaintenance ->
      ("delta-lifecycle: who permits rewriting data files and deleting log files of " +
        "catalog-managed tables: catalog (default: what the table's catalog permits), allow " +
        "(also where the catalog gives no answer) or refuse. Set by the administrator when " +
        "the application starts; a session cannot change it.")
  )

  val Keys: Seq[String] = Docs.map(_._1)

  /** Makes every key static in this JVM; the extension calls it before any session runs SQL. */
  def register(): Unit = Docs.foreach { case (key, doc) =>
    SparkInternals.registerStaticSetting(key, doc)
  }

  /** The administrator's value of `key`: from the configuration the application started with. */
  def value(spark: SparkSession, key: String): Option[String] =
    SparkInternals.startupSetting(spark, key)

  /** The administrator's [[CatalogManagedMaintenance]], or the default when it is not set. */
  def catalogManagedMaintenance(spark: SparkSession): MaintenancePolicy =
    value(spark, CatalogManagedMaintenance).filter(_.trim.nonEmpty).fold(MaintenancePolicy.Default)(
      v =>
        MaintenancePolicy.parse(v).getOrElse(
          throw ErrorConditions.InvalidArgument.unknownSettingValue(
            setting = CatalogManagedMaintenance,
            value = v,
            values = MaintenancePolicy.all.map(_.name)
          )
        )
    )
}
