package io.github.deltalifecycle.shims

import io.github.deltalifecycle.core.RatifiedCommit
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.catalog.CatalogTable

/**
 * delta-spark's commit path for catalog-managed tables (Spark 3.5: delta-spark 3.3, which has
 * none: it does not know the catalogManaged feature, so such tables are read from `_delta_log`
 * and never written).
 */
object CatalogManagedShim {

  def isUnityCatalogManaged(catalogTable: CatalogTable): Boolean = false

  def ratifiedCommits(
      spark: SparkSession,
      catalogTable: CatalogTable,
      logPath: Path,
      tableConf: => Map[String, String]
  ): Option[Long => Seq[RatifiedCommit]] = None

}
