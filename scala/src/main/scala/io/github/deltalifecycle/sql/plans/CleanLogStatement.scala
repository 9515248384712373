package io.github.deltalifecycle.sql.plans

import io.github.deltalifecycle.sql.commands.CleanLogCommand
import io.github.deltalifecycle.sql.plans.LifecycleStatement.Target
import io.github.deltalifecycle.sql.resolution.LifecycleTableRef
import org.apache.spark.sql.execution.command.LeafRunnableCommand
import org.apache.spark.sql.types.StructType

/** `ALTER TABLE <table> CLEAN LOG [RETAIN n HOURS] [DRY RUN]` as parsed. */
case class CleanLogStatement(table: Seq[String], retainHours: Option[Long], dryRun: Boolean)
    extends LifecycleStatement {
  override protected def resultSchema: StructType = CleanLogStatement.schema
  override def target: Target = Target.writing("CLEAN LOG")
  override def toCommand(ref: LifecycleTableRef): LeafRunnableCommand =
    CleanLogCommand(ref, retainHours, dryRun)
}

object CleanLogStatement extends StatementResult {

  /** One row per expired log file: deleted, to be deleted (DRY RUN), or kept with the reason. */
  val schema: StructType = LifecycleStatement.resultWithTable(
    "path STRING NOT NULL, kind STRING NOT NULL, version BIGINT NOT NULL",
    "sizeInBytes BIGINT NOT NULL, action STRING NOT NULL, reason STRING"
  )
}
