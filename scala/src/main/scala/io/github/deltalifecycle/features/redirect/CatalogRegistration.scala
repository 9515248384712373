package io.github.deltalifecycle.features.redirect

import io.github.deltalifecycle.core.TableName
import io.github.deltalifecycle.shims.CatalogShim
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.connector.catalog.{Identifier, TableCatalog}
import org.apache.spark.sql.deltalifecycle.SparkInternals

/**
 * Registers a SET REDIRECT TO TABLE target as an external Delta table at the copied location,
 * through its catalog as `CREATE TABLE name USING delta LOCATION '...'` does: delta-spark takes the
 * schema from the log there. A Unity Catalog table is registered through the session's catalog of
 * that name, UC's connector, which creates it on the server.
 */
private[redirect] object CatalogRegistration {

  /**
   * Registers `name` (db.table, or catalog.schema.table, as SQL text) at `location`; false when it
   * is registered already (a re-run leaves it).
   */
  def registerExternal(spark: SparkSession, name: String, location: Path): Boolean = {
    val parts = TableName.parts(name)
    val (catalogName, rest) =
      if (parts.size == 3) (parts.head, parts.tail) else (SparkInternals.SessionCatalogName, parts)
    val ident = Identifier.of(rest.init.toArray, rest.last)
    val catalog = SparkInternals.catalog(spark, catalogName).asInstanceOf[TableCatalog]
    val registering = !catalog.tableExists(ident)
    if (registering) CatalogShim.createExternalDeltaTable(catalog, ident, location.toString)
    registering
  }
}
