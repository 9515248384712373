package io.github.deltalifecycle.shims

import org.apache.spark.sql.connector.catalog.{
  Identifier,
  StagingTableCatalog,
  Table,
  TableCatalog
}

/**
 * What a catalog wrapping another forwards beyond the interfaces every Spark line shares (Spark 3.5
 * to 4.1: nothing; views of such a catalog are served through `loadTable`).
 */
trait CatalogForwarding extends StagingTableCatalog {

  /** The catalog wrapped. */
  def delegate: TableCatalog

  /** `table`, which the delegate loaded under `ident`, where its redirect sends a read. */
  protected def routed(ident: Identifier, table: Table): Table

  /** The delegate, to stage a creation or replacement (refused when it cannot). */
  protected def staging: StagingTableCatalog
}
