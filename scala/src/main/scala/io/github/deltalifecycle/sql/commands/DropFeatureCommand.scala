package io.github.deltalifecycle.sql.commands

import io.github.deltalifecycle.features.compatibility.DropImpact
import io.github.deltalifecycle.features.dropfeature.{DropFeature, DropFeatureResult, DropMode}
import io.github.deltalifecycle.sql.commands.DropCommand.Drop
import io.github.deltalifecycle.sql.resolution.{LifecycleTableRef, TableAccess, TableStorage}
import io.github.deltalifecycle.sql.plans.DropFeatureStatement
import org.apache.spark.sql.{Row, SparkSession}
import org.apache.spark.sql.catalyst.expressions.Attribute
import org.apache.spark.sql.execution.command.LeafRunnableCommand

/**
 * What DROP FEATURE and DROP FEATURES FOR CLIENT share: DROP FEATURE's result columns, the table
 * they drop from, one result row per feature dropped, and the refresh of the catalog's cached table
 * after a drop.
 */
private[commands] trait DropCommand extends LeafRunnableCommand {
  def table: LifecycleTableRef
  def dryRun: Boolean

  override val output: Seq[Attribute] = DropFeatureStatement.outputAttributes

  /** What the drop does to the table, as a refusal to write it says it ("drop x from"). */
  protected def action: String

  /** Drops from `target` (plans, for a DRY RUN): each drop with what it changes for clients. */
  protected def drop(spark: SparkSession, target: LifecycleTableRef): Seq[Drop]

  override def run(spark: SparkSession): Seq[Row] = {
    // The table named for a DRY RUN, else its storage for writing.
    val target = if (dryRun) table else TableStorage.forWriting(spark, table, action)
    val drops = drop(spark, target)
    if (!dryRun && drops.nonEmpty) {
      table.catalogTable.foreach(t => spark.catalog.refreshTable(t.identifier.quotedString))
    }
    drops.map { case (result, impact) => DropFeatureCommand.row(result, impact, table.displayName) }
  }
}

private[commands] object DropCommand {

  /** A feature's drop (or plan), with what it changes for the clients of the table. */
  type Drop = (DropFeatureResult, DropImpact)
}

/** Drops a table feature (fast, or with history truncation), or (DRY RUN) plans the drop. */
case class DropFeatureCommand(
    table: LifecycleTableRef,
    feature: String,
    truncateHistory: Boolean,
    dryRun: Boolean
) extends DropCommand {

  override protected def action: String = s"drop $feature from"

  override protected def drop(spark: SparkSession, target: LifecycleTableRef): Seq[Drop] = {
    val dropper =
      new DropFeature(spark, TableAccess.log(spark, target), target.catalogTable, table.displayName)
    // One read of the latest version: the drop plans from it, the impact is judged on it.
    val head = dropper.log.latestHead()
    val r = RedirectFeatureRefusals.typed("DROP FEATURE", table) {
      dropper.run(head, feature, truncateHistory, dryRun)
    }
    Seq(r -> DropImpact.of(head.protocol, r.feature))
  }
}

object DropFeatureCommand {

  /** A drop's result as a row of [[DropFeatureStatement.schema]]. */
  def row(r: DropFeatureResult, impact: DropImpact, table: String): Row = {
    def long(v: Option[Long]): Any = v.map(Long.box).orNull
    Row(
      r.feature,
      r.mode.name,
      r.status.name,
      r.filesRewritten,
      r.bytesRewritten,
      r.commitVersions,
      r.checkpointVersions,
      long(r.protectedBefore),
      long(r.readableWithoutFeatureFrom),
      long(r.historyTruncatedBefore),
      r.steps.map(s => if (s.files > 0) s"${s.description} (${s.bytes} bytes)" else s.description),
      impact.gains,
      // Only the fast drop adds checkpointProtection.
      if (r.mode == DropMode.Fast) impact.protectionBlocksWrites else Nil,
      table
    )
  }
}
