package io.github.deltalifecycle.shims

import org.apache.spark.sql.connector.catalog.{Identifier, TableCatalog, TableInfo}

/** Catalog calls whose API differs between Spark lines (Spark 4.2: TableInfo with a provider). */
object CatalogShim {

  /** Registers `ident` as an external Delta table at `location`, the log giving the schema. */
  def createExternalDeltaTable(catalog: TableCatalog, ident: Identifier, location: String): Unit =
    catalog.createTable(
      ident,
      new TableInfo.Builder().withProvider("delta").withLocation(location).build()
    )
}
