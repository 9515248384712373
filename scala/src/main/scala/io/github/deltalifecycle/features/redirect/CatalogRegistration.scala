package io.github.deltalifecycle.features.redirect

import io.github.deltalifecycle.core.TableName
import io.github.deltalifecycle.shims.CatalogShim
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.connector.catalog.{Identifier, TableCatalog}
import org.apache.spark.sql.deltalifecycle.SparkInternals

/**
 * Registers a SET REDIRECT TO TABLE target as an external Delta table at the copied location,
 * through the session catalog as `CREATE TABLE name USING delta LOCATION '...'` does: delta-spark
 * takes the schema from the log there.
 */
private[redirect] object CatalogRegistration {
  // Spark's name for its session catalog (CatalogManager's constant is private to Spark).
  private val SessionCatalogName = "spark_catalog"

  /**
   * Registers `name` (db.table as SQL text) at `location`; false when it is registered already (a
   * re-run leaves it).
   */
  def registerExternal(spark: SparkSession, name: String, location: Path): Boolean = {
    val parts = TableName.parts(name)
    val ident = Identifier.of(parts.init.toArray, parts.last)
    val catalog = SparkInternals.catalog(spark, SessionCatalogName).asInstanceOf[TableCatalog]
    val registering = !catalog.tableExists(ident)
    if (registering) CatalogShim.createExternalDeltaTable(catalog, ident, location.toString)
    registering
  }
}
