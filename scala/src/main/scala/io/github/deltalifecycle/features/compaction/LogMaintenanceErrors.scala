package io.github.deltalifecycle.features.compaction

import io.github.deltalifecycle.core.DeltaLifecycleException
import io.github.deltalifecycle.core.DeltaLifecycleException.{error, subError}
import io.github.deltalifecycle.core.LifecycleErrorConditions.InvalidArgument

/** The errors of compacting and cleaning up a table's log (COMPACT LOG, CLEAN LOG). */
object LogMaintenanceErrors {
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

  def negativeRetention(retentionMillis: Long): DeltaLifecycleException =
    subError(InvalidArgument, "NEGATIVE_RETENTION", "retentionMillis" -> retentionMillis)
}
