package io.github.deltalifecycle.sql.plans

import io.github.deltalifecycle.sql.commands.DescribeRedirectCommand
import io.github.deltalifecycle.sql.plans.LifecycleStatement.Target
import io.github.deltalifecycle.sql.resolution.LifecycleTableRef
import org.apache.spark.sql.execution.command.LeafRunnableCommand
import org.apache.spark.sql.types.StructType

/** `DESCRIBE REDIRECT <table>`. */
case class DescribeRedirectStatement(table: Seq[String]) extends LifecycleStatement {
  override protected def resultSchema: StructType = RedirectStatus.schema
  override def target: Target = Target.Named
  override def toCommand(ref: LifecycleTableRef): LeafRunnableCommand = DescribeRedirectCommand(ref)
}
