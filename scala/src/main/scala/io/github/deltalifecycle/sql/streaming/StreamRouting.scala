package io.github.deltalifecycle.sql.streaming

import scala.util.Try

import io.github.deltalifecycle.core.TableName
import io.github.deltalifecycle.features.redirect.{Access, RedirectRouting, RedirectState, Route}
import io.github.deltalifecycle.shims.StreamingShim
import io.github.deltalifecycle.sql.resolution.{LifecycleTableRef, TableStorage}
import io.github.deltalifecycle.sql.routing.{RedirectSession, SessionRouting}
import org.apache.hadoop.fs.Path
import org.apache.spark.network.util.JavaUtils
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.catalog.CatalogTable
import org.apache.spark.sql.delta.DeltaLog

/**
 * The table a streaming query names: by path, or by name in a catalog (then `origin` is the
 * location the catalog registers, whatever location a routed table handed to the query).
 */
final case class StreamedTable(origin: Path, name: String, catalogTable: Option[CatalogTable]) {

  /** The table as a statement names it: in its catalog, whose storage it opens with. */
  def ref: LifecycleTableRef =
    LifecycleTableRef(origin, name, catalogTable, catalogTable.flatMap(_.identifier.catalog))
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
        Try(LifecycleTableRef.resolve(spark, parts)).toOption match {
          case Some(ref) =>
            StreamedTable(ref.path, ref.displayName, ref.catalogTable.orElse(Some(ct)))
          case None => StreamedTable(new Path(ct.location), TableName.sql(parts), Some(ct))
        }
      case None => StreamedTable(new Path(path), TableName.ofPath(path), None)
    }
}

/** Where a streaming write goes: a table location, with its catalog entry when it has one. */
final case class StreamTarget(location: Path, catalogTable: Option[CatalogTable])

/**
 * A write that must wait: the table's redirect is `state` (ENABLE- or DROP-REDIRECT-IN-PROGRESS),
 * which takes no writes, and writes go to `next` once it ends.
 */
final case class WriteInProgress(state: String, next: Path)

/**
 * Routing for streaming queries, which keep running while a redirect changes under them: a read or
 * a write is routed when the query starts and again before each micro-batch, by the same rules as
 * batch access ([[SessionRouting]]).
 */
object StreamRouting {

  /** The operation a streaming write is, as delta-spark records it and NoRedirectRules name it. */
  private val StreamingWrite = Access.Write(Set("STREAMING UPDATE"))

  /** How long a streaming write waits for an IN-PROGRESS redirect state to end (a preference). */
  val WaitTimeoutKey = "spark.deltaLifecycle.streaming.redirectWaitTimeout"
  val DefaultWaitTimeoutSeconds = 600L

  def waitTimeoutSeconds(spark: SparkSession): Long =
    spark.conf.getOption(WaitTimeoutKey).map(JavaUtils.timeStringAsSec)
      .getOrElse(DefaultWaitTimeoutSeconds)

  /** The location a read of `table` goes to now. */
  def readLocation(spark: SparkSession, table: StreamedTable): Path =
    SessionRouting.destinationPath(SessionRouting.route(spark, table.ref, Access.Read))
      .getOrElse(table.origin)

  /**
   * Where a micro-batch written to `table` goes now, or the IN-PROGRESS state that keeps it from
   * being written. A table whose latest version, as delta-spark reads it, names no redirect is
   * written in place: that read is the one delta-spark's sink makes before it writes anyway.
   */
  def writeTarget(
      spark: SparkSession,
      table: StreamedTable
  ): Either[WriteInProgress, StreamTarget] =
    if (notRedirected(spark, table)) Right(StreamTarget(table.origin, table.catalogTable))
    else {
      val ctx = RedirectSession.context(spark)
      val info = readRedirect(spark, table)
      info.flatMap(_.config) match {
        case Some(c) if !c.isDestinationMarker && c.state != RedirectState.Ready =>
          val next =
            if (c.state == RedirectState.EnableInProgress)
              RedirectRouting.destinationPath(ctx, table.name, c.spec)
            else table.origin
          Left(WriteInProgress(c.state.name, next))
        case _ =>
          val route = info.map(RedirectRouting.route(ctx, _, StreamingWrite, table.name))
          Right(targetOf(spark, table, route.getOrElse(Route.Direct)))
      }
    }

  /** Where the next micro-batch of `table` will go, an IN-PROGRESS state's end included. */
  def nextWriteLocation(spark: SparkSession, table: StreamedTable): Path =
    writeTarget(spark, table).fold(_.next, _.location)

  /** The streaming query whose micro-batch this thread runs. */
  def queryId(spark: SparkSession): String =
    String.valueOf(spark.sparkContext.getLocalProperty(StreamingShim.QueryIdKey))

  def sameLocation(spark: SparkSession, a: Path, b: Path): Boolean =
    RedirectRouting.sameLocation(RedirectSession.context(spark), a.toString, b.toString)

  /** The state of `table`'s redirect, for messages: NORMAL when it has none. */
  def stateOf(spark: SparkSession, table: StreamedTable): String =
    readRedirect(spark, table).map(_.state).getOrElse(RedirectState.Normal)

  private def targetOf(spark: SparkSession, table: StreamedTable, route: Route): StreamTarget =
    SessionRouting.destinationTable(spark, route)
      .map(dest => StreamTarget(dest.path, dest.catalogTable))
      .getOrElse(StreamTarget(table.origin, table.catalogTable))

  private def readRedirect(spark: SparkSession, table: StreamedTable) =
    SessionRouting.read(spark, table.origin, table.catalogTable)

  /**
   * delta-spark's latest version of the table, read as its sink reads it before each batch, shows
   * no redirect (the fast path every entry point shares).
   */
  private def notRedirected(spark: SparkSession, table: StreamedTable): Boolean = {
    lazy val log =
      DeltaLog.forTable(spark, table.origin, TableStorage.storageOptions(table.catalogTable))
    SessionRouting.openedNotRedirected(spark, log, log.update(), table.origin)
  }
}
