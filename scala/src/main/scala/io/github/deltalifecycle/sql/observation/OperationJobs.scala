package io.github.deltalifecycle.sql.observation

import java.util.concurrent.ConcurrentHashMap

import scala.jdk.CollectionConverters._

import io.github.deltalifecycle.core.Progress
import org.apache.spark.SparkContext
import org.apache.spark.scheduler.{SparkListener, SparkListenerJobEnd, SparkListenerJobStart}
import org.apache.spark.sql.SparkSession

/**
 * The running Spark jobs of this project's operations (those started under a [[Progress]] step),
 * with their descriptions, so progress can be reported where the Spark UI is not at hand: the
 * Python package polls [[OperationJobs.running]] while a statement runs.
 */
final class OperationJobs extends SparkListener {
  import OperationJobs.JobDescriptionProperty
  private val descriptions = new ConcurrentHashMap[Int, String]()

  override def onJobStart(start: SparkListenerJobStart): Unit =
    Option(start.properties).filter(_.getProperty(Progress.OperationProperty) != null).foreach {
      props =>
        val description = Option(props.getProperty(JobDescriptionProperty))
        descriptions.put(
          start.jobId,
          description.getOrElse(props.getProperty(Progress.OperationProperty))
        )
    }

  override def onJobEnd(end: SparkListenerJobEnd): Unit = descriptions.remove(end.jobId)

  private[observation] def snapshot: Seq[(Int, String)] =
    descriptions.asScala.toSeq.sortBy(_._1)
}

object OperationJobs {

  /** The local property `SparkContext.setJobDescription` sets (its constant is Spark-private). */
  private val JobDescriptionProperty = "spark.job.description"

  private val listeners = new java.util.WeakHashMap[SparkContext, OperationJobs]()

  /** Adds the listener to `spark`'s context, once per context. */
  def register(spark: SparkSession): Unit = listenerOf(spark.sparkContext)

  /**
   * One line per running job of an operation, oldest first: job id, tasks finished, tasks in all
   * (over the job's stages), and the job's description, separated by tabs.
   */
  def running(spark: SparkSession): Array[String] = {
    val sc = spark.sparkContext
    val tracker = sc.statusTracker
    listenerOf(sc).snapshot.map { case (jobId, description) =>
      val stages = tracker.getJobInfo(jobId).toSeq.flatMap(_.stageIds.toSeq)
        .flatMap(tracker.getStageInfo(_).toSeq)
      val done = stages.map(_.numCompletedTasks).sum
      val total = stages.map(_.numTasks).sum
      s"$jobId\t$done\t$total\t$description"
    }.toArray
  }

  private def listenerOf(sc: SparkContext): OperationJobs = listeners.synchronized {
    Option(listeners.get(sc)).getOrElse {
      val listener = new OperationJobs
      sc.addSparkListener(listener)
      listeners.put(sc, listener)
      listener
    }
  }
}
