package io.github.deltalifecycle.shims

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.connector.catalog.{Column, Identifier, TableCatalog}
import org.apache.spark.sql.connector.expressions.Transform

/**
 * Catalog calls whose API differs between Spark lines (Spark 3.5 to 4.1: TableInfo has no provider
 * or location, so they go in the table properties).
 */
object CatalogShim {

  /** Registers `ident` as an external Delta table at `location`, the log giving the schema. */
  def createExternalDeltaTable(catalog: TableCatalog, ident: Identifier, location: String): Unit =
    catalog.createTable(
      ident,
      Array.empty[Column],
      Array.empty[Transform],
      Map(TableCatalog.PROP_PROVIDER -> "delta", TableCatalog.PROP_LOCATION -> location).asJava
    )
}
