package io.github.deltalifecycle.features.redirect

import io.github.deltalifecycle.core.DeltaLifecycleException
import io.github.deltalifecycle.core.DeltaLifecycleException.subError
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

  private val InvalidRedirect = "DELTA_LIFECYCLE_INVALID_REDIRECT"

  // ---- DELTA_LIFECYCLE_INVALID_REDIRECT: `table` names where the configuration is --------------

  def redirectNotJson(table: String, detail: String): DeltaLifecycleException =
    subError(InvalidRedirect, "NOT_JSON", "table" -> table, "detail" -> detail)

  def redirectNotAnObject(table: String): DeltaLifecycleException =
    subError(InvalidRedirect, "NOT_AN_OBJECT", "table" -> table)

  def redirectFieldMissing(table: String, field: String): DeltaLifecycleException =
    subError(InvalidRedirect, "FIELD_MISSING", "table" -> table, "field" -> field)

  def redirectFieldNotText(table: String, field: String): DeltaLifecycleException =
    subError(InvalidRedirect, "NOT_A_STRING", "table" -> table, "field" -> field)

  def redirectSpecNotJson(table: String): DeltaLifecycleException =
    subError(InvalidRedirect, "SPEC_NOT_JSON", "table" -> table)

  /** A `field` whose `value` is none of those this client `known`s (State, Type, Spec.Mode). */
  def redirectUnknownValue(
      table: String,
      field: String,
      value: String,
      known: Seq[String]
  ): DeltaLifecycleException =
    subError(
      InvalidRedirect,
      "UNKNOWN_VALUE",
      "table" -> table,
      "field" -> field,
      "value" -> value,
      "known" -> known.map(k => s"'$k'").mkString(", ")
    )

  def redirectRulesNotAList(table: String): DeltaLifecycleException =
    subError(InvalidRedirect, "RULES_NOT_A_LIST", "table" -> table)

  def redirectRuleWithoutAppName(table: String): DeltaLifecycleException =
    subError(InvalidRedirect, "RULE_WITHOUT_APP_NAME", "table" -> table)

  def redirectRuleOperationsNotAList(table: String, app: String): DeltaLifecycleException =
    subError(InvalidRedirect, "RULE_OPERATIONS_NOT_A_LIST", "table" -> table, "app" -> app)

  def severalRedirectProperties(table: String, properties: Seq[String]): DeltaLifecycleException =
    subError(
      InvalidRedirect,
      "SEVERAL_PROPERTIES",
      "table" -> table,
      "properties" -> properties.mkString(" and ")
    )

  def redirectFeatureWithoutProperty(table: String, feature: String): DeltaLifecycleException =
    subError(InvalidRedirect, "FEATURE_WITHOUT_PROPERTY", "table" -> table, "feature" -> feature)

  def redirectLocationInvalid(
      table: String,
      location: String,
      reason: String
  ): DeltaLifecycleException =
    subError(
      InvalidRedirect,
      "INVALID_LOCATION",
      "table" -> table,
      "location" -> location,
      "reason" -> reason
    )

  def redirectDestinationTableMissing(table: String, destination: String): DeltaLifecycleException =
    subError(
      InvalidRedirect,
      "DESTINATION_TABLE_MISSING",
      "table" -> table,
      "destination" -> destination
    )

  def redirectCommitMissing(table: String, version: Long): DeltaLifecycleException =
    subError(InvalidRedirect, "COMMIT_MISSING", "table" -> table, "version" -> version)

  def redirectDataChanged(table: String, version: Long): DeltaLifecycleException =
    subError(InvalidRedirect, "DATA_CHANGED", "table" -> table, "version" -> version)

  def noVersionBeforeRedirect(table: String): DeltaLifecycleException =
    subError(InvalidRedirect, "NO_VERSION_BEFORE_REDIRECT", "table" -> table)
}
