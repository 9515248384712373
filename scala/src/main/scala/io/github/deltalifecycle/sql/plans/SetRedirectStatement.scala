package io.github.deltalifecycle.sql.plans

import io.github.deltalifecycle.features.redirect.{NoRedirectRule, RedirectMode}
import io.github.deltalifecycle.sql.commands.SetRedirectCommand
import io.github.deltalifecycle.sql.plans.LifecycleStatement.Target
import io.github.deltalifecycle.sql.resolution.LifecycleTableRef
import org.apache.spark.sql.execution.command.LeafRunnableCommand
import org.apache.spark.sql.types.StructType

/**
 * `ALTER TABLE <table> SET REDIRECT [READER WRITER | WRITER ONLY]`
 * `TO '<location>' | TABLE <name> [LOCATION '<location>'] [NO REDIRECT RULES (...)] [DRY RUN]`.
 */
case class SetRedirectStatement(
    table: Seq[String],
    mode: RedirectMode,
    location: Option[String],
    targetTable: Option[Seq[String]],
    rules: Seq[NoRedirectRule],
    dryRun: Boolean = false,
    targetLocation: Option[String] = None
) extends LifecycleStatement {
  override protected def resultSchema: StructType = RedirectStatus.schemaOf(dryRun)
  override def target: Target = Target.Named
  override def toCommand(ref: LifecycleTableRef): LeafRunnableCommand =
    SetRedirectCommand(ref, mode, location, targetTable, rules, dryRun, targetLocation)
}
