package io.github.deltalifecycle.sql.commands

import io.github.deltalifecycle.features.compatibility.{DropFeaturesForClient, DropImpact}
import io.github.deltalifecycle.sql.plans.DropFeatureStatement
import io.github.deltalifecycle.sql.resolution.{LifecycleTableRef, TableAccess, TableStorage}
import io.github.deltalifecycle.sql.routing.StatementRouting
import org.apache.spark.sql.{Row, SparkSession}
import org.apache.spark.sql.catalyst.expressions.Attribute
import org.apache.spark.sql.execution.command.LeafRunnableCommand

/** Drops (or, DRY RUN, plans) every feature that keeps a client from reading or writing a table. */
case class DropFeaturesForClientCommand(
    table: LifecycleTableRef,
    client: String,
    forWrites: Boolean,
    truncateHistory: Boolean,
    dryRun: Boolean
) extends LeafRunnableCommand {

  override val output: Seq[Attribute] = DropFeatureStatement.outputAttributes

  override def run(spark: SparkSession): Seq[Row] = {
    val target =
      if (dryRun) table
      else TableStorage.forWriting(spark, table, s"drop the features $client does not support from")
    val log = TableAccess.log(spark, target)
    val before = log.latestHead().protocol
    val results = StatementRouting.refusalsTyped("DROP FEATURES FOR CLIENT", table) {
      new DropFeaturesForClient(spark, log, target.catalogTable, table.displayName)
        .run(client, forWrites, truncateHistory, dryRun)
    }
    if (!dryRun && results.nonEmpty)
      table.catalogTable.foreach(t => spark.catalog.refreshTable(t.identifier.quotedString))
    // Each drop judged on the protocol before the whole statement: what the client (and others)
    // gain once every planned feature is gone is DESCRIBE COMPATIBILITY's answer afterwards.
    results.map(r => DropFeatureCommand.row(r, DropImpact.of(before, r.feature), table.displayName))
  }
}
