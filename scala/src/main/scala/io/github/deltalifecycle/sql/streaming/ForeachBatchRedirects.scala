package io.github.deltalifecycle.sql.streaming

import scala.util.control.NonFatal

import io.github.deltalifecycle.core.{DeltaLifecycleException, ErrorConditions}
import io.github.deltalifecycle.features.redirect.RedirectMode
import org.apache.spark.internal.Logging
import org.apache.spark.sql.{Dataset, SparkSession}
import org.apache.spark.sql.catalyst.encoders.ExpressionEncoder
import org.apache.spark.sql.execution.streaming.sources.ForeachBatchSink

/**
 * `foreachBatch` queries, whose batches run the user's own statements: those are routed when each
 * batch runs them, so after a redirect changes the next batch writes where it now goes. A batch
 * whose write raced the redirect's state commit fails delta-spark's conflict check, which names the
 * redirect feature or the redirect's commit; that failure becomes
 * DELTA_LIFECYCLE_STREAM_BATCH_RACED_REDIRECT, which says to restart the query.
 *
 * Spark tells `foreachBatch` sinks apart by their class, so the sink stays a `ForeachBatchSink`,
 * rebuilt around the same function and encoder (read from its fields, the same on every line).
 */
object ForeachBatchRedirects extends Logging {

  def typed(sink: ForeachBatchSink[_]): ForeachBatchSink[_] =
    try field[(Dataset[Any], Long) => Unit](sink, "batchWriter") match {
        case _: TypedWrite => sink
        case write =>
          new ForeachBatchSink[Any](
            new TypedWrite(write),
            field[ExpressionEncoder[Any]](sink, "encoder")
          )
      }
    catch {
      case NonFatal(e) =>
        logWarning(s"foreachBatch errors of this query are not typed: ${e.getMessage}")
        sink
    }

  /** The user's batch function, its failures typed when a redirect caused them. */
  private final class TypedWrite(write: (Dataset[Any], Long) => Unit)
      extends ((Dataset[Any], Long) => Unit) {
    override def apply(batch: Dataset[Any], batchId: Long): Unit =
      try write(batch, batchId)
      catch { case NonFatal(e) => throw raced(e, batchId).getOrElse(e) }
  }

  /**
   * The typed error for `failure` if it is delta-spark's answer to a redirect's state commit. A
   * Python batch function's failure reaches the JVM as Py4J's proxy error, whose message carries
   * the Python traceback with delta-spark's error in it, and whose cause chain ends there: the
   * messages are what is searched, and the detail is the line of the message that names the
   * redirect (the traceback's first line says nothing).
   */
  def raced(failure: Throwable, batchId: Long): Option[DeltaLifecycleException] =
    Iterator.iterate(failure)(_.getCause).takeWhile(_ != null)
      .map(e => String.valueOf(e.getMessage))
      .find(racedRedirect).map { message =>
        val lines = message.linesIterator.map(_.trim).toSeq
        val detail = lines.find(racedRedirect).orElse(lines.headOption).getOrElse("")
        ErrorConditions.streamBatchRacedRedirect(
          queryId = RoutedDeltaSink.queryId(SparkSession.active),
          batchId = batchId,
          detail = detail,
          cause = failure
        )
      }

  /**
   * delta-spark's conflict check names the redirect feature a winning commit added (an unsupported
   * feature) or carries the winning commit, whose operation is one of the redirect's.
   */
  private def racedRedirect(message: String): Boolean =
    (message.contains("DELTA_UNSUPPORTED_FEATURES_FOR") &&
      RedirectMode.featureNames.exists(message.contains)) ||
      Seq("\"operation\":\"SET REDIRECT\"", "\"operation\":\"UNSET REDIRECT\"").exists(
        message.contains
      )

  private def field[T](sink: ForeachBatchSink[_], name: String): T = {
    val f = classOf[ForeachBatchSink[_]].getDeclaredField(name)
    f.setAccessible(true)
    f.get(sink).asInstanceOf[T]
  }
}
