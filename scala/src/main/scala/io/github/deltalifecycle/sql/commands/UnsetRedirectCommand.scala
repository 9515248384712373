package io.github.deltalifecycle.sql.commands

import scala.util.Try

import io.github.deltalifecycle.core.DeltaLifecycleException
import io.github.deltalifecycle.features.redirect.{RedirectRefusal, UnsetRedirect}
import io.github.deltalifecycle.sql.resolution.{LifecycleTableRef, TableStorage}
import io.github.deltalifecycle.sql.routing.RedirectSession
import io.github.deltalifecycle.sql.unitycatalog.PathOperation
import org.apache.spark.sql.{Row, SparkSession}

/**
 * Removes a table's redirect (the RFC's disable procedure), or cancels an unfinished SET REDIRECT;
 * or (DRY RUN) says what that would do.
 */
case class UnsetRedirectCommand(table: LifecycleTableRef, override val dryRun: Boolean = false)
    extends RedirectCommand {
  override def run(spark: SparkSession): Seq[Row] =
    if (dryRun) {
      val ctx = RedirectSession.context(spark, table, PathOperation.Read, Operation)
      val plan = new UnsetRedirect(spark, ctx, table.path, table.displayName).plan()
      val refused = Try(TableStorage.forWriting(spark, table, Operation)).failed.toOption
        .collect { case e: DeltaLifecycleException => RedirectRefusal.of(e) }
      planRow(plan.copy(refusals = refused.toSeq ++ plan.refusals))
    } else changing(spark, table, Operation) { ctx =>
      new UnsetRedirect(spark, ctx, table.path, table.displayName).run()
    }

  private val Operation = "remove the redirect of"
}
