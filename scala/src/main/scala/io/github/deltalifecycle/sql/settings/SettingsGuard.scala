package io.github.deltalifecycle.sql.settings

import io.github.deltalifecycle.core.{ErrorConditions, FaultInjection}
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.execution.command.SetCommand

/**
 * Refuses SQL `SET key=value` of a setting a session must not change, with an error that names it
 * and says who can: an administrator's setting ([[AdministratorSettings]]), or, in a JVM not
 * started for tests, a test switch ([[FaultInjection]]). A check after analysis, so the statement
 * fails before the command runs, over Spark Connect as in a classic session.
 */
object SettingsGuard {
  def check(plan: LogicalPlan): Unit = plan match {
    case SetCommand(Some((key, Some(_)))) => checkSettable(key)
    case _ =>
  }

  def checkSettable(key: String): Unit = {
    if (AdministratorSettings.Keys.contains(key)) {
      throw ErrorConditions.administratorSetting(key)
    }
    if (FaultInjection.Keys.contains(key) && !FaultInjection.inTestJvm) {
      throw ErrorConditions.testSwitchUnavailable(
        setting = key,
        property = FaultInjection.TestingProperty
      )
    }
  }
}
