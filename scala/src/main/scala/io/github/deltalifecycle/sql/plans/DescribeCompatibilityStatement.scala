package io.github.deltalifecycle.sql.plans

import io.github.deltalifecycle.sql.commands.DescribeCompatibilityCommand
import io.github.deltalifecycle.sql.plans.LifecycleStatement.Target
import io.github.deltalifecycle.sql.resolution.LifecycleTableRef
import org.apache.spark.sql.execution.command.LeafRunnableCommand
import org.apache.spark.sql.types.StructType

/** `DESCRIBE COMPATIBILITY <table> [VERSION AS OF v] [FOR '<client>']` as parsed. */
case class DescribeCompatibilityStatement(
    table: Seq[String],
    version: Option[Long],
    client: Option[String]
) extends LifecycleStatement {
  override protected def resultSchema: StructType = DescribeCompatibilityStatement.schema
  override def target: Target = Target.reading
  override def toCommand(ref: LifecycleTableRef): LeafRunnableCommand =
    DescribeCompatibilityCommand(ref, version, client)
}

object DescribeCompatibilityStatement extends StatementResult {
  val schema: StructType = LifecycleStatement.resultWithTable(
    "client STRING NOT NULL, versions STRING NOT NULL, evidence STRING NOT NULL",
    "canRead STRING NOT NULL, canWrite STRING NOT NULL",
    "readBlockers ARRAY<STRING> NOT NULL, writeBlockers ARRAY<STRING> NOT NULL",
    "unknownForRead ARRAY<STRING> NOT NULL, unknownForWrite ARRAY<STRING> NOT NULL",
    "dropForRead ARRAY<STRING> NOT NULL, dropForWrite ARRAY<STRING> NOT NULL",
    "notDroppable ARRAY<STRING> NOT NULL, writeNeedsTruncateHistory BOOLEAN NOT NULL",
    "sources ARRAY<STRING> NOT NULL"
  )
}
