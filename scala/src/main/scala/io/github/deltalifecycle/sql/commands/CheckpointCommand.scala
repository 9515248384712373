package io.github.deltalifecycle.sql.commands

import io.github.deltalifecycle.features.checkpoint.TableCheckpoint
import io.github.deltalifecycle.sql.plans.CheckpointStatement
import io.github.deltalifecycle.sql.resolution.{LifecycleTableRef, TableAccess, TableStorage}
import org.apache.spark.sql.{Row, SparkSession}
import org.apache.spark.sql.catalyst.expressions.Attribute
import org.apache.spark.sql.execution.command.LeafRunnableCommand

/** Writes a checkpoint of the latest version at the cost of what changed since the last one. */
case class CheckpointCommand(table: LifecycleTableRef, dryRun: Boolean)
    extends LeafRunnableCommand {

  override val output: Seq[Attribute] = CheckpointStatement.outputAttributes

  override def run(spark: SparkSession): Seq[Row] = {
    val ref = if (dryRun) table else TableStorage.forWriting(spark, table, "checkpoint")
    val result = new TableCheckpoint(spark, TableAccess.log(spark, ref), ref.catalogTable)
      .run(dryRun)
    Seq(Row(
      result.version,
      result.baseVersion.orNull,
      result.kind,
      result.status,
      result.reason.orNull,
      result.commits,
      result.reused,
      result.rewritten,
      result.written,
      result.reusedBytes,
      result.rewrittenBytes,
      result.writtenBytes,
      table.displayName
    ))
  }
}
