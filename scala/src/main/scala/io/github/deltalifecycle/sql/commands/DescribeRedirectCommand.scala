package io.github.deltalifecycle.sql.commands

import io.github.deltalifecycle.core.ErrorConditions
import io.github.deltalifecycle.features.redirect.{RedirectLookup, RedirectResult}
import io.github.deltalifecycle.sql.resolution.LifecycleTableRef
import io.github.deltalifecycle.sql.routing.RedirectSession
import io.github.deltalifecycle.sql.unitycatalog.PathOperation
import org.apache.spark.sql.{Row, SparkSession}

/** The redirect of a table as its log records it (state NORMAL when there is none). */
case class DescribeRedirectCommand(table: LifecycleTableRef) extends RedirectCommand {
  override def run(spark: SparkSession): Seq[Row] = {
    val ctx = RedirectSession.context(spark, table, PathOperation.Read, "describe the redirect of")
    val info = RedirectLookup.read(ctx.hadoopConf(table.path), table.path)
      .getOrElse(throw ErrorConditions.notADeltaTable(
        path = table.path.toString,
        reason = "there is no Delta log"
      ))
    row(RedirectResult.describe(ctx, table.displayName, info))
  }
}
