package io.github.deltalifecycle.sql.commands

import io.github.deltalifecycle.features.compatibility.{DropFeaturesForClient, DropImpact}
import io.github.deltalifecycle.sql.resolution.{LifecycleTableRef, TableAccess}
import org.apache.spark.sql.{Row, SparkSession}

/** Drops (or, DRY RUN, plans) every feature that keeps a client from reading or writing a table. */
case class DropFeaturesForClientCommand(
    table: LifecycleTableRef,
    client: String,
    forWrites: Boolean,
    truncateHistory: Boolean,
    dryRun: Boolean
) extends DropCommand {

  override def run(spark: SparkSession): Seq[Row] = {
    val target = tableFor(spark, s"drop the features $client does not support from")
    val log = TableAccess.log(spark, target)
    val before = log.latestHead().protocol
    val results = RedirectFeatureRefusals.typed("DROP FEATURES FOR CLIENT", table) {
      new DropFeaturesForClient(spark, log, target.catalogTable, table.displayName)
        .run(client, forWrites, truncateHistory, dryRun)
    }
    if (!dryRun && results.nonEmpty) refreshCatalog(spark)
    // Each drop judged on the protocol before the whole statement: what the client (and others)
    // gain once every planned feature is gone is DESCRIBE COMPATIBILITY's answer afterwards.
    results.map(r => DropFeatureCommand.row(r, DropImpact.of(before, r.feature), table.displayName))
  }
}
