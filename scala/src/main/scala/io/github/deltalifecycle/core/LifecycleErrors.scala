package io.github.deltalifecycle.core

import org.apache.spark.sql.delta.DeltaConfigs

/**
 * One constructor per failure, so messages stay consistent and say what to do. Each names its
 * condition (and sub-condition) in `error/delta-lifecycle-error-conditions.json`, which holds every
 * message's wording, the advice included; a constructor passes values only (ErrorConditionsSuite
 * keeps the two in step). Names that belong to the layers above (settings, classes) are passed in.
 */
object LifecycleErrors {
  private val InvalidArgument = "DELTA_LIFECYCLE_INVALID_ARGUMENT"
  private val InvalidRedirect = "DELTA_LIFECYCLE_INVALID_REDIRECT"
  private val RedirectWriteRefused = "DELTA_LIFECYCLE_REDIRECT_WRITE_REFUSED"
  private val UnsupportedProtocol = "DELTA_LIFECYCLE_UNSUPPORTED_PROTOCOL"
  private val FeatureInUse = "DELTA_LIFECYCLE_FEATURE_IN_USE"
  private val RedirectStateRefused = "DELTA_LIFECYCLE_REDIRECT_STATE"

  private def error(
      condition: String,
      parameters: (String, Any)*
  ): DeltaLifecycleException =
    new DeltaLifecycleException(condition, strings(parameters))

  private def withCause(
      cause: Throwable,
      condition: String,
      parameters: (String, Any)*
  ): DeltaLifecycleException =
    new DeltaLifecycleException(condition, strings(parameters), Some(cause))

  /** An error of `condition`'s sub-condition `subCondition`. */
  private def subError(
      condition: String,
      subCondition: String,
      parameters: (String, Any)*
  ): DeltaLifecycleException =
    new DeltaLifecycleException(condition, strings(parameters), None, Some(subCondition))

  private def strings(parameters: Seq[(String, Any)]): Map[String, String] =
    parameters.map { case (k, v) => k -> v.toString }.toMap

  def notADeltaTable(path: String, why: String): DeltaLifecycleException =
    error("DELTA_LIFECYCLE_NOT_A_DELTA_TABLE", "path" -> path, "reason" -> why)

  /** The storage at `path` refused access (it exists, or may): never "not a Delta table". */
  def storageAccessDenied(path: String, cause: Throwable): DeltaLifecycleException =
    withCause(
      cause,
      StorageAccessDenied,
      "path" -> path,
      "reason" -> Option(cause.getMessage).map(_.linesIterator.next()).getOrElse(cause.toString)
    )

  val StorageAccessDenied = "DELTA_LIFECYCLE_STORAGE_ACCESS_DENIED"
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

  def tableNotFound(name: String): DeltaLifecycleException =
    error("DELTA_LIFECYCLE_TABLE_NOT_FOUND", "table" -> name)

  def notDeltaProvider(name: String, provider: String): DeltaLifecycleException =
    error("DELTA_LIFECYCLE_NOT_DELTA_PROVIDER", "table" -> name, "provider" -> provider)

  def versionNotFound(version: Long, earliest: Long, latest: Long): DeltaLifecycleException =
    error(
      "DELTA_LIFECYCLE_VERSION_NOT_FOUND",
      "version" -> version,
      "earliest" -> earliest,
      "latest" -> latest
    )

  def nonContiguousVersions(logPath: String, missing: Seq[Long]): DeltaLifecycleException =
    error(
      "DELTA_LIFECYCLE_NON_CONTIGUOUS_VERSIONS",
      "logPath" -> logPath,
      "missingVersions" -> shortList(missing.map(_.toString))
    )

  def unreadableCheckpoint(file: String, cause: Throwable): DeltaLifecycleException =
    withCause(
      cause,
      "DELTA_LIFECYCLE_UNREADABLE_CHECKPOINT",
      "file" -> file,
      "reason" -> String.valueOf(cause.getMessage)
    )

  def invalidProtocol(version: Long, detail: String): DeltaLifecycleException =
    error("DELTA_LIFECYCLE_INVALID_PROTOCOL", "where" -> s"at version $version", "reason" -> detail)

  def invalidProtocolIn(file: String, detail: String): DeltaLifecycleException =
    error("DELTA_LIFECYCLE_INVALID_PROTOCOL", "where" -> s"action in $file", "reason" -> detail)

  def corruptLog(
      file: String,
      detail: String,
      cause: Option[Throwable] = None
  ): DeltaLifecycleException =
    new DeltaLifecycleException(
      "DELTA_LIFECYCLE_CORRUPT_LOG",
      Map("file" -> file, "reason" -> detail),
      cause
    )

  def invalidCompactionRange(start: Long, end: Long, why: String): DeltaLifecycleException =
    error(
      "DELTA_LIFECYCLE_INVALID_COMPACTION_RANGE",
      "startVersion" -> start,
      "endVersion" -> end,
      "reason" -> why
    )

  def compactionConflict(file: String, why: String): DeltaLifecycleException =
    error("DELTA_LIFECYCLE_COMPACTION_CONFLICT", "file" -> file, "reason" -> why)

  def compactionTooLarge(
      start: Long,
      end: Long,
      limitBytes: Long,
      version: Long,
      setting: String
  ): DeltaLifecycleException =
    error(
      "DELTA_LIFECYCLE_COMPACTION_TOO_LARGE",
      "startVersion" -> start,
      "endVersion" -> end,
      "limitBytes" -> limitBytes,
      "version" -> version,
      "setting" -> setting
    )

  /**
   * A version this client cannot rewrite or delete: `features` it does not support, or (none named)
   * a protocol version it does not support.
   */
  def unsupportedProtocol(
      version: Long,
      features: Set[String],
      operation: String
  ): DeltaLifecycleException =
    if (features.isEmpty) unsupportedProtocolVersion(version, operation)
    else unsupportedFeatures(version, features.toSeq.sorted, operation)

  def unsupportedProtocolVersion(version: Long, operation: String): DeltaLifecycleException =
    subError(
      UnsupportedProtocol,
      "PROTOCOL_VERSION",
      "operation" -> operation,
      "version" -> version
    )

  def unsupportedFeatures(
      version: Long,
      features: Seq[String],
      operation: String
  ): DeltaLifecycleException =
    subError(
      UnsupportedProtocol,
      "FEATURES",
      "operation" -> operation,
      "version" -> version,
      "features" -> features.mkString(", ")
    )

  def unsupportedAction(
      file: String,
      actionType: String,
      operation: String
  ): DeltaLifecycleException =
    subError(
      UnsupportedProtocol,
      "UNKNOWN_ACTION",
      "operation" -> operation,
      "file" -> file,
      "actionType" -> actionType
    )

  // ---- DELTA_LIFECYCLE_INVALID_ARGUMENT: one sub-condition per argument refused -------------

  def invalidTablePath(location: String, reason: String): DeltaLifecycleException =
    subError(InvalidArgument, "INVALID_TABLE_PATH", "location" -> location, "reason" -> reason)

  def filesPerPartitionNotPositive(
      setting: String,
      value: String,
      default: Long
  ): DeltaLifecycleException =
    subError(
      InvalidArgument,
      "FILES_PER_PARTITION",
      "setting" -> setting,
      "value" -> value,
      "default" -> default
    )

  def negativeRetention(retentionMillis: Long): DeltaLifecycleException =
    subError(InvalidArgument, "NEGATIVE_RETENTION", "retentionMillis" -> retentionMillis)

  def truncateHistoryNotApplicable(name: String): DeltaLifecycleException =
    subError(InvalidArgument, "TRUNCATE_HISTORY_NOT_APPLICABLE", "feature" -> name)

  /** A client name of the capability file that matches several of its version ranges. */
  def ambiguousClient(client: String, ranges: Seq[String]): DeltaLifecycleException =
    subError(
      InvalidArgument,
      "AMBIGUOUS_CLIENT",
      "client" -> client,
      "count" -> ranges.size,
      "ranges" -> ranges.mkString(", ")
    )

  def readOnlyClient(client: String, table: String): DeltaLifecycleException =
    subError(InvalidArgument, "READ_ONLY_CLIENT", "client" -> client, "table" -> table)

  def clientNeedsTruncateHistory(client: String, table: String): DeltaLifecycleException =
    subError(InvalidArgument, "CLIENT_NEEDS_TRUNCATE_HISTORY", "client" -> client, "table" -> table)

  def emptyRedirectLocation(table: String): DeltaLifecycleException =
    subError(InvalidArgument, "EMPTY_REDIRECT_LOCATION", "table" -> table)

  def unusableRedirectTarget(location: String, reason: String): DeltaLifecycleException =
    subError(
      InvalidArgument,
      "UNUSABLE_REDIRECT_TARGET",
      "location" -> location,
      "reason" -> reason
    )

  def notSessionCatalogTable(name: String): DeltaLifecycleException =
    subError(InvalidArgument, "NOT_A_SESSION_CATALOG_TABLE", "name" -> name)

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

  /** SET REDIRECT TO TABLE `name`, a Unity Catalog table without LOCATION or a storage root. */
  def redirectTargetNeedsLocation(name: String): DeltaLifecycleException =
    subError(InvalidArgument, "REDIRECT_TARGET_NEEDS_LOCATION", "name" -> name)

  /** One ALTER TABLE that changes a redirect property together with `properties`' others. */
  def redirectPropertyNotAlone(properties: Seq[String]): DeltaLifecycleException =
    subError(
      InvalidArgument,
      "REDIRECT_PROPERTY_NOT_ALONE",
      "properties" -> properties.mkString(", ")
    )

  /** A redirect property in delta-spark's preview spelling; this client writes `written`. */
  def previewRedirectProperty(property: String, written: Seq[String]): DeltaLifecycleException =
    subError(
      InvalidArgument,
      "PREVIEW_REDIRECT_PROPERTY",
      "property" -> property,
      "properties" -> written.mkString(", ")
    )

  def concurrentCommit(table: String, version: Long): DeltaLifecycleException =
    error("DELTA_LIFECYCLE_CONCURRENT_COMMIT", "table" -> table, "version" -> version)

  def commitNotVisible(table: String, version: Long): DeltaLifecycleException =
    error("DELTA_LIFECYCLE_COMMIT_NOT_VISIBLE", "table" -> table, "version" -> version)

  /** See [[CommitCoordination]]: `kind` and `name` say why, `owner` who takes the commits. */
  def coordinatedTable(
      table: String,
      operation: String,
      kind: String,
      name: String,
      owner: String
  ): DeltaLifecycleException =
    error(
      "DELTA_LIFECYCLE_COORDINATED_TABLE",
      "operation" -> operation,
      "table" -> table,
      "kind" -> kind,
      "name" -> name,
      "owner" -> owner
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
    new DeltaLifecycleException(
      CatalogManagedTable,
      strings(Seq(
        "table" -> table,
        "catalog" -> catalog,
        "operation" -> operation,
        "reason" -> reason
      )),
      Some(cause),
      Some("CATALOG_REFUSED_COMMIT")
    )

  def unknownSettingValue(
      setting: String,
      value: String,
      values: Seq[String]
  ): DeltaLifecycleException =
    subError(
      InvalidArgument,
      "UNKNOWN_SETTING_VALUE",
      "setting" -> setting,
      "value" -> value,
      "values" -> values.mkString(", ")
    )

  def unknownFeature(name: String, droppable: Seq[String]): DeltaLifecycleException =
    error(
      "DELTA_LIFECYCLE_UNKNOWN_FEATURE",
      "feature" -> name,
      "droppable" -> droppable.mkString(", ")
    )

  def dropNotSupportedOnLine(
      name: String,
      reason: String,
      droppable: Seq[String]
  ): DeltaLifecycleException = error(
    "DELTA_LIFECYCLE_DROP_NOT_SUPPORTED_ON_LINE",
    "feature" -> name,
    "reason" -> reason,
    "droppable" -> droppable.mkString(", ")
  )

  def featureNotPresent(name: String, table: String, version: Long): DeltaLifecycleException =
    error(
      "DELTA_LIFECYCLE_FEATURE_NOT_PRESENT",
      "feature" -> name,
      "table" -> table,
      "version" -> version
    )

  def dependentFeatures(name: String, dependents: Seq[String]): DeltaLifecycleException =
    error(
      "DELTA_LIFECYCLE_DEPENDENT_FEATURE",
      "feature" -> name,
      "dependents" -> dependents.mkString(", "),
      "dependVerb" -> (if (dependents.size == 1) "depends" else "depend"),
      "dependentsToDrop" -> dependents.mkString(" and ")
    )

  // ---- DELTA_LIFECYCLE_FEATURE_IN_USE: what in the table's definition still uses `feature` ------

  /** CHECK constraints `constraints` (at least one) keep checkConstraints in use. */
  def checkConstraintsInUse(feature: String, constraints: Seq[String]): DeltaLifecycleException =
    subError(
      FeatureInUse,
      "CHECK_CONSTRAINTS",
      "feature" -> feature,
      "constraints" -> constraints.mkString(", "),
      "constraint" -> constraints.head
    )

  def featureTracesRemain(name: String, version: Long): DeltaLifecycleException =
    error("DELTA_LIFECYCLE_FEATURE_TRACES_REMAIN", "feature" -> name, "version" -> version)

  def unknownClient(client: String, known: Seq[String]): DeltaLifecycleException =
    error("DELTA_LIFECYCLE_UNKNOWN_CLIENT", "client" -> client, "known" -> known.mkString(", "))

  /** DROP FEATURES FOR CLIENT refused: `features` block `access` and cannot be dropped. */
  def clientNeedsUndroppable(
      table: String,
      client: String,
      access: String,
      features: Seq[String]
  ): DeltaLifecycleException =
    error(
      "DELTA_LIFECYCLE_CLIENT_NEEDS_UNDROPPABLE",
      "table" -> table,
      "client" -> client,
      "access" -> access,
      "features" -> features.mkString(", ")
    )

  def truncateHistoryRequired(name: String): DeltaLifecycleException =
    error("DELTA_LIFECYCLE_TRUNCATE_HISTORY_REQUIRED", "feature" -> name)

  def waitForRetention(
      name: String,
      why: String,
      readyAtMillis: Long,
      retention: String,
      command: String
  ): DeltaLifecycleException =
    error(
      "DELTA_LIFECYCLE_DROP_FEATURE_WAIT",
      "feature" -> name,
      "reason" -> why,
      "retentionKey" -> DeltaConfigs.TABLE_FEATURE_DROP_TRUNCATE_HISTORY_LOG_RETENTION.key,
      "retention" -> retention,
      "command" -> command,
      "readyAt" -> java.time.Instant.ofEpochMilli(readyAtMillis)
    )

  // ---- DELTA_LIFECYCLE_INVALID_REDIRECT: `table` names where the configuration is --------------

  def redirectNotJson(table: String, detail: String): DeltaLifecycleException =
    subError(InvalidRedirect, "NOT_JSON", "table" -> table, "detail" -> detail)

  def redirectNotAnObject(table: String): DeltaLifecycleException =
    subError(InvalidRedirect, "NOT_AN_OBJECT", "table" -> table)

  def redirectFieldMissing(table: String, field: String): DeltaLifecycleException =
    subError(InvalidRedirect, "FIELD_MISSING", "table" -> table, "field" -> field)

  def redirectFieldNotText(table: String, field: String): DeltaLifecycleException =
    subError(InvalidRedirect, "NOT_A_STRING", "table" -> table, "field" -> field)

  def redirectSpecNotJson(table: String): DeltaLifecycleException =
    subError(InvalidRedirect, "SPEC_NOT_JSON", "table" -> table)

  /** A `field` whose `value` is none of those this client `known`s (State, Type, Spec.Mode). */
  def redirectUnknownValue(
      table: String,
      field: String,
      value: String,
      known: Seq[String]
  ): DeltaLifecycleException =
    subError(
      InvalidRedirect,
      "UNKNOWN_VALUE",
      "table" -> table,
      "field" -> field,
      "value" -> value,
      "known" -> known.map(k => s"'$k'").mkString(", ")
    )

  def redirectRulesNotAList(table: String): DeltaLifecycleException =
    subError(InvalidRedirect, "RULES_NOT_A_LIST", "table" -> table)

  def redirectRuleWithoutAppName(table: String): DeltaLifecycleException =
    subError(InvalidRedirect, "RULE_WITHOUT_APP_NAME", "table" -> table)

  def redirectRuleOperationsNotAList(table: String, app: String): DeltaLifecycleException =
    subError(InvalidRedirect, "RULE_OPERATIONS_NOT_A_LIST", "table" -> table, "app" -> app)

  def severalRedirectProperties(table: String, properties: Seq[String]): DeltaLifecycleException =
    subError(
      InvalidRedirect,
      "SEVERAL_PROPERTIES",
      "table" -> table,
      "properties" -> properties.mkString(" and ")
    )

  def redirectFeatureWithoutProperty(table: String, feature: String): DeltaLifecycleException =
    subError(InvalidRedirect, "FEATURE_WITHOUT_PROPERTY", "table" -> table, "feature" -> feature)

  def redirectLocationInvalid(
      table: String,
      location: String,
      reason: String
  ): DeltaLifecycleException =
    subError(
      InvalidRedirect,
      "INVALID_LOCATION",
      "table" -> table,
      "location" -> location,
      "reason" -> reason
    )

  def redirectDestinationTableMissing(table: String, destination: String): DeltaLifecycleException =
    subError(
      InvalidRedirect,
      "DESTINATION_TABLE_MISSING",
      "table" -> table,
      "destination" -> destination
    )

  def redirectCommitMissing(table: String, version: Long): DeltaLifecycleException =
    subError(InvalidRedirect, "COMMIT_MISSING", "table" -> table, "version" -> version)

  def redirectDataChanged(table: String, version: Long): DeltaLifecycleException =
    subError(InvalidRedirect, "DATA_CHANGED", "table" -> table, "version" -> version)

  def noVersionBeforeRedirect(table: String): DeltaLifecycleException =
    subError(InvalidRedirect, "NO_VERSION_BEFORE_REDIRECT", "table" -> table)

  // ---- DELTA_LIFECYCLE_REDIRECT_WRITE_REFUSED ---------------------------------------------------

  def redirectWriteRefused(
      table: String,
      state: String,
      operation: String
  ): DeltaLifecycleException =
    subError(
      RedirectWriteRefused,
      "IN_PROGRESS",
      "operation" -> operation,
      "table" -> table,
      "state" -> state
    )

  def redirectDestinationReadOnly(
      table: String,
      source: String,
      operation: String
  ): DeltaLifecycleException =
    subError(
      RedirectWriteRefused,
      "DESTINATION_READ_ONLY",
      "operation" -> operation,
      "table" -> table,
      "source" -> source
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

  def streamPositionUnmapped(table: String, from: String, reason: String): DeltaLifecycleException =
    error(
      "DELTA_LIFECYCLE_STREAM_POSITION_UNMAPPED",
      "table" -> table,
      "from" -> from,
      "to" -> table,
      "reason" -> reason
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

  def redirectChain(chain: Seq[String]): DeltaLifecycleException =
    error(
      "DELTA_LIFECYCLE_REDIRECT_CHAIN",
      "hops" -> chain.mkString(" -> "),
      "shape" -> (if (chain.distinct.size < chain.size) "cycle" else "chain")
    )

  def redirectLocationNotAllowed(
      location: String,
      prefixes: Seq[String],
      prefixesSetting: String
  ): DeltaLifecycleException =
    error(
      "DELTA_LIFECYCLE_REDIRECT_LOCATION_NOT_ALLOWED",
      "location" -> location,
      "prefixesKey" -> prefixesSetting,
      "prefixes" -> prefixes.mkString(",")
    )

  def redirectDestinationNotEmpty(location: String, detail: String): DeltaLifecycleException =
    error(
      "DELTA_LIFECYCLE_REDIRECT_DESTINATION_NOT_EMPTY",
      "location" -> location,
      "reason" -> detail
    )

  // ---- DELTA_LIFECYCLE_REDIRECT_STATE: the redirect of `table` does not allow the command -------

  /** UNSET REDIRECT on a table without a redirect. */
  def redirectNotSet(table: String): DeltaLifecycleException =
    subError(RedirectStateRefused, "NOT_REDIRECTED", "table" -> table)

  /** UNSET REDIRECT on the destination of a redirect from `source` (its marker). */
  def redirectIsDestination(table: String, source: String): DeltaLifecycleException =
    subError(RedirectStateRefused, "IS_DESTINATION", "table" -> table, "source" -> source)

  /** SET REDIRECT on the destination of a redirect from `source` that is being dropped. */
  def destinationNotRedirectable(table: String, source: String): DeltaLifecycleException =
    subError(
      RedirectStateRefused,
      "DESTINATION_NOT_REDIRECTABLE",
      "table" -> table,
      "source" -> source
    )

  /** SET REDIRECT on a table already redirected (`mode`) to `destination`, past enabling. */
  def redirectAlreadySet(
      table: String,
      mode: String,
      destination: String,
      state: String
  ): DeltaLifecycleException =
    existingRedirect("ALREADY_REDIRECTED", table, mode, destination, state)

  /** SET REDIRECT on a table whose redirect (`mode`) to another `destination` is being enabled. */
  def redirectBeingEnabled(
      table: String,
      mode: String,
      destination: String,
      state: String
  ): DeltaLifecycleException =
    existingRedirect("ENABLE_IN_PROGRESS", table, mode, destination, state)

  private def existingRedirect(
      subCondition: String,
      table: String,
      mode: String,
      destination: String,
      state: String
  ): DeltaLifecycleException =
    subError(
      RedirectStateRefused,
      subCondition,
      "table" -> table,
      "mode" -> mode,
      "destination" -> destination,
      "state" -> state
    )

  /** DROP FEATURE of redirect feature `feature`, which only UNSET REDIRECT removes. */
  def redirectFeatureNotDroppable(table: String, feature: String): DeltaLifecycleException =
    subError(RedirectStateRefused, "REDIRECT_FEATURE", "table" -> table, "feature" -> feature)

  /** A hand-made change of `property` on a redirect (`mode`) stored under `modeProperty`. */
  def redirectOtherProperty(
      table: String,
      mode: String,
      property: String,
      modeProperty: String
  ): DeltaLifecycleException =
    subError(
      RedirectStateRefused,
      "OTHER_MODE_PROPERTY",
      "table" -> table,
      "mode" -> mode,
      "property" -> property,
      "modeProperty" -> modeProperty
    )

  /** A hand-made READY whose `destination` is not a Delta table. */
  def redirectDestinationNotDelta(table: String, destination: String): DeltaLifecycleException =
    subError(
      RedirectStateRefused,
      "DESTINATION_NOT_A_DELTA_TABLE",
      "table" -> table,
      "destination" -> destination
    )

  /** An access that NoRedirectRules keep, for application `app`, on a reader-writer source. */
  def readerWriterSourceKeptByRules(table: String, app: String): DeltaLifecycleException =
    subError(RedirectStateRefused, "RULES_ON_READER_WRITER_SOURCE", "table" -> table, "app" -> app)

  /** A read of a reader-writer source whose redirect is being enabled (read in place). */
  def readerWriterSourceBeingEnabled(table: String): DeltaLifecycleException =
    subError(RedirectStateRefused, "ENABLING_READER_WRITER_SOURCE", "table" -> table)

  /** UNSET REDIRECT's replay: commit `version` of `destination` is gone from its log. */
  def destinationCommitMissing(
      table: String,
      destination: String,
      version: Long
  ): DeltaLifecycleException =
    subError(
      RedirectStateRefused,
      "DESTINATION_COMMIT_MISSING",
      "table" -> table,
      "destination" -> destination,
      "version" -> version
    )

  def redirectInvalidTransition(
      table: String,
      from: String,
      to: String,
      allowed: String
  ): DeltaLifecycleException =
    error(
      "DELTA_LIFECYCLE_REDIRECT_INVALID_TRANSITION",
      "table" -> table,
      "from" -> from,
      "to" -> to,
      "allowed" -> allowed
    )

  /** Built by [[OutOfMemory.error]], which decides where it happened and what to raise. */
  def outOfMemory(
      operation: String,
      step: String,
      where: String,
      reason: String,
      memorySetting: String,
      memory: String,
      filesPerPartitionSetting: String,
      filesPerPartition: Long,
      cause: Throwable
  ): DeltaLifecycleException =
    withCause(
      cause,
      "DELTA_LIFECYCLE_OUT_OF_MEMORY",
      "operation" -> operation,
      "step" -> step,
      "where" -> where,
      "reason" -> reason,
      "memorySetting" -> memorySetting,
      "memory" -> memory,
      "filesPerPartitionSetting" -> filesPerPartitionSetting,
      "filesPerPartition" -> filesPerPartition
    )

  def redirectCopyMismatch(detail: String): DeltaLifecycleException =
    error("DELTA_LIFECYCLE_REDIRECT_COPY_MISMATCH", "reason" -> detail)

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
      "DELTA_LIFECYCLE_CATALOG_NOT_ROUTED",
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
      "DELTA_LIFECYCLE_CATALOG_NOT_ROUTED",
      "OTHER_CATALOG",
      "operation" -> operation,
      "table" -> table,
      "catalog" -> catalog,
      "catalogClass" -> catalogClass,
      "routingCatalog" -> routingCatalog,
      "delegateSetting" -> delegateSetting
    )

  def administratorSetting(setting: String): DeltaLifecycleException =
    error("DELTA_LIFECYCLE_ADMINISTRATOR_SETTING", "setting" -> setting)

  def testSwitchUnavailable(setting: String, property: String): DeltaLifecycleException =
    error("DELTA_LIFECYCLE_TEST_SWITCH_UNAVAILABLE", "setting" -> setting, "property" -> property)

  private def shortList(items: Seq[String]): String =
    items.take(10).mkString(", ") + (if (items.size > 10) ", ..." else "")
}
