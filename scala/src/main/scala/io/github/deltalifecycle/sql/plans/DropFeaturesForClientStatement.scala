package io.github.deltalifecycle.sql.plans

import io.github.deltalifecycle.sql.commands.DropFeaturesForClientCommand
import io.github.deltalifecycle.sql.plans.LifecycleStatement.Target
import io.github.deltalifecycle.sql.resolution.LifecycleTableRef
import org.apache.spark.sql.execution.command.LeafRunnableCommand
import org.apache.spark.sql.types.StructType

/**
 * `ALTER TABLE <table> DROP FEATURES FOR CLIENT '<client>' [FOR WRITES] [TRUNCATE HISTORY] [DRY
 * RUN]` as parsed. One result row per feature, as DROP FEATURE's.
 */
case class DropFeaturesForClientStatement(
    table: Seq[String],
    client: String,
    forWrites: Boolean,
    truncateHistory: Boolean,
    dryRun: Boolean
) extends LifecycleStatement {
  override protected def resultSchema: StructType = DropFeatureStatement.schema
  override def target: Target = Target.writing("DROP FEATURES FOR CLIENT")
  override def toCommand(ref: LifecycleTableRef): LeafRunnableCommand =
    DropFeaturesForClientCommand(ref, client, forWrites, truncateHistory, dryRun)
}
