package io.github.deltalifecycle.sql.commands

import io.github.deltalifecycle.features.redirect.{RedirectPlan, RedirectResult, RoutingContext}
import io.github.deltalifecycle.sql.plans.RedirectStatus
import io.github.deltalifecycle.sql.resolution.{LifecycleTableRef, TableStorage}
import io.github.deltalifecycle.sql.routing.RedirectSession
import io.github.deltalifecycle.sql.unitycatalog.PathOperation
import org.apache.spark.sql.{Row, SparkSession}
import org.apache.spark.sql.catalyst.expressions.Attribute
import org.apache.spark.sql.connector.catalog.{Identifier, TableCatalog}
import org.apache.spark.sql.deltalifecycle.SparkInternals
import org.apache.spark.sql.execution.command.LeafRunnableCommand

/** The shared output of the redirect commands: their status row, or (DRY RUN) their plan row. */
trait RedirectCommand extends LeafRunnableCommand {
  protected def dryRun: Boolean = false

  override lazy val output: Seq[Attribute] =
    if (dryRun) RedirectStatus.planAttributes else RedirectStatus.outputAttributes

  protected def row(r: RedirectResult): Seq[Row] = Seq(Row(
    r.table,
    r.state,
    r.mode.map(_.sqlName).orNull,
    r.redirectType.orNull,
    r.destination.orNull,
    r.destinationLocation.orNull,
    r.noRedirectRules.map(_.describe),
    r.version,
    r.filesCopied,
    r.bytesCopied,
    r.commitVersions,
    r.steps,
    r.copyMode.orNull,
    r.copyModeReason.orNull,
    r.bytesThroughExecutors
  ))

  protected def planRow(p: RedirectPlan): Seq[Row] = Seq(Row(
    p.table,
    p.state,
    p.destination.orNull,
    p.destinationLocation.orNull,
    p.version,
    p.filesToCopy,
    p.bytesToCopy,
    p.filesAlreadyThere,
    p.bytesAlreadyThere,
    p.filesReferencedInPlace,
    p.filesGone,
    p.logFilesToCopy,
    p.logBytesToCopy,
    p.copyMode.orNull,
    p.copyModeReason.orNull,
    p.tasks,
    p.refusals.map(r => Row(r.condition, r.message)),
    p.steps
  ))

  /**
   * Runs `change` of `table` (a statement that writes, `operation`) with the table opened to write
   * ([[TableStorage.forWriting]]) and any other location for `elsewhere`, then forgets the table's
   * cached relation; the result is the command's row.
   */
  protected def changing(
      spark: SparkSession,
      table: LifecycleTableRef,
      operation: String,
      elsewhere: PathOperation = PathOperation.ReadWrite
  )(change: RoutingContext => RedirectResult): Seq[Row] = {
    val writable = TableStorage.forWriting(spark, table, operation)
    val result = change(RedirectSession.context(spark, writable, elsewhere, operation))
    refresh(spark, table)
    row(result)
  }

  /**
   * Forgets the catalog's cached relation of the table. Not `spark.catalog.refreshTable`: it
   * re-resolves the table, which now routes to a destination that has no catalog entry.
   */
  private def refresh(spark: SparkSession, table: LifecycleTableRef): Unit =
    table.catalogTable.foreach { t =>
      table.catalog.filterNot(_.equalsIgnoreCase(SparkInternals.SessionCatalogName)) match {
        case Some(name) => SparkInternals.catalog(spark, name) match {
            case c: TableCatalog =>
              c.invalidateTable(Identifier.of(t.identifier.database.toArray, t.identifier.table))
            case _ =>
          }
        case None => SparkInternals.sessionCatalog(spark).refreshTable(t.identifier)
      }
    }
}
