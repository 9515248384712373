package io.github.deltalifecycle.sql.plans

import io.github.deltalifecycle.sql.commands.CheckpointCommand
import io.github.deltalifecycle.sql.plans.LifecycleStatement.Target
import io.github.deltalifecycle.sql.resolution.LifecycleTableRef
import org.apache.spark.sql.execution.command.LeafRunnableCommand
import org.apache.spark.sql.types.StructType

/** `ALTER TABLE <table> CHECKPOINT [DRY RUN]` as parsed. */
case class CheckpointStatement(table: Seq[String], dryRun: Boolean) extends LifecycleStatement {
  override protected def resultSchema: StructType = CheckpointStatement.schema
  override def target: Target = Target.writing("CHECKPOINT")
  override def toCommand(ref: LifecycleTableRef): LeafRunnableCommand =
    CheckpointCommand(ref, dryRun)
}

object CheckpointStatement extends StatementResult {
  val schema: StructType = LifecycleStatement.resultWithTable(
    "version BIGINT NOT NULL, baseVersion BIGINT, kind STRING NOT NULL, status STRING NOT NULL",
    "reason STRING, commits INT NOT NULL",
    "reused ARRAY<STRING> NOT NULL, rewritten ARRAY<STRING> NOT NULL",
    "written ARRAY<STRING> NOT NULL",
    "reusedBytes BIGINT NOT NULL, rewrittenBytes BIGINT NOT NULL, writtenBytes BIGINT NOT NULL"
  )
}
