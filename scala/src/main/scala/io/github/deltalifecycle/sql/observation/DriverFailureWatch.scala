package io.github.deltalifecycle.sql.observation

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import org.apache.spark.SparkContext
import org.apache.spark.internal.Logging
import org.apache.spark.sql.SparkSession

/**
 * Turns the death of one of Spark's scheduling threads on the driver into failed jobs instead of a
 * hang.
 *
 * When the driver runs out of memory inside the RPC dispatcher or the task-result getter, the
 * thread dies with the message it was handling, so Spark never learns that a task finished: every
 * job waiting for it, and the command waiting for that job, blocks forever with no CPU use. Spark
 * installs no handler for this on the driver. The watch cancels the running jobs of every
 * registered context, with a reason naming the thread and the error, so the command fails the way a
 * failed step does and leaves the table as a crash at that step would (a re-run continues).
 *
 * It chains to the handler that was installed before it, and acts only on the threads whose death
 * loses scheduler messages; other threads' failures are left to that handler. The DAG scheduler's
 * own event loop is not covered: cancellations travel through it, so once it is dead only stopping
 * the context fails the jobs, which is the user's call (or `-XX:+ExitOnOutOfMemoryError`).
 */
object DriverFailureWatch extends Logging {

  /** Name prefixes of the driver threads whose death leaves jobs waiting forever. */
  private val SchedulerThreads = Seq("dispatcher-event-loop", "task-result-getter")

  private val contexts = new java.util.WeakHashMap[SparkContext, java.lang.Boolean]()
  @volatile private var installed = false

  /** Watches `spark`'s context; the handler is installed on first use, once per JVM. */
  def register(spark: SparkSession): Unit = contexts.synchronized {
    contexts.put(spark.sparkContext, true)
    if (!installed) {
      val previous = Thread.getDefaultUncaughtExceptionHandler
      Thread.setDefaultUncaughtExceptionHandler(new Handler(Option(previous)))
      installed = true
    }
  }

  /** Cancels the running jobs of every watched context, naming the dead thread and its error. */
  private[observation] def failRunningJobs(thread: Thread, error: Throwable): Unit = {
    val reason = s"Spark's driver thread ${thread.getName} died of $error, so the results of " +
      "running tasks can no longer arrive; the job is cancelled instead of waiting forever " +
      "(raise spark.driver.memory if it ran out of memory)"
    val live = contexts.synchronized(contexts.keySet.asScala.toList).filterNot(_.isStopped)
    live.foreach { sc =>
      sc.statusTracker.getActiveJobIds().foreach(id => sc.cancelJob(id, reason))
    }
  }

  private final class Handler(previous: Option[Thread.UncaughtExceptionHandler])
      extends Thread.UncaughtExceptionHandler {
    override def uncaughtException(thread: Thread, error: Throwable): Unit = {
      if (SchedulerThreads.exists(thread.getName.startsWith)) {
        try failRunningJobs(thread, error)
        catch { case NonFatal(e) => logError("Could not cancel the jobs left waiting", e) }
      }
      // Without an earlier handler, report it as the JVM would (not through the thread group: it
      // would call this default handler again).
      previous match {
        case Some(handler) => handler.uncaughtException(thread, error)
        case None => logError(s"Uncaught exception in thread ${thread.getName}", error)
      }
    }
  }
}
