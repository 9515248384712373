package io.github.deltalifecycle.sql.commands

import io.github.deltalifecycle.features.redirect.UnsetRedirect
import io.github.deltalifecycle.sql.resolution.LifecycleTableRef
import org.apache.spark.sql.{Row, SparkSession}

/**
 * Removes a table's redirect (the RFC's disable procedure), or cancels an unfinished SET REDIRECT.
 */
case class UnsetRedirectCommand(table: LifecycleTableRef) extends RedirectCommand {
  override def run(spark: SparkSession): Seq[Row] = changing(spark, table) { ctx =>
    new UnsetRedirect(spark, ctx, table.path, table.displayName).run()
  }
}
