package io.github.deltalifecycle.sql.plans

import io.github.deltalifecycle.sql.commands.DescribeCompatibilityCommand
import io.github.deltalifecycle.sql.plans.LifecycleStatement.Target
import io.github.deltalifecycle.sql.resolution.LifecycleTableRef
import org.apache.spark.sql.execution.command.LeafRunnableCommand
import org.apache.spark.sql.types._

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
  private def names = ArrayType(StringType, containsNull = false)

  val schema: StructType = LifecycleStatement.resultWithTable(
    StructField("client", StringType, nullable = false),
    StructField("versions", StringType, nullable = false),
    StructField("evidence", StringType, nullable = false),
    StructField("canRead", StringType, nullable = false),
    StructField("canWrite", StringType, nullable = false),
    StructField("readBlockers", names, nullable = false),
    StructField("writeBlockers", names, nullable = false),
    StructField("unknownForRead", names, nullable = false),
    StructField("unknownForWrite", names, nullable = false),
    StructField("dropForRead", names, nullable = false),
    StructField("dropForWrite", names, nullable = false),
    StructField("notDroppable", names, nullable = false),
    StructField("writeNeedsTruncateHistory", BooleanType, nullable = false),
    StructField("sources", names, nullable = false)
  )
}
