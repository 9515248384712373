package io.github.deltalifecycle.features.redirect

import io.github.deltalifecycle.core.{DeltaLifecycleException, ErrorConditions}

/**
 * The errors of a stored redirect configuration whose lists are written other than joined by
 * commas: the values a field may hold, quoted, and the redirect properties a table holds together.
 * The others are raised with their factories in [[ErrorConditions]] (`InvalidRedirect`).
 */
object RedirectConfigErrors {

  /** A `field` whose `value` is none of those this client `known`s (State, Type, Spec.Mode). */
  def redirectUnknownValue(
      table: String,
      field: String,
      value: String,
      known: Seq[String]
  ): DeltaLifecycleException =
    ErrorConditions.InvalidRedirect.unknownValue(
      table = table,
      field = field,
      value = value,
      known = known.map(k => s"'$k'").mkString(", ")
    )

  def severalRedirectProperties(table: String, properties: Seq[String]): DeltaLifecycleException =
    ErrorConditions.InvalidRedirect.severalProperties(
      table = table,
      properties = properties.mkString(" and ")
    )
}
