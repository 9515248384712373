package io.github.deltalifecycle.sql.resolution

import io.github.deltalifecycle.core.{CommitCoordination, TableLog}
import io.github.deltalifecycle.shims.CatalogManagedShim
import org.apache.spark.sql.SparkSession

/**
 * How this project reads the log of a table a statement names. A catalog-managed table resolved in
 * a catalog that delta-spark commits through (Unity Catalog's connector) is read with the commits
 * that catalog ratified and `_delta_log` does not hold yet, so what the statements report is never
 * behind the table. Every other table, and a catalog-managed one named by its path, is read from
 * `_delta_log` alone.
 */
object TableAccess {

  def log(spark: SparkSession, table: LifecycleTableRef): TableLog = {
    val log = TableLog.forPath(table.hadoopConf(spark), table.path)
    val ratified = for {
      entry <- table.catalogEntry
      // Asked first, as it reads no log: most catalogs have no commit path of their own.
      if CatalogManagedShim.hasCommitCoordinator(spark, entry)
      head = log.latestHead()
      if CommitCoordination.isCatalogManaged(head.protocol)
      commits <- CatalogManagedShim.ratifiedCommits(
        spark,
        entry,
        log.logPath,
        head.metadata.configuration
      )
    } yield commits
    ratified.fold(log)(log.withRatifiedCommits)
  }
}
