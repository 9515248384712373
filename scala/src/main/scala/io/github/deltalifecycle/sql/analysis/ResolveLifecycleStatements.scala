package io.github.deltalifecycle.sql.analysis

import io.github.deltalifecycle.features.redirect.{Access, RedirectMode}
import io.github.deltalifecycle.sql.resolution.LifecycleTableRef
import io.github.deltalifecycle.sql.routing.StatementRouting
import io.github.deltalifecycle.sql.commands.{
  CleanLogCommand,
  CompactLogCommand,
  DescribeCompatibilityCommand,
  DescribeProtocolHistoryCommand,
  DescribeRedirectCommand,
  DropFeatureCommand,
  DropFeaturesForClientCommand,
  SetRedirectCommand,
  UnsetRedirectCommand
}
import io.github.deltalifecycle.sql.plans._
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.catalyst.rules.Rule

/**
 * Resolves the table of each parsed statement, to the table it acts on, and replaces the statement
 * with its command. A statement follows the named table's redirect as every query does
 * ([[StatementRouting]]), except the redirect's own statements and a drop of a redirect feature,
 * which are about the table named.
 */
case class ResolveLifecycleStatements(spark: SparkSession) extends Rule[LogicalPlan] {
  override def apply(plan: LogicalPlan): LogicalPlan = plan.resolveOperators {
    case DescribeProtocolHistoryStatement(table) =>
      DescribeProtocolHistoryCommand(routed(table, Access.Read))
    case DescribeCompatibilityStatement(table, version, client) =>
      DescribeCompatibilityCommand(routed(table, Access.Read), version, client)
    case DropFeaturesForClientStatement(table, client, forWrites, truncateHistory, dryRun) =>
      DropFeaturesForClientCommand(
        routed(table, writing("DROP FEATURES FOR CLIENT")),
        client,
        forWrites,
        truncateHistory,
        dryRun
      )
    case CompactLogStatement(table, range) =>
      CompactLogCommand(routed(table, writing("COMPACT LOG")), range)
    case CleanLogStatement(table, retainHours, dryRun) =>
      CleanLogCommand(routed(table, writing("CLEAN LOG")), retainHours, dryRun)
    case DropFeatureStatement(table, feature, truncateHistory, dryRun) =>
      val ref =
        if (RedirectMode.featureNames.exists(_.equalsIgnoreCase(feature))) named(table)
        else routed(table, writing("DROP FEATURE"))
      DropFeatureCommand(ref, feature, truncateHistory, dryRun)
    case SetRedirectStatement(table, mode, location, targetTable, rules, dryRun) =>
      SetRedirectCommand(named(table), mode, location, targetTable, rules, dryRun)
    case UnsetRedirectStatement(table, dryRun) =>
      UnsetRedirectCommand(named(table), dryRun)
    case DescribeRedirectStatement(table) =>
      DescribeRedirectCommand(named(table))
  }

  private def named(table: Seq[String]): LifecycleTableRef = LifecycleTableRef.resolve(spark, table)

  private def routed(table: Seq[String], access: Access): LifecycleTableRef =
    StatementRouting.routed(spark, named(table), access)

  private def writing(operation: String): Access = Access.Write(Set(operation))
}
