package io.github.deltalifecycle.sql.commands

import io.github.deltalifecycle.features.compatibility.{DropFeaturesForClient, DropImpact}
import io.github.deltalifecycle.sql.commands.DropCommand.Drop
import io.github.deltalifecycle.sql.resolution.{LifecycleTableRef, TableAccess}
import org.apache.spark.sql.SparkSession

/** Drops (or, DRY RUN, plans) every feature that keeps a client from reading or writing a table. */
case class DropFeaturesForClientCommand(
    table: LifecycleTableRef,
    client: String,
    forWrites: Boolean,
    truncateHistory: Boolean,
    dryRun: Boolean
) extends DropCommand {

  override protected def action: String = s"drop the features $client does not support from"

  override protected def drop(spark: SparkSession, target: LifecycleTableRef): Seq[Drop] = {
    val log = TableAccess.log(spark, target)
    val before = log.latestHead().protocol
    val results = RedirectFeatureRefusals.typed("DROP FEATURES FOR CLIENT", table) {
      new DropFeaturesForClient(spark, log, target.catalogTable, table.displayName)
        .run(client, forWrites, truncateHistory, dryRun)
    }
    // Each drop judged on the protocol before the whole statement: what the client (and others)
    // gain once every planned feature is gone is DESCRIBE COMPATIBILITY's answer afterwards.
    results.map(r => r -> DropImpact.of(before, r.feature))
  }
}
