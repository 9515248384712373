package io.github.deltalifecycle.sql.analysis

import io.github.deltalifecycle.sql.plans.LifecycleStatement
import io.github.deltalifecycle.sql.plans.LifecycleStatement.Target
import io.github.deltalifecycle.sql.resolution.LifecycleTableRef
import io.github.deltalifecycle.sql.routing.Router
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.catalyst.rules.Rule

/**
 * Resolves the table of each parsed statement, to the table it acts on, and replaces the statement
 * with its command. Each statement says which table that is ([[LifecycleStatement.target]]): where
 * the named table's redirect routes it, as every query's ([[Router]]), or, for the redirect's own
 * statements and a drop of a redirect feature, the table named.
 */
case class ResolveLifecycleStatements(spark: SparkSession) extends Rule[LogicalPlan] {
  override def apply(plan: LogicalPlan): LogicalPlan = plan.resolveOperators {
    case statement: LifecycleStatement => statement.toCommand(actedOn(statement))
  }

  private def actedOn(statement: LifecycleStatement): LifecycleTableRef = {
    val named = LifecycleTableRef.resolve(spark, statement.table)
    statement.target match {
      case Target.Named => named
      case Target.Routed(access) =>
        val route = Router.route(spark, named, access)
        Router.destinationTable(spark, route, Some((named, access))).getOrElse(named)
    }
  }
}
