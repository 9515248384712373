package io.github.deltalifecycle.features.redirect

import io.github.deltalifecycle.core.DeltaLifecycleException
import io.github.deltalifecycle.core.DeltaLifecycleException.{subError, SubConditions}
import io.github.deltalifecycle.core.LifecycleErrorConditions.InvalidArgument

/**
 * The errors of a redirect's configuration: the arguments of SET REDIRECT and of a change of its
 * properties that it refuses, and a stored configuration it cannot use.
 */
object RedirectConfigErrors {
  def emptyRedirectLocation(table: String): DeltaLifecycleException =
    subError(InvalidArgument, "EMPTY_REDIRECT_LOCATION", "table" -> table)

  def unusableRedirectTarget(location: String, reason: String): DeltaLifecycleException =
    subError(
      InvalidArgument,
      "UNUSABLE_REDIRECT_TARGET",
      "location" -> location,
      "reason" -> reason
    )

  /** SET REDIRECT TO TABLE `name`, a Unity Catalog table without LOCATION or a storage root. */
  def redirectTargetNeedsLocation(name: String): DeltaLifecycleException =
    subError(InvalidArgument, "REDIRECT_TARGET_NEEDS_LOCATION", "name" -> name)

  /** One ALTER TABLE that changes a redirect property together with `properties`' others. */
  def redirectPropertyNotAlone(properties: Seq[String]): DeltaLifecycleException =
    subError(
      InvalidArgument,
      "REDIRECT_PROPERTY_NOT_ALONE",
      "properties" -> properties.mkString(", ")
    )

  /** A redirect property in delta-spark's preview spelling; this client writes `written`. */
  def previewRedirectProperty(property: String, written: Seq[String]): DeltaLifecycleException =
    subError(
      InvalidArgument,
      "PREVIEW_REDIRECT_PROPERTY",
      "property" -> property,
      "properties" -> written.mkString(", ")
    )

  // ---- DELTA_LIFECYCLE_INVALID_REDIRECT: `table` names where the configuration is --------------

  private val invalidRedirect = new SubConditions("DELTA_LIFECYCLE_INVALID_REDIRECT", "table")

  def redirectNotJson(table: String, detail: String): DeltaLifecycleException =
    invalidRedirect(table, "NOT_JSON", "detail" -> detail)

  def redirectNotAnObject(table: String): DeltaLifecycleException =
    invalidRedirect(table, "NOT_AN_OBJECT")

  def redirectFieldMissing(table: String, field: String): DeltaLifecycleException =
    invalidRedirect(table, "FIELD_MISSING", "field" -> field)

  def redirectFieldNotText(table: String, field: String): DeltaLifecycleException =
    invalidRedirect(table, "NOT_A_STRING", "field" -> field)

  def redirectSpecNotJson(table: String): DeltaLifecycleException =
    invalidRedirect(table, "SPEC_NOT_JSON")

  /** A `field` whose `value` is none of those this client `known`s (State, Type, Spec.Mode). */
  def redirectUnknownValue(
      table: String,
      field: String,
      value: String,
      known: Seq[String]
  ): DeltaLifecycleException =
    invalidRedirect(
      table,
      "UNKNOWN_VALUE",
      "field" -> field,
      "value" -> value,
      "known" -> known.map(k => s"'$k'").mkString(", ")
    )

  def redirectRulesNotAList(table: String): DeltaLifecycleException =
    invalidRedirect(table, "RULES_NOT_A_LIST")

  def redirectRuleWithoutAppName(table: String): DeltaLifecycleException =
    invalidRedirect(table, "RULE_WITHOUT_APP_NAME")

  def redirectRuleOperationsNotAList(table: String, app: String): DeltaLifecycleException =
    invalidRedirect(table, "RULE_OPERATIONS_NOT_A_LIST", "app" -> app)

  def severalRedirectProperties(table: String, properties: Seq[String]): DeltaLifecycleException =
    invalidRedirect(table, "SEVERAL_PROPERTIES", "properties" -> properties.mkString(" and "))

  def redirectFeatureWithoutProperty(table: String, feature: String): DeltaLifecycleException =
    invalidRedirect(table, "FEATURE_WITHOUT_PROPERTY", "feature" -> feature)

  def redirectLocationInvalid(
      table: String,
      location: String,
      reason: String
  ): DeltaLifecycleException =
    invalidRedirect(table, "INVALID_LOCATION", "location" -> location, "reason" -> reason)

  def redirectDestinationTableMissing(table: String, destination: String): DeltaLifecycleException =
    invalidRedirect(table, "DESTINATION_TABLE_MISSING", "destination" -> destination)

  def redirectCommitMissing(table: String, version: Long): DeltaLifecycleException =
    invalidRedirect(table, "COMMIT_MISSING", "version" -> version)

  def redirectDataChanged(table: String, version: Long): DeltaLifecycleException =
    invalidRedirect(table, "DATA_CHANGED", "version" -> version)

  def noVersionBeforeRedirect(table: String): DeltaLifecycleException =
    invalidRedirect(table, "NO_VERSION_BEFORE_REDIRECT")
}
