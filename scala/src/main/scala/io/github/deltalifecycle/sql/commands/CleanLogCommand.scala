package io.github.deltalifecycle.sql.commands

import java.util.concurrent.TimeUnit

import io.github.deltalifecycle.features.cleanup.LogCleanup
import io.github.deltalifecycle.sql.resolution.{LifecycleTableRef, TableAccess, TableStorage}
import io.github.deltalifecycle.sql.plans.CleanLogStatement
import org.apache.spark.sql.{Row, SparkSession}
import org.apache.spark.sql.catalyst.expressions.Attribute
import org.apache.spark.sql.execution.command.LeafRunnableCommand

/** Deletes expired log files under checkpoint protection, or (DRY RUN) lists them. */
case class CleanLogCommand(table: LifecycleTableRef, retainHours: Option[Long], dryRun: Boolean)
    extends LeafRunnableCommand {

  override val output: Seq[Attribute] = CleanLogStatement.outputAttributes

  override def run(spark: SparkSession): Seq[Row] = {
    val log = TableAccess.log(
      spark,
      if (dryRun) table else TableStorage.forWriting(spark, table, "clean the log of")
    )
    val plan =
      LogCleanup.plan(log, retainHours.map(TimeUnit.HOURS.toMillis), System.currentTimeMillis())
    if (!dryRun) LogCleanup.execute(log, plan)
    val done = if (dryRun) "to delete" else "deleted"
    plan.entries.map { e =>
      Row(
        e.path.toString,
        e.kind,
        e.version,
        e.sizeInBytes,
        if (e.deleted) done else "kept",
        e.keptBecause.orNull,
        table.displayName
      )
    }
  }
}
