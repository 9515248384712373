package io.github.deltalifecycle.sql.analysis

import io.github.deltalifecycle.core.ErrorConditions
import io.github.deltalifecycle.features.redirect.RedirectMode
import io.github.deltalifecycle.sql.resolution.LifecycleTableRef
import io.github.deltalifecycle.sql.commands.ChangeRedirectPropertyCommand
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.analysis.UnresolvedTable
import org.apache.spark.sql.catalyst.plans.logical.{
  LogicalPlan,
  SetTableProperties,
  UnsetTableProperties
}
import org.apache.spark.sql.catalyst.rules.Rule

/**
 * `ALTER TABLE t SET/UNSET TBLPROPERTIES` on a redirect property becomes this project's validated
 * state change. It runs before tables are resolved, because resolving `t` already follows its
 * redirect, and a broken redirect value must stay fixable.
 */
case class InterceptRedirectPropertyChanges(spark: SparkSession) extends Rule[LogicalPlan] {
  private def isRedirectKey(k: String): Boolean =
    RedirectMode.featureNames.exists(f => k.equalsIgnoreCase("delta." + f))

  override def apply(plan: LogicalPlan): LogicalPlan = plan.transformDown {
    case SetTableProperties(UnresolvedTable(name, _, _), props)
        if props.keys.exists(isRedirectKey) =>
      only(props.keys.toSeq)
      ChangeRedirectPropertyCommand(
        LifecycleTableRef.resolve(spark, name),
        canonical(props.head._1),
        Some(props.head._2)
      )
    case UnsetTableProperties(UnresolvedTable(name, _, _), keys, _) if keys.exists(isRedirectKey) =>
      only(keys)
      ChangeRedirectPropertyCommand(
        LifecycleTableRef.resolve(spark, name),
        canonical(keys.head),
        None
      )
  }

  private def canonical(key: String): String =
    RedirectMode.all.map(_.property).find(_.equalsIgnoreCase(key)).getOrElse(key)

  private def only(keys: Seq[String]): Unit =
    if (keys.size != 1) throw ErrorConditions.InvalidArgument.redirectPropertyNotAlone(keys)
}
