package io.github.deltalifecycle.features.redirect

import io.github.deltalifecycle.core.{DeltaLifecycleException, ErrorConditions}

/**
 * The errors of a redirect whose values need formatting or repeat one another: the operations a
 * write refused, a chain of redirects, the locations allowed. The others (what a redirect's state
 * refuses, a destination that cannot take it, a copy that does not match) are raised with their
 * factories in [[ErrorConditions]].
 */
object RedirectErrors {

  /** A write of `operations` (none named: any write) refused while the redirect is `state`. */
  def redirectWriteRefused(
      table: String,
      state: String,
      operations: Set[String]
  ): DeltaLifecycleException =
    ErrorConditions.RedirectWriteRefused.inProgress(
      operation =
        if (operations.isEmpty) "write to"
        else operations.toSeq.sorted.mkString("/").toLowerCase + " on",
      table = table,
      state = state
    )

  def streamPositionUnmapped(table: String, from: String, reason: String): DeltaLifecycleException =
    ErrorConditions.streamPositionUnmapped(table = table, from = from, reason = reason, to = table)

  def redirectChain(chain: Seq[String]): DeltaLifecycleException =
    ErrorConditions.redirectChain(
      hops = chain.mkString(" -> "),
      shape = if (chain.distinct.size < chain.size) "cycle" else "chain"
    )

  def redirectLocationNotAllowed(
      location: String,
      prefixes: Seq[String],
      prefixesSetting: String
  ): DeltaLifecycleException =
    ErrorConditions.redirectLocationNotAllowed(
      location = location,
      prefixesKey = prefixesSetting,
      prefixes = prefixes.mkString(",")
    )
}
