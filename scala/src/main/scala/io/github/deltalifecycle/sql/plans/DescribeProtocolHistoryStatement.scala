package io.github.deltalifecycle.sql.plans

import io.github.deltalifecycle.sql.commands.DescribeProtocolHistoryCommand
import io.github.deltalifecycle.sql.plans.LifecycleStatement.Target
import io.github.deltalifecycle.sql.resolution.LifecycleTableRef
import org.apache.spark.sql.execution.command.LeafRunnableCommand
import org.apache.spark.sql.types._

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
    StructField("version", LongType, nullable = false),
    StructField("timestamp", TimestampType),
    StructField("operation", StringType),
    StructField("minReaderVersion", IntegerType, nullable = false),
    StructField("minWriterVersion", IntegerType, nullable = false),
    StructField("readerFeatures", ArrayType(StringType, containsNull = false)),
    StructField("writerFeatures", ArrayType(StringType, containsNull = false)),
    StructField("checkpoint", StringType),
    StructField("compactions", ArrayType(StringType, containsNull = false), nullable = false),
    StructField("requireCheckpointProtectionBeforeVersion", LongType)
  )
}
