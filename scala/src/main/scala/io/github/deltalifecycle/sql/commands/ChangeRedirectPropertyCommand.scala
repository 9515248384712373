package io.github.deltalifecycle.sql.commands

import io.github.deltalifecycle.features.redirect.RedirectPropertyChange
import io.github.deltalifecycle.sql.resolution.LifecycleTableRef
import io.github.deltalifecycle.sql.routing.CatalogTables
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
  override def run(spark: SparkSession): Seq[Row] = changing(spark, table, s"change $key of") {
    ctx =>
      if (value.isDefined) CatalogTables.requireRouted(spark, table, s"set $key of")
      new RedirectPropertyChange(spark, ctx, table.path, table.displayName).run(key, value)
  }
}
