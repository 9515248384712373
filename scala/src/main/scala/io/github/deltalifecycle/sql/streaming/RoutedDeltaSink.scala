package io.github.deltalifecycle.sql.streaming

import scala.util.control.NonFatal

import io.github.deltalifecycle.core.{DeltaLifecycleException, ErrorConditions}
import io.github.deltalifecycle.features.redirect.{RedirectState, Wait}
import io.github.deltalifecycle.shims.StreamingShim
import io.github.deltalifecycle.sql.routing.Router
import org.apache.spark.internal.Logging
import org.apache.spark.network.util.JavaUtils
import org.apache.spark.sql.{DataFrame, SQLContext, SparkSession}
import org.apache.spark.sql.delta.DeltaOptions
import org.apache.spark.sql.delta.sources.DeltaSink
import org.apache.spark.sql.execution.streaming.Sink
import org.apache.spark.sql.streaming.OutputMode

/**
 * delta-spark's streaming sink of `table`, writing each micro-batch where the table's redirect
 * sends writes when the batch starts.
 *
 * A batch routed to a table whose redirect is being enabled or removed (ENABLE- or
 * DROP-REDIRECT-IN-PROGRESS, which take no writes) waits for the state to end, at most
 * [[RoutedDeltaSink.WaitTimeoutKey]], then goes where the redirect now sends it. A batch whose
 * table changed state while it was being written fails delta-spark's conflict check and is not
 * committed; the query then stops with DELTA_LIFECYCLE_STREAM_REDIRECT_CHANGED, and a restart from
 * its checkpoint writes that batch once, where the redirect sends it: delta-spark's sink records
 * each batch in the table's log (a `txn` of the query id), and the redirect's copy and replay carry
 * those records with the log.
 */
final class RoutedDeltaSink(
    sqlContext: SQLContext,
    table: StreamedTable,
    partitionColumns: Seq[String],
    outputMode: OutputMode,
    options: DeltaOptions
) extends Sink
    with Logging {

  import RoutedDeltaSink._

  private val spark: SparkSession = sqlContext.sparkSession
  @volatile private var current: Option[(StreamTarget, DeltaSink)] = None

  override def addBatch(batchId: Long, data: DataFrame): Unit = {
    val target = awaitTarget(batchId)
    val sink = sinkAt(target)
    try sink.addBatch(batchId, data)
    catch {
      case NonFatal(e) => throw changedDuring(target, batchId, e).getOrElse(e)
    }
  }

  /**
   * delta-spark's sink of the location the last batch went to (the post-commit policy's target).
   */
  def lastSink: Option[DeltaSink] = current.map(_._2)

  override def toString: String =
    s"DeltaSink[${current.map(_._1.location).getOrElse(table.origin)}]"

  /** Where batch `batchId` goes, once the table's redirect takes writes. */
  private def awaitTarget(batchId: Long): StreamTarget = {
    val timeoutSeconds = spark.conf.getOption(WaitTimeoutKey).map(JavaUtils.timeStringAsSec)
      .getOrElse(DefaultWaitTimeoutSeconds)
    val deadline = System.nanoTime() + timeoutSeconds * 1000000000L
    var pause = 500L
    while (true) {
      writeTarget match {
        case Right(target) => return target
        case Left(inProgress) if System.nanoTime() > deadline =>
          throw ErrorConditions.streamRedirectWait(
            table = table.name,
            state = inProgress.state.name,
            queryId = queryId,
            batchId = batchId,
            seconds = timeoutSeconds,
            setting = WaitTimeoutKey
          )
        case Left(inProgress) =>
          logInfo(
            s"Batch $batchId of streaming query $queryId waits for ${table.name} to leave " +
              s"${inProgress.state.name}"
          )
          Thread.sleep(pause) // interrupted when the query stops
          pause = math.min(pause * 2, 10000L)
      }
    }
    throw new IllegalStateException("unreachable")
  }

  /** Where a micro-batch written now goes, or the IN-PROGRESS state it waits for. */
  private def writeTarget: Either[Wait, StreamTarget] =
    Router.streamWrite(spark, table.origin, table.name, table.catalogTable).map(route =>
      Router.destinationTable(spark, route).map(dest => StreamTarget(dest.path, dest.catalogTable))
        .getOrElse(StreamTarget(table.origin, table.catalogTable))
    )

  private def sinkAt(target: StreamTarget): DeltaSink = current match {
    case Some((t, sink)) if t == target => sink
    case _ =>
      if (current.isDefined) {
        logInfo(s"Streaming writes to ${table.name} follow its redirect to ${target.location}")
      }
      val sink =
        DeltaSink(
          sqlContext,
          target.location,
          partitionColumns,
          outputMode,
          options,
          target.catalogTable
        )
      current = Some((target, sink))
      sink
  }

  /**
   * The typed error for a batch that failed because the table's redirect changed under it: the
   * table is now IN-PROGRESS, or its writes go elsewhere. None when they still go to `target`.
   */
  private def changedDuring(
      target: StreamTarget,
      batchId: Long,
      failure: Throwable
  ): Option[DeltaLifecycleException] = {
    val next = writeTarget.fold(_.next, _.location)
    val state = Router.read(spark, table.origin, table.catalogTable).map(_.state)
      .getOrElse(RedirectState.Normal)
    val moved = !Router.sameLocation(spark, next, target.location)
    if (moved || state != "NORMAL" && state != "READY") {
      Some(ErrorConditions.streamRedirectChanged(
        table = table.name,
        state = state,
        queryId = queryId,
        batchId = batchId,
        location = target.location.toString,
        newLocation = next.toString,
        cause = failure
      ))
    } else None
  }

  private def queryId: String = RoutedDeltaSink.queryId(spark)
}

object RoutedDeltaSink {

  /** How long a streaming write waits for an IN-PROGRESS redirect state to end (a preference). */
  val WaitTimeoutKey = "spark.deltaLifecycle.streaming.redirectWaitTimeout"
  private val DefaultWaitTimeoutSeconds = 600L

  /** The streaming query whose micro-batch this thread runs. */
  def queryId(spark: SparkSession): String =
    String.valueOf(spark.sparkContext.getLocalProperty(StreamingShim.QueryIdKey))
}
