package io.github.deltalifecycle.sql.streaming

import java.util.Locale

import io.github.deltalifecycle.core.TableName
import io.github.deltalifecycle.sql.routing.Router

import org.apache.spark.sql.SQLContext
import org.apache.spark.sql.delta.sources.DeltaDataSource
import org.apache.spark.sql.execution.streaming.Source
import org.apache.spark.sql.sources.StreamSourceProvider
import org.apache.spark.sql.types.StructType

/**
 * The streaming source provider that a Delta streaming read gets in a session with this extension
 * ([[io.github.deltalifecycle.sql.analysis.RouteStreams]]): delta-spark's own, for the location the
 * table's redirect sends reads to, at analysis (the schema) and when the query starts (the source,
 * which then follows the redirect: [[RoutedDeltaSource]]).
 *
 * Spark instantiates it by class name, so it has a public constructor and no state.
 */
class RoutedDeltaSourceProvider extends StreamSourceProvider {
  import RoutedDeltaSourceProvider._

  override def sourceSchema(
      sqlContext: SQLContext,
      schema: Option[StructType],
      providerName: String,
      parameters: Map[String, String]
  ): (String, StructType) = {
    val spark = sqlContext.sparkSession
    val location = tableOf(sqlContext, parameters).readLocation(spark)
    new DeltaDataSource().sourceSchema(
      sqlContext,
      schema,
      "delta",
      deltaOptions(parameters) + ("path" -> location.toString)
    )
  }

  override def createSource(
      sqlContext: SQLContext,
      metadataPath: String,
      schema: Option[StructType],
      providerName: String,
      parameters: Map[String, String]
  ): Source =
    new RoutedDeltaSource(
      sqlContext.sparkSession,
      tableOf(sqlContext, parameters),
      metadataPath,
      schema,
      deltaOptions(parameters)
    )
}

object RoutedDeltaSourceProvider {
  val ClassName: String = classOf[RoutedDeltaSourceProvider].getName

  /** Options that name the table a query streams from by name: its catalog location and name. */
  val TableLocationOption = "deltaLifecycle.streamedTableLocation"
  val TableNameOption = "deltaLifecycle.streamedTableName"

  private val OwnOptions = Set(TableLocationOption, TableNameOption, "path")
    .map(_.toLowerCase(Locale.ROOT))

  private def tableOf(sqlContext: SQLContext, parameters: Map[String, String]): StreamedTable = {
    val path = get(parameters, "path").getOrElse(
      throw new IllegalArgumentException("A Delta streaming read needs a path")
    )
    (get(parameters, TableLocationOption), get(parameters, TableNameOption)) match {
      case (Some(location), Some(name)) =>
        // Its catalog entry, loaded again: what a governing catalog vends for the table.
        val entry = Router.tableNamed(sqlContext.sparkSession, TableName.parts(name))
          .flatMap(_.catalogTable)
        StreamedTable(new org.apache.hadoop.fs.Path(location), name, entry)
      case _ => StreamedTable(sqlContext.sparkSession, path, None)
    }
  }

  /** The reader's options for delta-spark: every one but this provider's and the path. */
  private def deltaOptions(parameters: Map[String, String]): Map[String, String] =
    parameters.filter { case (k, _) => !OwnOptions.contains(k.toLowerCase(Locale.ROOT)) }.toMap

  // Spark hands options over in a case-insensitive map; a plain one is looked up the same way.
  private def get(parameters: Map[String, String], key: String): Option[String] =
    parameters.collectFirst { case (k, v) if k.equalsIgnoreCase(key) => v }
}
