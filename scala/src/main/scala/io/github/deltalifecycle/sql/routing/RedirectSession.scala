package io.github.deltalifecycle.sql.routing

import io.github.deltalifecycle.core.TableName
import io.github.deltalifecycle.features.redirect.{Access, RoutingContext, StorageAccess}
import io.github.deltalifecycle.sql.resolution.{LifecycleTableRef, TableStorage}
import io.github.deltalifecycle.sql.settings.AdministratorSettings
import io.github.deltalifecycle.sql.unitycatalog.{PathOperation, UnityCatalogs}
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.SparkSession

/** The session settings redirection reads, and the routing context built from them. */
object RedirectSession {

  /** The context of routing an access the session makes: storage opens as the session's. */
  def context(spark: SparkSession): RoutingContext = context(spark, TableStorage.session(spark))

  /**
   * The context of `operation`, a statement on `table`: its storage opens as [[TableStorage]] opens
   * the table's, and a location that is no table's with what the table's catalog vends for it for
   * `elsewhere`.
   */
  def context(
      spark: SparkSession,
      table: LifecycleTableRef,
      elsewhere: PathOperation,
      operation: String
  ): RoutingContext = context(spark, TableStorage.access(spark, table, elsewhere, operation))

  /** The context of routing `access` to `table`, a statement's or one a catalog loaded. */
  def context(spark: SparkSession, table: LifecycleTableRef, access: Access): RoutingContext = {
    val elsewhere = if (access == Access.Read) PathOperation.Read else PathOperation.ReadWrite
    context(spark, table, elsewhere, "route an access to")
  }

  private def context(spark: SparkSession, storage: StorageAccess): RoutingContext = RoutingContext(
    storage = storage,
    appName = appName(spark),
    allowedPrefixes = allowedPrefixes(spark),
    allowedPrefixesSetting = AdministratorSettings.AllowedLocationPrefixes,
    catalogTableLocation = name => catalogLocation(spark, name),
    unityCatalog = UnityCatalogs.access(spark)
  )

  /**
   * The application name NoRedirectRules are matched against: the one the application was started
   * with, which a session cannot change (a rule exempts an application, not whoever claims its
   * name).
   */
  def appName(spark: SparkSession): String = spark.sparkContext.appName

  /** The administrator's allow-list (docs/settings.md): no session can widen it. */
  private def allowedPrefixes(spark: SparkSession): Seq[String] =
    AdministratorSettings.value(spark, AdministratorSettings.AllowedLocationPrefixes).toSeq
      .flatMap(_.split(",")).map(_.trim).filter(_.nonEmpty)

  /**
   * The location of the catalog table `name` (SQL text such as db.t or `` `my.db`.t ``), if a
   * catalog has it as a Delta table; a name that names none leaves routing to the location the
   * redirect recorded. Any other failure is the router's error policy's.
   */
  private def catalogLocation(spark: SparkSession, name: String): Option[Path] =
    Router.tableNamed(spark, TableName.parts(name)).map(_.path)
}
