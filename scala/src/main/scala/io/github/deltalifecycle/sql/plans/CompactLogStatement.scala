package io.github.deltalifecycle.sql.plans

import io.github.deltalifecycle.sql.commands.CompactLogCommand
import io.github.deltalifecycle.sql.plans.LifecycleStatement.Target
import io.github.deltalifecycle.sql.resolution.LifecycleTableRef
import org.apache.spark.sql.execution.command.LeafRunnableCommand
import org.apache.spark.sql.types.StructType

/**
 * `ALTER TABLE <table> COMPACT LOG [FROM VERSION x TO VERSION y]` as parsed; `range` is None for
 * "the commits since the last checkpoint or compaction".
 */
case class CompactLogStatement(table: Seq[String], range: Option[(Long, Long)])
    extends LifecycleStatement {
  override protected def resultSchema: StructType = CompactLogStatement.schema
  override def target: Target = Target.writing("COMPACT LOG")
  override def toCommand(ref: LifecycleTableRef): LeafRunnableCommand =
    CompactLogCommand(ref, range)
}

object CompactLogStatement extends StatementResult {
  val schema: StructType = LifecycleStatement.resultWithTable(
    "startVersion BIGINT NOT NULL, endVersion BIGINT NOT NULL, status STRING NOT NULL, file STRING",
    "commits INT NOT NULL, actions INT NOT NULL",
    "bytesWritten BIGINT NOT NULL, inputBytes BIGINT NOT NULL"
  )
}
