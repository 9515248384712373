package io.github.deltalifecycle.core

import org.apache.spark.internal.Logging
import org.apache.spark.sql.SparkSession

/**
 * Progress of a long, multi-step operation: each step goes to the log and becomes the job
 * description, so the Spark UI names the step that the running jobs (rewrites, checkpoints) belong
 * to. The jobs also carry the operation in the local property [[Progress.OperationProperty]], by
 * which progress reports outside the UI (the Python package's) tell them from other jobs. Running
 * out of memory during a step is reported as DELTA_LIFECYCLE_OUT_OF_MEMORY, naming the step (see
 * [[OutOfMemory]]).
 */
final class Progress private (spark: SparkSession, operation: String, totalSteps: Int)
    extends Logging {
  private var step = 0
  private var current = "its first step"

  def start(what: String): Unit = {
    step += 1
    current = s"step $step of $totalSteps ($what)"
    val text = s"$operation: step $step of $totalSteps: $what"
    logInfo(text)
    spark.sparkContext.setJobDescription(text)
    spark.sparkContext.setLocalProperty(Progress.OperationProperty, operation)
  }

  def info(what: String): Unit = logInfo(s"$operation: $what")

  private def done(): Unit = {
    logInfo(s"$operation: done")
    spark.sparkContext.setJobDescription(null)
    spark.sparkContext.setLocalProperty(Progress.OperationProperty, null)
  }
}

object Progress {

  /**
   * Runs `body` as `operation` of `totalSteps` steps. The job description and the operation
   * property are cleared however `body` ends: they are thread-local, and a failed operation must
   * not lend its name to the jobs the thread runs next.
   */
  def run[T](spark: SparkSession, operation: String, totalSteps: Int)(body: Progress => T): T = {
    val progress = new Progress(spark, operation, totalSteps)
    try body(progress)
    catch {
      case t: Throwable if OutOfMemory.isOutOfMemory(t) =>
        throw OutOfMemory.error(spark, operation, progress.current, t)
    } finally progress.done()
  }

  /** The local property naming the operation a job runs for. */
  val OperationProperty = "deltaLifecycle.operation"
}
