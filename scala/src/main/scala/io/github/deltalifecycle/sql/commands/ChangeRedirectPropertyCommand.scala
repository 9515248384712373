package io.github.deltalifecycle.sql.commands

import io.github.deltalifecycle.features.redirect.RedirectPropertyChange
import io.github.deltalifecycle.sql.resolution.LifecycleTableRef
import org.apache.spark.sql.{Row, SparkSession}

/**
 * A redirect property set or unset through ALTER TABLE ... TBLPROPERTIES, validated against the
 * RFC's transitions.
 */
case class ChangeRedirectPropertyCommand(
    table: LifecycleTableRef,
    key: String,
    value: Option[String]
) extends RedirectCommand {
  override def run(spark: SparkSession): Seq[Row] = changing(spark, table) { ctx =>
    new RedirectPropertyChange(spark, ctx, table.path, table.displayName).run(key, value)
  }
}
