package io.github.deltalifecycle.features.redirect

import io.github.deltalifecycle.core.DeltaLifecycleException
import io.github.deltalifecycle.core.DeltaLifecycleException.{error, subError, SubConditions}

/**
 * The errors of a redirect's state: what its state refuses (a write, a command, a transition), a
 * destination that cannot take it, a chain of redirects, a copy that does not match.
 */
object RedirectErrors {
  private val RedirectWriteRefused = "DELTA_LIFECYCLE_REDIRECT_WRITE_REFUSED"

  // ---- DELTA_LIFECYCLE_REDIRECT_WRITE_REFUSED ---------------------------------------------------

  /** A write of `operations` (none named: any write) refused while the redirect is `state`. */
  def redirectWriteRefused(
      table: String,
      state: String,
      operations: Set[String]
  ): DeltaLifecycleException =
    subError(
      RedirectWriteRefused,
      "IN_PROGRESS",
      "operation" ->
        (if (operations.isEmpty) "write to"
         else operations.toSeq.sorted.mkString("/").toLowerCase + " on"),
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

  def streamPositionUnmapped(table: String, from: String, reason: String): DeltaLifecycleException =
    error(
      "DELTA_LIFECYCLE_STREAM_POSITION_UNMAPPED",
      "table" -> table,
      "from" -> from,
      "to" -> table,
      "reason" -> reason
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

  private val stateRefused = new SubConditions("DELTA_LIFECYCLE_REDIRECT_STATE", "table")

  /** UNSET REDIRECT on a table without a redirect. */
  def redirectNotSet(table: String): DeltaLifecycleException =
    stateRefused(table, "NOT_REDIRECTED")

  /** UNSET REDIRECT on the destination of a redirect from `source` (its marker). */
  def redirectIsDestination(table: String, source: String): DeltaLifecycleException =
    stateRefused(table, "IS_DESTINATION", "source" -> source)

  /** SET REDIRECT on the destination of a redirect from `source` that is being dropped. */
  def destinationNotRedirectable(table: String, source: String): DeltaLifecycleException =
    stateRefused(table, "DESTINATION_NOT_REDIRECTABLE", "source" -> source)

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
    stateRefused(
      table,
      subCondition,
      "mode" -> mode,
      "destination" -> destination,
      "state" -> state
    )

  /** DROP FEATURE of redirect feature `feature`, which only UNSET REDIRECT removes. */
  def redirectFeatureNotDroppable(table: String, feature: String): DeltaLifecycleException =
    stateRefused(table, "REDIRECT_FEATURE", "feature" -> feature)

  /** A hand-made change of `property` on a redirect (`mode`) stored under `modeProperty`. */
  def redirectOtherProperty(
      table: String,
      mode: String,
      property: String,
      modeProperty: String
  ): DeltaLifecycleException =
    stateRefused(
      table,
      "OTHER_MODE_PROPERTY",
      "mode" -> mode,
      "property" -> property,
      "modeProperty" -> modeProperty
    )

  /** A hand-made READY whose `destination` is not a Delta table. */
  def redirectDestinationNotDelta(table: String, destination: String): DeltaLifecycleException =
    stateRefused(table, "DESTINATION_NOT_A_DELTA_TABLE", "destination" -> destination)

  /** An access that NoRedirectRules keep, for application `app`, on a reader-writer source. */
  def readerWriterSourceKeptByRules(table: String, app: String): DeltaLifecycleException =
    stateRefused(table, "RULES_ON_READER_WRITER_SOURCE", "app" -> app)

  /** A read of a reader-writer source whose redirect is being enabled (read in place). */
  def readerWriterSourceBeingEnabled(table: String): DeltaLifecycleException =
    stateRefused(table, "ENABLING_READER_WRITER_SOURCE")

  /** UNSET REDIRECT's replay: commit `version` of `destination` is gone from its log. */
  def destinationCommitMissing(
      table: String,
      destination: String,
      version: Long
  ): DeltaLifecycleException =
    stateRefused(
      table,
      "DESTINATION_COMMIT_MISSING",
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

  def redirectCopyMismatch(detail: String): DeltaLifecycleException =
    error("DELTA_LIFECYCLE_REDIRECT_COPY_MISMATCH", "reason" -> detail)
}
