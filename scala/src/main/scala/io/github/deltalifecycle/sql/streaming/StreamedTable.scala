package io.github.deltalifecycle.sql.streaming

import io.github.deltalifecycle.core.TableName
import io.github.deltalifecycle.features.redirect.Access
import io.github.deltalifecycle.sql.resolution.LifecycleTableRef
import io.github.deltalifecycle.sql.routing.Router
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.catalog.CatalogTable

/**
 * The table a streaming query names: by path, or by name in a catalog (then `origin` is the
 * location the catalog registers, whatever location a routed table handed to the query).
 */
final case class StreamedTable(origin: Path, name: String, catalogTable: Option[CatalogTable]) {

  /** The table as a statement names it: in its catalog, whose storage it opens with. */
  def ref: LifecycleTableRef =
    LifecycleTableRef(origin, name, catalogTable, catalogTable.flatMap(_.identifier.catalog))

  /** The location a read of this table goes to now. */
  def readLocation(spark: SparkSession): Path =
    Router.route(spark, ref, Access.Read).destinationPath.getOrElse(origin)
}

object StreamedTable {

  /**
   * The table at `path`, or the catalog table `catalogTable` describes, as its catalog registers it
   * (any catalog: the entry a routed table carries names the destination's location).
   */
  def apply(spark: SparkSession, path: String, catalogTable: Option[CatalogTable]): StreamedTable =
    catalogTable match {
      case Some(ct) =>
        val parts = ct.identifier.nameParts
        Router.tableNamed(spark, parts) match {
          case Some(ref) =>
            StreamedTable(ref.path, ref.displayName, ref.catalogTable.orElse(Some(ct)))
          case None => StreamedTable(new Path(ct.location), TableName.sql(parts), Some(ct))
        }
      case None => StreamedTable(new Path(path), TableName.ofPath(path), None)
    }
}

/** Where a streaming write goes: a table location, with its catalog entry when it has one. */
final case class StreamTarget(location: Path, catalogTable: Option[CatalogTable])
