package io.github.deltalifecycle.sql

import io.github.deltalifecycle.core.DeltaLifecycleException
import io.github.deltalifecycle.core.DeltaLifecycleException.{error, subError}
import io.github.deltalifecycle.core.LifecycleErrorConditions.InvalidArgument

/** The errors of a statement's table and of the settings it reads. */
object StatementErrors {
  def tableNotFound(name: String): DeltaLifecycleException =
    error("DELTA_LIFECYCLE_TABLE_NOT_FOUND", "table" -> name)

  def notDeltaProvider(name: String, provider: String): DeltaLifecycleException =
    error("DELTA_LIFECYCLE_NOT_DELTA_PROVIDER", "table" -> name, "provider" -> provider)

  def invalidTablePath(location: String, reason: String): DeltaLifecycleException =
    subError(InvalidArgument, "INVALID_TABLE_PATH", "location" -> location, "reason" -> reason)

  def notSessionCatalogTable(name: String): DeltaLifecycleException =
    subError(InvalidArgument, "NOT_A_SESSION_CATALOG_TABLE", "name" -> name)

  def unknownSettingValue(
      setting: String,
      value: String,
      values: Seq[String]
  ): DeltaLifecycleException =
    subError(
      InvalidArgument,
      "UNKNOWN_SETTING_VALUE",
      "setting" -> setting,
      "value" -> value,
      "values" -> values.mkString(", ")
    )

  def administratorSetting(setting: String): DeltaLifecycleException =
    error("DELTA_LIFECYCLE_ADMINISTRATOR_SETTING", "setting" -> setting)

  def testSwitchUnavailable(setting: String, property: String): DeltaLifecycleException =
    error("DELTA_LIFECYCLE_TEST_SWITCH_UNAVAILABLE", "setting" -> setting, "property" -> property)
}
