package io.github.deltalifecycle.features.dropfeature

import org.apache.spark.sql.delta.DeltaConfigs

import io.github.deltalifecycle.core.DeltaLifecycleException
import io.github.deltalifecycle.core.DeltaLifecycleException.{error, subError}
import io.github.deltalifecycle.core.LifecycleErrorConditions.InvalidArgument

/** The errors of DROP FEATURE: a feature it does not know or cannot drop yet, and why. */
object DropFeatureErrors {
  def truncateHistoryNotApplicable(name: String): DeltaLifecycleException =
    subError(InvalidArgument, "TRUNCATE_HISTORY_NOT_APPLICABLE", "feature" -> name)

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

  private val FeatureInUse = "DELTA_LIFECYCLE_FEATURE_IN_USE"

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
}
