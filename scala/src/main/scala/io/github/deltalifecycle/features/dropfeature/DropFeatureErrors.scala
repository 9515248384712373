package io.github.deltalifecycle.features.dropfeature

import org.apache.spark.sql.delta.DeltaConfigs

import io.github.deltalifecycle.core.{DeltaLifecycleException, ErrorConditions}

/**
 * The errors of DROP FEATURE whose values need formatting: a wording that agrees with the number of
 * features, a list joined other than by commas, a time. The others are raised with their factories
 * in [[ErrorConditions]].
 */
object DropFeatureErrors {
  def dependentFeatures(name: String, dependents: Seq[String]): DeltaLifecycleException =
    ErrorConditions.dependentFeature(
      feature = name,
      dependents = dependents.mkString(", "),
      dependVerb = if (dependents.size == 1) "depends" else "depend",
      dependentsToDrop = dependents.mkString(" and ")
    )

  /** CHECK constraints `constraints` (at least one) keep checkConstraints in use. */
  def checkConstraintsInUse(feature: String, constraints: Seq[String]): DeltaLifecycleException =
    ErrorConditions.FeatureInUse.checkConstraints(
      feature = feature,
      constraints = constraints.mkString(", "),
      constraint = constraints.head
    )

  def waitForRetention(
      name: String,
      why: String,
      readyAtMillis: Long,
      retention: String,
      command: String
  ): DeltaLifecycleException =
    ErrorConditions.dropFeatureWait(
      feature = name,
      reason = why,
      retentionKey = DeltaConfigs.TABLE_FEATURE_DROP_TRUNCATE_HISTORY_LOG_RETENTION.key,
      retention = retention,
      command = command,
      readyAt = java.time.Instant.ofEpochMilli(readyAtMillis).toString
    )
}
