package io.github.deltalifecycle.sql.commands

import io.github.deltalifecycle.features.redirect.UnsetRedirect
import io.github.deltalifecycle.sql.resolution.LifecycleTableRef
import io.github.deltalifecycle.sql.routing.RedirectSession
import org.apache.spark.sql.{Row, SparkSession}

/**
 * Removes a table's redirect (the RFC's disable procedure), or cancels an unfinished SET REDIRECT;
 * or (DRY RUN) says what that would do.
 */
case class UnsetRedirectCommand(table: LifecycleTableRef, override val dryRun: Boolean = false)
    extends RedirectCommand {
  override def run(spark: SparkSession): Seq[Row] =
    if (dryRun) {
      val ctx = RedirectSession.context(spark)
      planRow(new UnsetRedirect(spark, ctx, table.path, table.displayName).plan())
    } else changing(spark, table) { ctx =>
      new UnsetRedirect(spark, ctx, table.path, table.displayName).run()
    }
}
