package io.github.deltalifecycle.core

import io.github.deltalifecycle.core.DeltaLifecycleException.{subError, subErrorWithCause}

/**
 * The errors of a table's catalog governing it: a privilege or path it did not grant, maintenance
 * it did not permit, a feature it requires, a commit it refused.
 */
object CatalogErrors {
  private val CatalogPermissionDenied = "DELTA_LIFECYCLE_CATALOG_PERMISSION_DENIED"

  def catalogPrivilegeMissing(
      operation: String,
      table: String,
      catalog: String,
      privilege: String,
      reason: String
  ): DeltaLifecycleException =
    subError(
      CatalogPermissionDenied,
      "PRIVILEGE",
      "operation" -> operation,
      "table" -> table,
      "catalog" -> catalog,
      "privilege" -> privilege,
      "reason" -> reason
    )

  def catalogSchemaPrivilegeMissing(
      operation: String,
      table: String,
      target: String,
      schema: String,
      catalog: String,
      privilege: String
  ): DeltaLifecycleException =
    subError(
      CatalogPermissionDenied,
      "SCHEMA_PRIVILEGE",
      "operation" -> operation,
      "table" -> table,
      "target" -> target,
      "schema" -> schema,
      "catalog" -> catalog,
      "privilege" -> privilege
    )

  def catalogPathDenied(
      operation: String,
      table: String,
      path: String,
      catalog: String,
      pathOperation: String,
      reason: String
  ): DeltaLifecycleException =
    subError(
      CatalogPermissionDenied,
      "PATH",
      "operation" -> operation,
      "table" -> table,
      "path" -> path,
      "catalog" -> catalog,
      "pathOperation" -> pathOperation,
      "reason" -> reason
    )

  private val CatalogManagedTable = "DELTA_LIFECYCLE_CATALOG_MANAGED_TABLE"

  /** See [[ManagingCatalog.permission]]: `why` says who did not permit `operation`. */
  def catalogMaintenanceNotPermitted(
      table: String,
      operation: MaintenanceOperation,
      catalog: String,
      why: String,
      setting: String
  ): DeltaLifecycleException =
    subError(
      CatalogManagedTable,
      "MAINTENANCE_NOT_PERMITTED",
      "table" -> table,
      "action" -> operation.action,
      "permission" -> operation.name,
      "catalog" -> catalog,
      "why" -> why,
      "setting" -> setting
    )

  /** A feature the table's catalog requires of every table it manages. */
  def featureRequiredByCatalog(
      table: String,
      feature: String,
      catalog: String
  ): DeltaLifecycleException =
    subError(
      CatalogManagedTable,
      "REQUIRED_BY_CATALOG",
      "table" -> table,
      "feature" -> feature,
      "catalog" -> catalog
    )

  /** The catalog's commit path refused a commit for a reason of its own (not a conflict). */
  def catalogRefusedCommit(
      table: String,
      catalog: String,
      operation: String,
      reason: String,
      cause: Throwable
  ): DeltaLifecycleException =
    subErrorWithCause(
      cause,
      CatalogManagedTable,
      "CATALOG_REFUSED_COMMIT",
      "table" -> table,
      "catalog" -> catalog,
      "operation" -> operation,
      "reason" -> reason
    )
}
