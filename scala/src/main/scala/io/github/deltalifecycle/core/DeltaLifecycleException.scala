package io.github.deltalifecycle.core

import org.apache.spark.sql.AnalysisException

/**
 * Every error this project raises on purpose. It is an AnalysisException so that PySpark (classic
 * and Spark Connect) surfaces it as a typed exception that carries `condition`, which the Python
 * package maps to `delta_lifecycle.errors`.
 */
class DeltaLifecycleException(
    val condition: String,
    message: String,
    cause: Option[Throwable] = None
) extends AnalysisException(
      message = s"[$condition] $message",
      line = None,
      startPosition = None,
      cause = cause,
      errorClass = Some(condition),
      messageParameters = Map("message" -> message),
      context = Array.empty
    ) {

  override def getCondition: String = condition
  // The conditions are not in Spark's error-class registry, so name the SQL state here.
  override def getSqlState: String = "KD000"
}

/** One constructor per failure, so messages stay consistent and say what to do. */
object LifecycleErrors {
  def notADeltaTable(path: String, why: String): DeltaLifecycleException =
    new DeltaLifecycleException(
      "DELTA_LIFECYCLE_NOT_A_DELTA_TABLE",
      s"$path is not a Delta table: $why. Check the path, or create the table with delta-spark first."
    )

  def tableNotFound(name: String): DeltaLifecycleException =
    new DeltaLifecycleException(
      "DELTA_LIFECYCLE_TABLE_NOT_FOUND",
      s"Table $name was not found in the catalog. Use a qualified name, or delta.`/path/to/table`."
    )

  def notDeltaProvider(name: String, provider: String): DeltaLifecycleException =
    new DeltaLifecycleException(
      "DELTA_LIFECYCLE_NOT_DELTA_PROVIDER",
      s"Table $name uses provider '$provider', not delta; this command works on Delta tables only."
    )

  def versionNotFound(version: Long, earliest: Long, latest: Long): DeltaLifecycleException =
    new DeltaLifecycleException(
      "DELTA_LIFECYCLE_VERSION_NOT_FOUND",
      s"Version $version cannot be reconstructed: the log retains versions $earliest to $latest."
    )

  def nonContiguousVersions(logPath: String, missing: Seq[Long]): DeltaLifecycleException = {
    val shown = missing.take(10).mkString(", ") + (if (missing.size > 10) ", ..." else "")
    new DeltaLifecycleException(
      "DELTA_LIFECYCLE_NON_CONTIGUOUS_VERSIONS",
      s"The Delta log at $logPath is missing commit files for versions [$shown]; the log is " +
        "damaged and cannot be replayed across the gap. Restore the missing files from a backup."
    )
  }

  def unreadableCheckpoint(file: String, cause: Throwable): DeltaLifecycleException =
    new DeltaLifecycleException(
      "DELTA_LIFECYCLE_UNREADABLE_CHECKPOINT",
      s"Checkpoint $file cannot be read (${cause.getMessage}) and no older checkpoint or complete " +
        "run of commits can replace it. Restore the file, or the commits before it.",
      Some(cause)
    )

  def invalidProtocol(version: Long, detail: String): DeltaLifecycleException =
    new DeltaLifecycleException(
      "DELTA_LIFECYCLE_INVALID_PROTOCOL",
      s"The protocol at version $version is invalid: $detail."
    )

  def invalidProtocolIn(file: String, detail: String): DeltaLifecycleException =
    new DeltaLifecycleException(
      "DELTA_LIFECYCLE_INVALID_PROTOCOL",
      s"The protocol action in $file is invalid: $detail."
    )

  def corruptLog(
      file: String,
      detail: String,
      cause: Option[Throwable] = None
  ): DeltaLifecycleException =
    new DeltaLifecycleException(
      "DELTA_LIFECYCLE_CORRUPT_LOG",
      s"Log file $file cannot be parsed: $detail.",
      cause
    )

  def invalidCompactionRange(start: Long, end: Long, why: String): DeltaLifecycleException =
    new DeltaLifecycleException(
      "DELTA_LIFECYCLE_INVALID_COMPACTION_RANGE",
      s"Cannot compact versions $start to $end: $why."
    )

  def compactionConflict(file: String, why: String): DeltaLifecycleException =
    new DeltaLifecycleException(
      "DELTA_LIFECYCLE_COMPACTION_CONFLICT",
      s"Cannot write a compaction next to $file: $why."
    )

  def unsupportedProtocol(
      version: Long,
      features: Set[String],
      operation: String
  ): DeltaLifecycleException =
    new DeltaLifecycleException(
      "DELTA_LIFECYCLE_UNSUPPORTED_PROTOCOL",
      s"Cannot $operation: the protocol at version $version uses " +
        s"${if (features.isEmpty) "a protocol version"
          else "features " + features.toSeq.sorted.mkString(", ")} " +
        "that this client does not support, and rewriting or deleting log files of such a version could " +
        "change what the log means. Use a client that supports the protocol."
    )

  def unsupportedAction(
      file: String,
      actionType: String,
      operation: String
  ): DeltaLifecycleException =
    new DeltaLifecycleException(
      "DELTA_LIFECYCLE_UNSUPPORTED_PROTOCOL",
      s"Cannot $operation: $file holds a '$actionType' action that this client does not know, " +
        "so it cannot tell what the action means for the table state."
    )

  def invalidArgument(what: String): DeltaLifecycleException =
    new DeltaLifecycleException("DELTA_LIFECYCLE_INVALID_ARGUMENT", what)

  def concurrentCommit(table: String, version: Long): DeltaLifecycleException =
    new DeltaLifecycleException(
      "DELTA_LIFECYCLE_CONCURRENT_COMMIT",
      s"Another writer committed version $version of $table first; nothing was written. " +
        "Run the command again: it starts from the new latest version."
    )

  def unknownFeature(name: String, droppable: Seq[String]): DeltaLifecycleException =
    new DeltaLifecycleException(
      "DELTA_LIFECYCLE_UNKNOWN_FEATURE",
      s"'$name' is not a table feature that DROP FEATURE can remove. Droppable features: " +
        droppable.mkString(", ") + "."
    )

  def featureNotPresent(name: String, table: String, version: Long): DeltaLifecycleException =
    new DeltaLifecycleException(
      "DELTA_LIFECYCLE_FEATURE_NOT_PRESENT",
      s"The protocol of $table at version $version does not name '$name'; there is nothing to drop. " +
        "DESCRIBE DETAIL shows the table's features."
    )

  def dependentFeatures(name: String, dependents: Seq[String]): DeltaLifecycleException =
    new DeltaLifecycleException(
      "DELTA_LIFECYCLE_DEPENDENT_FEATURE",
      s"Cannot drop '$name': ${dependents.mkString(", ")} ${if (dependents.size == 1) "depends"
        else "depend"} on it. " +
        s"Drop ${dependents.mkString(" and ")} first."
    )

  def featureInUse(name: String, detail: String): DeltaLifecycleException =
    new DeltaLifecycleException("DELTA_LIFECYCLE_FEATURE_IN_USE", s"Cannot drop '$name': $detail")

  def featureTracesRemain(name: String, version: Long): DeltaLifecycleException =
    new DeltaLifecycleException(
      "DELTA_LIFECYCLE_FEATURE_TRACES_REMAIN",
      s"Version $version of the table still uses '$name' after the rewrite (another writer may have " +
        "re-enabled it). Nothing was downgraded; run DROP FEATURE again."
    )

  def truncateHistoryRequired(name: String): DeltaLifecycleException =
    new DeltaLifecycleException(
      "DELTA_LIFECYCLE_TRUNCATE_HISTORY_REQUIRED",
      s"'$name' can only be dropped by removing the history it protects: run ALTER TABLE ... DROP FEATURE $name TRUNCATE HISTORY."
    )

  def truncateHistoryNotApplicable(name: String): DeltaLifecycleException =
    new DeltaLifecycleException(
      "DELTA_LIFECYCLE_INVALID_ARGUMENT",
      s"'$name' is a writer feature that leaves no traces readers depend on, so there is no history to truncate. " +
        s"Run DROP FEATURE $name without TRUNCATE HISTORY."
    )

  def waitForRetention(
      name: String,
      why: String,
      readyAtMillis: Long,
      retention: String,
      command: String
  ): DeltaLifecycleException =
    new DeltaLifecycleException(
      "DELTA_LIFECYCLE_DROP_FEATURE_WAIT",
      s"'$name' is prepared for removal, but $why. History is truncated after " +
        s"delta.dropFeatureTruncateHistory.retentionDuration ($retention). " +
        s"Run `$command` again after ${java.time.Instant.ofEpochMilli(readyAtMillis)}. " +
        "Until then the feature stays in the protocol and the table works as before."
    )

  def invalidRedirect(where: String, why: String): DeltaLifecycleException =
    new DeltaLifecycleException(
      "DELTA_LIFECYCLE_INVALID_REDIRECT",
      s"The redirect configuration in $where is invalid: $why. Fix it with ALTER TABLE ... SET REDIRECT " +
        "or UNSET REDIRECT; this client will not guess where the table lives."
    )

  def redirectWriteRefused(
      table: String,
      state: String,
      operation: String
  ): DeltaLifecycleException =
    new DeltaLifecycleException(
      "DELTA_LIFECYCLE_REDIRECT_WRITE_REFUSED",
      s"Cannot $operation $table: its redirect is in state $state, which accepts no writes or metadata " +
        "changes. Wait until the redirect command finishes (or run it again to complete it), then retry."
    )

  def redirectDestinationReadOnly(table: String, source: String): DeltaLifecycleException =
    new DeltaLifecycleException(
      "DELTA_LIFECYCLE_REDIRECT_WRITE_REFUSED",
      s"Cannot write to $table: it was the destination of a redirect from $source, which is being or has been " +
        s"removed, so it is read-only. Write to $source instead."
    )

  def redirectChain(chain: Seq[String]): DeltaLifecycleException =
    new DeltaLifecycleException(
      "DELTA_LIFECYCLE_REDIRECT_CHAIN",
      s"The redirect ${chain.mkString(" -> ")} ${if (chain.distinct.size < chain.size) "is a cycle"
        else "is a chain"}; " +
        "a redirect must point to a table that is not redirected itself. Run UNSET REDIRECT on one of them."
    )

  def redirectLocationNotAllowed(location: String, prefixes: Seq[String]): DeltaLifecycleException =
    new DeltaLifecycleException(
      "DELTA_LIFECYCLE_REDIRECT_LOCATION_NOT_ALLOWED",
      s"The redirect target $location is outside the locations this session allows " +
        s"(spark.deltaLifecycle.redirect.allowedLocationPrefixes = ${prefixes.mkString(",")})."
    )

  def redirectDestinationNotEmpty(location: String, detail: String): DeltaLifecycleException =
    new DeltaLifecycleException(
      "DELTA_LIFECYCLE_REDIRECT_DESTINATION_NOT_EMPTY",
      s"Cannot redirect to $location: $detail. The destination must be absent or empty."
    )

  def redirectState(table: String, detail: String): DeltaLifecycleException =
    new DeltaLifecycleException("DELTA_LIFECYCLE_REDIRECT_STATE", s"$table: $detail")

  def redirectInvalidTransition(
      table: String,
      from: String,
      to: String,
      allowed: String
  ): DeltaLifecycleException =
    new DeltaLifecycleException(
      "DELTA_LIFECYCLE_REDIRECT_INVALID_TRANSITION",
      s"Cannot change the redirect of $table from $from to $to: the Redirection RFC allows $allowed. " +
        "ALTER TABLE ... SET REDIRECT and UNSET REDIRECT make the whole change safely."
    )

  def redirectCopyMismatch(detail: String): DeltaLifecycleException =
    new DeltaLifecycleException(
      "DELTA_LIFECYCLE_REDIRECT_COPY_MISMATCH",
      s"The copy did not verify: $detail. Nothing was switched; run the same command again to re-copy."
    )

  def redirectNotRouted(path: String, state: String): DeltaLifecycleException =
    new DeltaLifecycleException(
      "DELTA_LIFECYCLE_REDIRECT_NOT_ROUTED",
      s"This query reads $path directly, but the table is redirected (state $state), so its rows there are stale. " +
        "Read it by name, with delta.`path` in SQL, or spark.read.format(\"delta\").load(path) in a session " +
        "with delta-lifecycle's catalog (spark.sql.catalog.spark_catalog=io.github.deltalifecycle.sql.LifecycleCatalog)."
    )
}
