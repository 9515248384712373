package io.github.deltalifecycle.sql.routing

import scala.util.Try

import io.github.deltalifecycle.core.{DeltaLifecycleException, TableName}
import io.github.deltalifecycle.features.redirect.Access
import io.github.deltalifecycle.sql.resolution.LifecycleTableRef
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.delta.DeltaLog
import org.apache.spark.sql.delta.sources.DeltaSourceUtils
import org.apache.spark.sql.deltalifecycle.SparkInternals

/**
 * What delta-spark's `DeltaTable.forPath` and `DeltaTable.forName` should be given so that the
 * table they build follows a redirect. delta-spark builds that table from a path, or from a one- or
 * two-part name's metastore entry, without asking any catalog, so no rule or catalog of this
 * project sees it; the Python package (`delta_lifecycle._delta_tables`) asks here first. A table
 * that is not redirected comes back as it was given, so delta-spark builds exactly what it would
 * have built.
 */
object DeltaTableRouting {

  /** The destination of the redirected table at `path`, else `path`. */
  def pathFor(spark: SparkSession, path: String): String =
    destination(spark, new Path(path), path).map(_.toString).getOrElse(path)

  /**
   * For a one- or two-part `name` of a redirected Delta table in the session catalog, the same
   * table with the catalog's name in front (which `DeltaTable.forName` loads through the catalog,
   * so it is routed); for a redirected ``delta.`<path>` ``, the destination's; any other name as it
   * was given, temporary views included (delta-spark refuses those itself).
   */
  def nameFor(spark: SparkSession, name: String): String = {
    val parts = TableName.parts(name)
    val routed = for {
      named <- Some(parts).filter(p => p.length <= 2 && !isTempView(spark, p))
      ref <- Try(LifecycleTableRef.resolve(spark, named)).toOption
      dest <- destination(spark, ref.path, name)
      routedName <- ref.catalogTable match {
        case Some(entry) =>
          val id = entry.identifier
          Some(TableName.sql(Seq(SparkInternals.SessionCatalogName) ++ id.database :+ id.table))
        case None if DeltaSourceUtils.isDeltaDataSourceName(parts.head) =>
          Some(TableName.sql(Seq(parts.head, dest.toString)))
        case None => None
      }
    } yield routedName
    routed.getOrElse(name)
  }

  private def isTempView(spark: SparkSession, parts: Seq[String]): Boolean =
    SparkInternals.sessionCatalog(spark).isTempView(parts)

  /**
   * A `DeltaTable` both reads and writes (vacuum, optimize); it is routed as a read, which goes
   * where writes go once a redirect is READY, and while one is in progress reads the source, whose
   * writes delta-spark then refuses for the redirect feature it does not know.
   */
  private def destination(spark: SparkSession, path: Path, what: String): Option[Path] =
    try SessionRouting.destinationPath(
        SessionRouting.routeOpened(
          spark,
          DeltaLog.forTable(spark, path), {
            val snapshot = DeltaLog.forTable(spark, path).unsafeVolatileSnapshot
            (snapshot.version, snapshot.protocol, snapshot.metadata)
          },
          timeTravel = false,
          path,
          Access.Read,
          what
        )
      )
    catch {
      // Not a Delta table: delta-spark's own error says so, as without this project.
      case e: DeltaLifecycleException if e.condition == NotADeltaTable => None
    }

  private val NotADeltaTable = "DELTA_LIFECYCLE_NOT_A_DELTA_TABLE"
}
