package io.github.deltalifecycle.sql.plans

import io.github.deltalifecycle.sql.commands.UnsetRedirectCommand
import io.github.deltalifecycle.sql.plans.LifecycleStatement.Target
import io.github.deltalifecycle.sql.resolution.LifecycleTableRef
import org.apache.spark.sql.execution.command.LeafRunnableCommand
import org.apache.spark.sql.types.StructType

/** `ALTER TABLE <table> UNSET REDIRECT [DRY RUN]`. */
case class UnsetRedirectStatement(table: Seq[String], dryRun: Boolean = false)
    extends LifecycleStatement {
  override protected def resultSchema: StructType = RedirectStatus.schemaOf(dryRun)
  override def target: Target = Target.Named
  override def toCommand(ref: LifecycleTableRef): LeafRunnableCommand =
    UnsetRedirectCommand(ref, dryRun)
}
