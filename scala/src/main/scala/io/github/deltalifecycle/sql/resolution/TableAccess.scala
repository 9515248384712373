package io.github.deltalifecycle.sql.resolution

import io.github.deltalifecycle.core.TableLog
import io.github.deltalifecycle.sql.catalogmanaged.ManagingCatalogs
import org.apache.spark.sql.SparkSession

/**
 * How this project reaches the log of a table a statement names. A catalog-managed table resolved
 * in a catalog that delta-spark commits through (Unity Catalog's connector) is reached through that
 * catalog: it is read with the commits the catalog ratified and `_delta_log` does not hold yet, so
 * what the statements report is never behind the table, and written through the catalog's commit
 * path. Every other table, and a catalog-managed one named by its path, is read from `_delta_log`
 * alone.
 */
object TableAccess {

  def log(spark: SparkSession, table: LifecycleTableRef): TableLog = {
    val log = TableStorage.log(spark, table)
    table.catalogTable.flatMap(ManagingCatalogs.of(spark, _, log)).fold(log)(log.throughCatalog)
  }
}
