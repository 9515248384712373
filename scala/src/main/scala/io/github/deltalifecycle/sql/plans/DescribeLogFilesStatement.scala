package io.github.deltalifecycle.sql.plans

import io.github.deltalifecycle.sql.commands.DescribeLogFilesCommand
import io.github.deltalifecycle.sql.plans.LifecycleStatement.Target
import io.github.deltalifecycle.sql.resolution.LifecycleTableRef
import org.apache.spark.sql.execution.command.LeafRunnableCommand
import org.apache.spark.sql.types.StructType

/** `DESCRIBE LOG FILES <table>` as parsed; it reads, so it follows the table's redirect. */
case class DescribeLogFilesStatement(table: Seq[String]) extends LifecycleStatement {
  override protected def resultSchema: StructType = DescribeLogFilesStatement.schema
  override def target: Target = Target.reading
  override def toCommand(ref: LifecycleTableRef): LeafRunnableCommand =
    DescribeLogFilesCommand(ref)
}

object DescribeLogFilesStatement extends StatementResult {
  // `version`: the version a file belongs to; a compaction's first version; null for other files.
  // `endVersion`: a compaction's last version; the same as `version` for the files of one version.
  val schema: StructType = LifecycleStatement.resultWithTable(
    "version BIGINT, endVersion BIGINT, kind STRING NOT NULL, file STRING NOT NULL",
    "size BIGINT NOT NULL, modificationTime TIMESTAMP NOT NULL"
  )
}
