package io.github.deltalifecycle.core

/**
 * The errors of reading and committing a table's log whose values need formatting or that pick
 * their condition: a list of missing versions, a cause's message, a protocol this client cannot
 * rewrite. The others are raised with their factories in [[ErrorConditions]].
 */
object LogErrors {

  /** The storage at `path` refused access (it exists, or may): never "not a Delta table". */
  def storageAccessDenied(path: String, cause: Throwable): DeltaLifecycleException = {
    val reason = Option(cause.getMessage).map(_.linesIterator.next()).getOrElse(cause.toString)
    ErrorConditions.storageAccessDenied(path = path, reason = reason, cause = cause)
  }

  val StorageAccessDenied = "DELTA_LIFECYCLE_STORAGE_ACCESS_DENIED"

  def nonContiguousVersions(logPath: String, missing: Seq[Long]): DeltaLifecycleException =
    ErrorConditions.nonContiguousVersions(
      logPath = logPath,
      missingVersions = shortList(missing.map(_.toString))
    )

  def unreadableCheckpoint(file: String, cause: Throwable): DeltaLifecycleException =
    ErrorConditions.unreadableCheckpoint(
      file = file,
      reason = String.valueOf(cause.getMessage),
      cause = cause
    )

  def invalidProtocol(version: Long, detail: String): DeltaLifecycleException =
    ErrorConditions.invalidProtocol(where = s"at version $version", reason = detail)

  def invalidProtocolIn(file: String, detail: String): DeltaLifecycleException =
    ErrorConditions.invalidProtocol(where = s"action in $file", reason = detail)

  /**
   * A version this client cannot rewrite or delete: `features` it does not support, or (none named)
   * a protocol version it does not support.
   */
  def unsupportedProtocol(
      version: Long,
      features: Set[String],
      operation: String
  ): DeltaLifecycleException =
    if (features.isEmpty)
      ErrorConditions.UnsupportedProtocol.protocolVersion(operation = operation, version = version)
    else
      ErrorConditions.UnsupportedProtocol.features(
        operation = operation,
        version = version,
        features = features.toSeq.sorted
      )

  private def shortList(items: Seq[String]): String =
    items.take(10).mkString(", ") + (if (items.size > 10) ", ..." else "")
}
