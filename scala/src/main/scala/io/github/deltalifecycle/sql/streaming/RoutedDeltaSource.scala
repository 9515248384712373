package io.github.deltalifecycle.sql.streaming

import scala.collection.mutable
import scala.util.control.NonFatal

import io.github.deltalifecycle.features.redirect.{RedirectConfig, VersionCorrespondence}
import org.apache.hadoop.fs.Path
import org.apache.spark.internal.Logging
import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.connector.read.streaming.{
  Offset => OffsetV2,
  ReadLimit,
  SupportsAdmissionControl,
  SupportsTriggerAvailableNow
}
import org.apache.spark.sql.deltalifecycle.SparkInternals
import org.apache.spark.sql.delta.sources.{DeltaDataSource, DeltaSource, DeltaSourceOffset}
import org.apache.spark.sql.execution.streaming.{Offset, Source}
import org.apache.spark.sql.types.StructType

/**
 * delta-spark's streaming source of `table`, reading where the table's redirect sends reads and
 * following it when it changes while the query runs: SET REDIRECT moves reads to the destination
 * when it becomes READY, UNSET REDIRECT back to the source when it is NORMAL again.
 *
 * Before each micro-batch is planned the read is routed again (for a table delta-spark just read
 * without a redirect, from that read, with no request of its own). When the location changes, the
 * source is opened there and the query's last position is carried over: the offsets this source
 * returns name the location whose versions they count ([[LocatedOffset]]), and a position read at
 * one location is translated to the same position at the other ([[VersionCorrespondence]]), so no
 * row is read twice and none is skipped, also when the query restarts from its checkpoint.
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

  private var reading: Path = StreamRouting.readLocation(spark, table)
  private var delegate: DeltaSource = open(reading)
  private var availableNow = false
  private val correspondences = mutable.Map.empty[String, VersionCorrespondence]

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

  /**
   * A read at a location that just stopped being the table's answers with delta-spark's error for
   * it (a source that became reader-writer redirected, for one); it is asked again where the table
   * now is.
   */
  override def latestOffset(start: OffsetV2, limit: ReadLimit): OffsetV2 = {
    follow(afterFailure = false)
    val latest =
      try delegate.latestOffset(positioned(start), limit)
      catch {
        case NonFatal(_) if follow(afterFailure = true) =>
          delegate.latestOffset(positioned(start), limit)
      }
    Option(latest).map(o => located(o.asInstanceOf[DeltaSourceOffset])).orNull
  }

  override def getBatch(start: Option[Offset], end: Offset): DataFrame =
    try delegate.getBatch(start.map(positioned), positioned(end))
    catch {
      case NonFatal(_) if follow(afterFailure = true) =>
        delegate.getBatch(start.map(positioned), positioned(end))
    }

  override def commit(end: Offset): Unit = delegate.commit(positioned(end))

  override def stop(): Unit = delegate.stop()

  private def open(location: Path): DeltaSource =
    new DeltaDataSource().createSource(
      spark.sqlContext,
      metadataPath,
      userSchema,
      "delta",
      deltaOptions + ("path" -> location.toString)
    ).asInstanceOf[DeltaSource]

  /**
   * Routes the read again and, when it goes elsewhere now, reopens the source there; whether it
   * did. Unless a read just failed, delta-spark's latest read of the table it reads is enough to
   * tell that table is not redirected.
   */
  private def follow(afterFailure: Boolean): Boolean = {
    val now =
      if (!afterFailure && readingSource && noRedirectInDeltasView) reading
      else StreamRouting.readLocation(spark, table)
    if (StreamRouting.sameLocation(spark, now, reading)) false
    else {
      logInfo(s"Streaming read of ${table.name} follows its redirect from $reading to $now")
      delegate.stop()
      reading = now
      delegate = open(now)
      correspondences.clear()
      if (availableNow) delegate.prepareForTriggerAvailableNow()
      true
    }
  }

  private def readingSource: Boolean = StreamRouting.sameLocation(spark, reading, table.origin)

  private def noRedirectInDeltasView: Boolean =
    try {
      val snapshot = delegate.deltaLog.unsafeVolatileSnapshot
      RedirectConfig.absent(snapshot.protocol, snapshot.metadata)
    } catch { case NonFatal(_) => false }

  private def located(offset: DeltaSourceOffset): LocatedOffset =
    new LocatedOffset(offset, reading.toString)

  /** `offset` as a position at the location read now (an offset without a location: the source). */
  private def positioned(offset: OffsetV2): DeltaSourceOffset =
    if (offset == null) null
    else {
      val (delta, at) = LocatedOffset.split(offset)
      val from = at.map(new Path(_)).getOrElse(table.origin)
      correspondence(from).translate(
        LocatedOffset.position(delta),
        DeltaSourceOffset.BASE_INDEX
      ) match {
        case p if p == LocatedOffset.position(delta) => delta
        case p => LocatedOffset.at(delta, p)
      }
    }

  private def correspondence(from: Path): VersionCorrespondence =
    correspondences.getOrElseUpdate(
      from.toString,
      VersionCorrespondence.between(
        SparkInternals.newHadoopConf(spark),
        table.origin,
        from,
        reading,
        StreamRouting.sameLocation(spark, _, _)
      )
    )
}
