package io.github.deltalifecycle.shims

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import io.delta.storage.commit.{CommitCoordinatorClient, TableDescriptor}
import io.github.deltalifecycle.core.RatifiedCommit
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.catalog.CatalogTable
import org.apache.spark.sql.delta.coordinatedcommits.{
  CatalogOwnedTableUtils,
  CoordinatedCommitsUtils
}
import org.apache.spark.sql.delta.util.CatalogTableUtils

/**
 * delta-spark's commit path for catalog-managed tables (Spark 4 lines: delta-spark 4.4).
 * delta-spark builds the commit coordinator of a catalog-managed table from the catalog the table
 * was resolved in: Unity Catalog's connector (`io.unitycatalog.spark.UCSingleCatalog`) gets a
 * client of the catalog's commits API built from the session's `spark.sql.catalog.<name>.*`
 * settings, and every commit delta-spark makes to such a table through its `CatalogTable` goes
 * through it.
 */
object CatalogManagedShim {

  /**
   * Whether delta-spark takes `catalogTable` for a catalog-managed table of Unity Catalog (its
   * entry has the table's Unity Catalog id and the catalogManaged feature), the tables whose
   * streams it reads with its kernel-based source.
   */
  def isUnityCatalogManaged(catalogTable: CatalogTable): Boolean =
    CatalogTableUtils.isUnityCatalogManagedTable(catalogTable)

  /**
   * The commits the catalog of `catalogTable` ratified from a version on, read through
   * delta-spark's client of that catalog, if the catalog has one. `tableConf` is the table's
   * configuration (Unity Catalog finds the table by the `io.unitycatalog.tableId` it holds).
   */
  def ratifiedCommits(
      spark: SparkSession,
      catalogTable: CatalogTable,
      logPath: Path,
      tableConf: => Map[String, String]
  ): Option[Long => Seq[RatifiedCommit]] =
    coordinator(spark, catalogTable).map { client =>
      lazy val descriptor = new TableDescriptor(
        logPath,
        CoordinatedCommitsUtils.toCCTableIdentifier(Some(catalogTable.identifier)),
        tableConf.asJava
      )
      (fromVersion: Long) =>
        client.getCommits(descriptor, java.lang.Long.valueOf(fromVersion), null).getCommits
          .asScala.map(c => RatifiedCommit(c.getVersion, c.getFileStatus)).sortBy(_.version).toSeq
    }

  // delta-spark throws when the identifier names no catalog it can resolve; such a table has no
  // commit path through a catalog.
  private def coordinator(
      spark: SparkSession,
      catalogTable: CatalogTable
  ): Option[CommitCoordinatorClient] =
    try CatalogOwnedTableUtils.getCommitCoordinator(spark, catalogTable.identifier)
    catch { case NonFatal(_) => None }
}
