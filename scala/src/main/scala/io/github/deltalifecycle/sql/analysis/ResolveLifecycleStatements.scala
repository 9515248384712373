package io.github.deltalifecycle.sql.analysis

import io.github.deltalifecycle.sql.resolution.LifecycleTableRef
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

/** Resolves the table of each parsed statement and replaces the statement with its command. */
case class ResolveLifecycleStatements(spark: SparkSession) extends Rule[LogicalPlan] {
  override def apply(plan: LogicalPlan): LogicalPlan = plan.resolveOperators {
    case DescribeProtocolHistoryStatement(table) =>
      DescribeProtocolHistoryCommand(LifecycleTableRef.resolve(spark, table))
    case DescribeCompatibilityStatement(table, version, client) =>
      DescribeCompatibilityCommand(LifecycleTableRef.resolve(spark, table), version, client)
    case DropFeaturesForClientStatement(table, client, forWrites, truncateHistory, dryRun) =>
      DropFeaturesForClientCommand(
        LifecycleTableRef.resolve(spark, table),
        client,
        forWrites,
        truncateHistory,
        dryRun
      )
    case CompactLogStatement(table, range) =>
      CompactLogCommand(LifecycleTableRef.resolve(spark, table), range)
    case CleanLogStatement(table, retainHours, dryRun) =>
      CleanLogCommand(LifecycleTableRef.resolve(spark, table), retainHours, dryRun)
    case DropFeatureStatement(table, feature, truncateHistory, dryRun) =>
      DropFeatureCommand(LifecycleTableRef.resolve(spark, table), feature, truncateHistory, dryRun)
    case SetRedirectStatement(table, mode, location, targetTable, rules, dryRun) =>
      SetRedirectCommand(
        LifecycleTableRef.resolve(spark, table),
        mode,
        location,
        targetTable,
        rules,
        dryRun
      )
    case UnsetRedirectStatement(table, dryRun) =>
      UnsetRedirectCommand(LifecycleTableRef.resolve(spark, table), dryRun)
    case DescribeRedirectStatement(table) =>
      DescribeRedirectCommand(LifecycleTableRef.resolve(spark, table))
  }
}
