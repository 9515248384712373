package io.github.deltalifecycle.features.redirect

import io.github.deltalifecycle.core.DeltaLifecycleException
import io.github.deltalifecycle.core.DeltaLifecycleException.{error, subError}

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

  private val RedirectStateRefused = "DELTA_LIFECYCLE_REDIRECT_STATE"

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

  /**
   * SET REDIRECT on a table already redirected (`mode`) to `destination`: past enabling, or (when
   * `beingEnabled`) to another destination whose redirect is being enabled.
   */
  def redirectAlreadySet(
      table: String,
      mode: String,
      destination: String,
      state: String,
      beingEnabled: Boolean
  ): DeltaLifecycleException =
    subError(
      RedirectStateRefused,
      if (beingEnabled) "ENABLE_IN_PROGRESS" else "ALREADY_REDIRECTED",
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

  def redirectCopyMismatch(detail: String): DeltaLifecycleException =
    error("DELTA_LIFECYCLE_REDIRECT_COPY_MISMATCH", "reason" -> detail)
}
