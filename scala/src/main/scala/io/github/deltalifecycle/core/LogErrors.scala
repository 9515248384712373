package io.github.deltalifecycle.core

import io.github.deltalifecycle.core.DeltaLifecycleException.{error, subError, withCause}
import io.github.deltalifecycle.core.LifecycleErrorConditions.InvalidArgument

/**
 * The errors of reading and committing a table's log: a path that holds no table, a version that is
 * gone, a log or protocol this client cannot read or rewrite, a commit that lost its race, and
 * running out of memory while doing so.
 */
object LogErrors {
  private val UnsupportedProtocol = "DELTA_LIFECYCLE_UNSUPPORTED_PROTOCOL"

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

  private def shortList(items: Seq[String]): String =
    items.take(10).mkString(", ") + (if (items.size > 10) ", ..." else "")
}
