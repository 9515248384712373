package io.github.deltalifecycle.features.compatibility

import io.github.deltalifecycle.core.DeltaLifecycleException
import io.github.deltalifecycle.core.DeltaLifecycleException.{error, subError}
import io.github.deltalifecycle.core.LifecycleErrorConditions.InvalidArgument

/** The errors of naming a client of the capability file (DROP FEATURES FOR CLIENT). */
object ClientErrors {

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
}
