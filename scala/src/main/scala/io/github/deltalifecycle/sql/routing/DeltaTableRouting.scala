package io.github.deltalifecycle.sql.routing

import scala.util.control.NonFatal

import io.github.deltalifecycle.core.{DeltaLifecycleException, TableName}
import io.github.deltalifecycle.features.redirect.Access
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.TableIdentifier
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
   * so it is routed); any other name as it was given.
   */
  def nameFor(spark: SparkSession, name: String): String = TableName.parts(name) match {
    // delta.`<path>`, which delta-spark opens as forPath does.
    case Seq(format, path)
        if DeltaSourceUtils.isDeltaDataSourceName(format) &&
          new Path(path).isAbsolute =>
      TableName.sql(Seq(format, pathFor(spark, path)))
    case parts => catalogNameFor(spark, parts, name)
  }

  private def catalogNameFor(spark: SparkSession, parts: Seq[String], name: String): String = {
    val entry =
      if (
        parts.length > 2 || SparkInternals.currentCatalogName(spark) !=
          SparkInternals.SessionCatalogName
      ) None
      else
        try {
          val catalog = SparkInternals.sessionCatalog(spark)
          val id = TableIdentifier(parts.last, parts.init.headOption)
          if (catalog.isTempView(id)) None else Some(catalog.getTableMetadata(id))
        } catch { case NonFatal(_) => None }
    entry.filter(e => DeltaSourceUtils.isDeltaTable(e.provider))
      .filter(e => destination(spark, new Path(e.location), name).isDefined)
      .map(e =>
        TableName.sql(
          Seq(SparkInternals.SessionCatalogName) ++ e.identifier.database :+ e.identifier.table
        )
      )
      .getOrElse(name)
  }

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
