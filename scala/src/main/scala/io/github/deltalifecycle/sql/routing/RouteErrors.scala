package io.github.deltalifecycle.sql.routing

import io.github.deltalifecycle.core.DeltaLifecycleException
import io.github.deltalifecycle.core.DeltaLifecycleException.{error, subError, withCause}
import io.github.deltalifecycle.core.LifecycleErrorConditions.InvalidArgument

/**
 * The errors of routing statements and streams through redirects: a catalog or function that cannot
 * route, a table its catalog does not route, a stream whose redirect changed under it.
 */
object RouteErrors {

  /** A [[io.github.deltalifecycle.sql.RoutingCatalog]] whose `setting` names no catalog class. */
  def routingCatalogWithoutDelegate(
      catalog: String,
      setting: String,
      value: String
  ): DeltaLifecycleException =
    subError(
      InvalidArgument,
      "ROUTING_CATALOG_WITHOUT_DELEGATE",
      "catalog" -> catalog,
      "setting" -> setting,
      "value" -> value
    )

  /** A routing SQL function `function` called without one constant string `argument`. */
  def routingFunctionArgument(function: String, argument: String): DeltaLifecycleException =
    subError(
      InvalidArgument,
      "ROUTING_FUNCTION_ARGUMENT",
      "function" -> function,
      "argument" -> argument
    )

  def streamRedirectChanged(
      table: String,
      state: String,
      queryId: String,
      batchId: Long,
      location: String,
      newLocation: String,
      cause: Throwable
  ): DeltaLifecycleException =
    withCause(
      cause,
      "DELTA_LIFECYCLE_STREAM_REDIRECT_CHANGED",
      "table" -> table,
      "state" -> state,
      "queryId" -> queryId,
      "batchId" -> batchId,
      "location" -> location,
      "newLocation" -> newLocation
    )

  def streamRedirectWait(
      table: String,
      state: String,
      queryId: String,
      batchId: Long,
      seconds: Long,
      setting: String
  ): DeltaLifecycleException =
    error(
      "DELTA_LIFECYCLE_STREAM_REDIRECT_WAIT",
      "table" -> table,
      "state" -> state,
      "queryId" -> queryId,
      "batchId" -> batchId,
      "seconds" -> seconds,
      "setting" -> setting
    )

  def streamBatchRacedRedirect(
      queryId: String,
      batchId: Long,
      detail: String,
      cause: Throwable
  ): DeltaLifecycleException =
    withCause(
      cause,
      "DELTA_LIFECYCLE_STREAM_BATCH_RACED_REDIRECT",
      "queryId" -> queryId,
      "batchId" -> batchId,
      "detail" -> detail
    )

  def redirectBlocksDeltaSpark(
      statement: String,
      table: String,
      features: Seq[String],
      cause: Throwable
  ): DeltaLifecycleException =
    withCause(
      cause,
      "DELTA_LIFECYCLE_REDIRECT_BLOCKS_DELTA_SPARK",
      "statement" -> statement,
      "table" -> table,
      "features" -> features.mkString(", ")
    )

  def redirectNotRouted(
      path: String,
      state: String,
      catalogClass: String
  ): DeltaLifecycleException =
    error(
      "DELTA_LIFECYCLE_REDIRECT_NOT_ROUTED",
      "path" -> path,
      "state" -> state,
      "catalogClass" -> catalogClass
    )

  private val CatalogNotRouted = "DELTA_LIFECYCLE_CATALOG_NOT_ROUTED"

  /**
   * `operation` on `table` refused: its `catalog` (of class `catalogClass`) is the session catalog
   * and not `lifecycleCatalog`, which follows redirects.
   */
  def sessionCatalogNotRouted(
      operation: String,
      table: String,
      catalogClass: String,
      lifecycleCatalog: String
  ): DeltaLifecycleException =
    subError(
      CatalogNotRouted,
      "SESSION_CATALOG",
      "operation" -> operation,
      "table" -> table,
      "catalog" -> "spark_catalog",
      "catalogClass" -> catalogClass,
      "lifecycleCatalog" -> lifecycleCatalog
    )

  /**
   * `operation` on `table` refused: its `catalog` (of class `catalogClass`) is not wrapped by
   * `routingCatalog`, whose `delegateSetting` would name `catalogClass`.
   */
  def catalogNotRouted(
      operation: String,
      table: String,
      catalog: String,
      catalogClass: String,
      routingCatalog: String,
      delegateSetting: String
  ): DeltaLifecycleException =
    subError(
      CatalogNotRouted,
      "OTHER_CATALOG",
      "operation" -> operation,
      "table" -> table,
      "catalog" -> catalog,
      "catalogClass" -> catalogClass,
      "routingCatalog" -> routingCatalog,
      "delegateSetting" -> delegateSetting
    )
}
