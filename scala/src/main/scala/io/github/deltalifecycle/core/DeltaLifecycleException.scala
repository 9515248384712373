package io.github.deltalifecycle.core

import org.apache.spark.sql.AnalysisException

/**
 * Every error this project raises on purpose. It is an AnalysisException so that PySpark
 * (classic and Spark Connect) surfaces it as a typed exception that carries `condition`,
 * which the Python package maps to `delta_lifecycle.errors`.
 */
class DeltaLifecycleException(
    val condition: String,
    message: String,
    cause: Option[Throwable] = None)
  extends AnalysisException(
    message = s"[$condition] $message",
    line = None,
    startPosition = None,
    cause = cause,
    errorClass = Some(condition),
    messageParameters = Map("message" -> message),
    context = Array.empty) {

  override def getCondition: String = condition
  // The conditions are not in Spark's error-class registry, so name the SQL state here.
  override def getSqlState: String = "KD000"
}

/** One constructor per failure, so messages stay consistent and say what to do. */
object LifecycleErrors {
  def notADeltaTable(path: String, why: String): DeltaLifecycleException =
    new DeltaLifecycleException("DELTA_LIFECYCLE_NOT_A_DELTA_TABLE",
      s"$path is not a Delta table: $why. Check the path, or create the table with delta-spark first.")

  def tableNotFound(name: String): DeltaLifecycleException =
    new DeltaLifecycleException("DELTA_LIFECYCLE_TABLE_NOT_FOUND",
      s"Table $name was not found in the catalog. Use a qualified name, or delta.`/path/to/table`.")

  def notDeltaProvider(name: String, provider: String): DeltaLifecycleException =
    new DeltaLifecycleException("DELTA_LIFECYCLE_NOT_DELTA_PROVIDER",
      s"Table $name uses provider '$provider', not delta; this command works on Delta tables only.")

  def versionNotFound(version: Long, earliest: Long, latest: Long): DeltaLifecycleException =
    new DeltaLifecycleException("DELTA_LIFECYCLE_VERSION_NOT_FOUND",
      s"Version $version cannot be reconstructed: the log retains versions $earliest to $latest.")

  def nonContiguousVersions(logPath: String, missing: Seq[Long]): DeltaLifecycleException = {
    val shown = missing.take(10).mkString(", ") + (if (missing.size > 10) ", ..." else "")
    new DeltaLifecycleException("DELTA_LIFECYCLE_NON_CONTIGUOUS_VERSIONS",
      s"The Delta log at $logPath is missing commit files for versions [$shown]; the log is " +
        "damaged and cannot be replayed across the gap. Restore the missing files from a backup.")
  }

  def unreadableCheckpoint(file: String, cause: Throwable): DeltaLifecycleException =
    new DeltaLifecycleException("DELTA_LIFECYCLE_UNREADABLE_CHECKPOINT",
      s"Checkpoint $file cannot be read (${cause.getMessage}) and no older checkpoint or complete " +
        "run of commits can replace it. Restore the file, or the commits before it.", Some(cause))

  def invalidProtocol(version: Long, detail: String): DeltaLifecycleException =
    new DeltaLifecycleException("DELTA_LIFECYCLE_INVALID_PROTOCOL",
      s"The protocol at version $version is invalid: $detail.")

  def invalidProtocolIn(file: String, detail: String): DeltaLifecycleException =
    new DeltaLifecycleException("DELTA_LIFECYCLE_INVALID_PROTOCOL",
      s"The protocol action in $file is invalid: $detail.")

  def corruptLog(file: String, detail: String, cause: Option[Throwable] = None): DeltaLifecycleException =
    new DeltaLifecycleException("DELTA_LIFECYCLE_CORRUPT_LOG",
      s"Log file $file cannot be parsed: $detail.", cause)

  def invalidCompactionRange(start: Long, end: Long, why: String): DeltaLifecycleException =
    new DeltaLifecycleException("DELTA_LIFECYCLE_INVALID_COMPACTION_RANGE",
      s"Cannot compact versions $start to $end: $why.")

  def compactionConflict(file: String, why: String): DeltaLifecycleException =
    new DeltaLifecycleException("DELTA_LIFECYCLE_COMPACTION_CONFLICT",
      s"Cannot write a compaction next to $file: $why.")

  def unsupportedProtocol(version: Long, features: Set[String], operation: String): DeltaLifecycleException =
    new DeltaLifecycleException("DELTA_LIFECYCLE_UNSUPPORTED_PROTOCOL",
      s"Cannot $operation: the protocol at version $version uses " +
        s"${if (features.isEmpty) "a protocol version" else "features " + features.toSeq.sorted.mkString(", ")} " +
        "that this client does not support, and rewriting or deleting log files of such a version could " +
        "change what the log means. Use a client that supports the protocol.")

  def unsupportedAction(file: String, actionType: String, operation: String): DeltaLifecycleException =
    new DeltaLifecycleException("DELTA_LIFECYCLE_UNSUPPORTED_PROTOCOL",
      s"Cannot $operation: $file holds a '$actionType' action that this client does not know, " +
        "so it cannot tell what the action means for the table state.")

  def invalidArgument(what: String): DeltaLifecycleException =
    new DeltaLifecycleException("DELTA_LIFECYCLE_INVALID_ARGUMENT", what)

  def concurrentCommit(table: String, version: Long): DeltaLifecycleException =
    new DeltaLifecycleException("DELTA_LIFECYCLE_CONCURRENT_COMMIT",
      s"Another writer committed version $version of $table first; nothing was written. " +
        "Run the command again: it starts from the new latest version.")
}
