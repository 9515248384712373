package io.github.deltalifecycle.sql.plans

import io.github.deltalifecycle.sql.commands.DescribeProtocolHistoryCommand
import io.github.deltalifecycle.sql.plans.LifecycleStatement.Target
import io.github.deltalifecycle.sql.resolution.LifecycleTableRef
import org.apache.spark.sql.execution.command.LeafRunnableCommand
import org.apache.spark.sql.types.StructType

/**
 * `DESCRIBE PROTOCOL HISTORY <table>` as parsed: the table is still a name. The analysis rule
 * [[io.github.deltalifecycle.sql.analysis.ResolveLifecycleStatements]] turns it into
 * [[io.github.deltalifecycle.sql.commands.DescribeProtocolHistoryCommand]].
 */
case class DescribeProtocolHistoryStatement(table: Seq[String]) extends LifecycleStatement {
  override protected def resultSchema: StructType = DescribeProtocolHistoryStatement.schema
  override def target: Target = Target.reading
  override def toCommand(ref: LifecycleTableRef): LeafRunnableCommand =
    DescribeProtocolHistoryCommand(ref)
}

object DescribeProtocolHistoryStatement extends StatementResult {
  val schema: StructType = LifecycleStatement.resultWithTable(
    "version BIGINT NOT NULL, timestamp TIMESTAMP, operation STRING",
    "minReaderVersion INT NOT NULL, minWriterVersion INT NOT NULL",
    "readerFeatures ARRAY<STRING>, writerFeatures ARRAY<STRING>",
    "checkpoint STRING, compactions ARRAY<STRING> NOT NULL",
    "requireCheckpointProtectionBeforeVersion BIGINT"
  )
}
