package io.github.deltalifecycle.sql.streaming

import scala.collection.mutable
import scala.util.control.NonFatal

import io.github.deltalifecycle.features.redirect.{RedirectCycle, VersionCorrespondence}
import io.github.deltalifecycle.sql.resolution.TableStorage
import io.github.deltalifecycle.sql.routing.Router
import org.apache.hadoop.fs.Path
import org.apache.spark.internal.Logging
import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.connector.read.streaming.{
  Offset => OffsetV2,
  ReadLimit,
  SupportsAdmissionControl,
  SupportsTriggerAvailableNow
}
import org.apache.spark.sql.delta.sources.{DeltaDataSource, DeltaSource, DeltaSourceOffset}
import org.apache.spark.sql.execution.streaming.{Offset, Source}
import org.apache.spark.sql.types.StructType

/**
 * delta-spark's streaming source of `table`, reading where the table's rows are and following its
 * redirect while the query runs: SET REDIRECT moves reads to the destination once it is READY,
 * UNSET REDIRECT back to the source once it is NORMAL again.
 *
 * Before each micro-batch is planned the read is routed again (for a table delta-spark just read
 * without a redirect, from that read, with no request of its own). The offsets this source returns
 * name the location whose versions they count ([[LocatedOffset]]), and a position read at one
 * location is translated to the same position at the other ([[VersionCorrespondence]]), so no row
 * is read twice and none is skipped, also when the query restarts from its checkpoint.
 *
 * Rows a redirect's destination took are read there: after UNSET REDIRECT the query finishes
 * reading the former destination (which stays readable) before it goes back to the source, and a
 * query that resumes at a source position from before a redirect that has since ended reads that
 * redirect's rows at its destination first. The source's own copies of them sit behind the
 * redirect's commits, whose reader-writer feature delta-spark cannot read.
 */
final class RoutedDeltaSource(
    spark: SparkSession,
    table: StreamedTable,
    metadataPath: String,
    userSchema: Option[StructType],
    deltaOptions: Map[String, String]
) extends Source
    with SupportsAdmissionControl
    with SupportsTriggerAvailableNow
    with Logging {

  private var reading: Path = table.readLocation(spark)
  private var delegate: DeltaSource = open(reading)
  private var availableNow = false
  private val correspondences = mutable.Map.empty[String, VersionCorrespondence]

  /** Former destinations this query read to the end: it does not go back to them. */
  private val readToTheEnd = mutable.Set.empty[String]

  override def schema: StructType = delegate.schema
  override def getDefaultReadLimit: ReadLimit = delegate.getDefaultReadLimit
  override def toString: String = delegate.toString

  override def prepareForTriggerAvailableNow(): Unit = {
    availableNow = true
    delegate.prepareForTriggerAvailableNow()
  }

  override def getOffset: Option[Offset] =
    throw new UnsupportedOperationException(
      "latestOffset(Offset, ReadLimit) should be called instead of this method"
    )

  override def latestOffset(start: OffsetV2, limit: ReadLimit): OffsetV2 = {
    val from = locationOf(start)
    moveTo(placeFor(from, route(fresh = false)))
    var latest =
      try readLatest(start, limit)
      catch {
        case NonFatal(e) =>
          moveTo(placeAfterFailure(from, start).getOrElse(throw e))
          readLatest(start, limit)
      }
    if (!sameLocation(reading, table.origin) && latest == positioned(start)) {
      // Nothing more at a destination the table no longer reads from: it was read to the end.
      val now = route(fresh = true)
      if (!sameLocation(now, reading)) {
        readToTheEnd += reading.toString
        moveTo(now)
        latest = readLatest(start, limit)
      }
    }
    Option(latest).map(new LocatedOffset(_, reading.toString)).orNull
  }

  /**
   * A batch is read where its end was read, so a batch planned before a restart or a move reads the
   * same rows again: at a destination, while it is a table; a source's batch where the source's
   * rows are read now (a reader-writer redirected source cannot be read at all).
   */
  override def getBatch(start: Option[Offset], end: Offset): DataFrame = {
    val endRead = locationOf(end)
    if (!sameLocation(endRead, table.origin) && isTable(endRead)) moveTo(endRead)
    try delegate.getBatch(start.map(positioned), positioned(end))
    catch {
      case NonFatal(e) =>
        val now = route(fresh = true)
        if (sameLocation(now, reading)) throw e
        moveTo(now)
        delegate.getBatch(start.map(positioned), positioned(end))
    }
  }

  override def commit(end: Offset): Unit = delegate.commit(positioned(end))

  override def stop(): Unit = delegate.stop()

  private def readLatest(start: OffsetV2, limit: ReadLimit): DeltaSourceOffset =
    delegate.latestOffset(positioned(start), limit).asInstanceOf[DeltaSourceOffset]

  /**
   * Where to read from a position counted at `from`, when the table's reads go to `route`: a former
   * destination not yet read to the end first, else where the route goes.
   */
  private def placeFor(from: Path, route: Path): Path =
    if (
      sameLocation(route, table.origin) && !sameLocation(from, table.origin) &&
      !readToTheEnd.contains(from.toString) && isTable(from)
    ) from
    else route

  /**
   * Where to read after a read at `reading` failed: where the table's reads go now, if elsewhere;
   * else, reading the source, the destination of the oldest redirect that ended after the position
   * (delta-spark cannot read the source's commits of a reader-writer redirect). None: nowhere else.
   */
  private def placeAfterFailure(from: Path, start: OffsetV2): Option[Path] = {
    val now = route(fresh = true)
    if (!sameLocation(now, reading)) Some(now)
    else if (!sameLocation(reading, table.origin) || start == null) None
    else {
      val position = positioned(start).reservoirVersion
      RedirectCycle.ended(hadoopConf, table.origin, above = position).lastOption
        .flatMap(_.destination).filter(isTable)
    }
  }

  /**
   * Where the table's reads go now. Unless `fresh`, delta-spark's latest read of the source, when
   * that is what this query reads, tells that it is not redirected, with no request of its own.
   */
  private def route(fresh: Boolean): Path =
    if (!fresh && sameLocation(reading, table.origin) && noRedirectInDeltasView) reading
    else table.readLocation(spark)

  private def moveTo(location: Path): Unit =
    if (!sameLocation(location, reading)) {
      logInfo(s"Streaming read of ${table.name} moves from $reading to $location")
      delegate.stop()
      reading = location
      delegate = open(location)
      correspondences.clear()
      if (availableNow) delegate.prepareForTriggerAvailableNow()
    }

  private def open(location: Path): DeltaSource =
    new DeltaDataSource().createSource(
      spark.sqlContext,
      metadataPath,
      userSchema,
      "delta",
      deltaOptions + ("path" -> location.toString)
    ).asInstanceOf[DeltaSource]

  private def noRedirectInDeltasView: Boolean = Router.notRedirected(
    spark,
    delegate.deltaLog,
    Router.facts(delegate.deltaLog.unsafeVolatileSnapshot),
    reading
  )

  /** The location whose versions `offset` counts (an offset without one: the source's). */
  private def locationOf(offset: OffsetV2): Path =
    Option(offset).flatMap(o => LocatedOffset.split(o)._2).map(new Path(_)).getOrElse(table.origin)

  /** `offset` as a position at the location read now. */
  private def positioned(offset: OffsetV2): DeltaSourceOffset =
    if (offset == null) null
    else {
      val (delta, at) = LocatedOffset.split(offset)
      val from = at.map(new Path(_)).getOrElse(table.origin)
      val position = LocatedOffset.position(delta)
      val translated = correspondence(from).translate(position, DeltaSourceOffset.BASE_INDEX)
      if (translated == position) delta else LocatedOffset.at(delta, translated)
    }

  private def correspondence(from: Path): VersionCorrespondence =
    correspondences.getOrElseUpdate(
      from.toString,
      VersionCorrespondence.between(hadoopConf, table.origin, from, reading, sameLocation)
    )

  private def isTable(location: Path): Boolean =
    Router.read(spark, location, table.catalogTable).isDefined

  private def sameLocation(a: Path, b: Path): Boolean = Router.sameLocation(spark, a, b)

  private def hadoopConf = TableStorage.hadoopConf(spark, table.catalogTable)
}
