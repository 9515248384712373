package io.github.deltalifecycle.core

import scala.reflect.ClassTag

import org.apache.spark.{Partition, SparkException, TaskContext}
import org.apache.spark.rdd.RDD
import org.apache.spark.sql.SparkSession

/**
 * Running out of heap in a long operation, reported as DELTA_LIFECYCLE_OUT_OF_MEMORY: the step it
 * happened in, where (the driver or a task), and the settings that give it room.
 *
 * Spark ends an executor whose task throws `OutOfMemoryError`. On a cluster the driver survives and
 * sees a failed job, which [[Progress]] reports. The tasks of this project's own file jobs
 * ([[guarded]]) fail with [[TaskOutOfMemoryException]] instead, an ordinary task failure, so the
 * executor survives too: what the task held is garbage once it fails.
 *
 * In local mode the executor is the driver's JVM, and a heap the tasks fill is everyone's: other
 * threads of Spark's run out too, and the session dies before any error reaches the user (seen with
 * a state of 300,000 files in one partition at 256 MB). So before this project builds delta-spark's
 * state of a snapshot in local mode, [[checkLocalFit]] compares what one partition of it needs with
 * the driver's heap, and refuses a job that cannot fit with the same typed error, before anything
 * starts.
 */
object OutOfMemory {

  /** `rdd`, whose tasks report running out of heap as [[TaskOutOfMemoryException]]. */
  def guarded[T: ClassTag](rdd: RDD[T]): RDD[T] = new GuardedRDD(rdd)

  /**
   * The heap a task needs per file of delta-spark's state it rebuilds: the replay's map entry and
   * action (about 700 bytes for an add with statistics on two columns), the sorted rows it reads
   * and the serialized block it caches (about 300 bytes each). On the low side, so that only a job
   * that cannot fit is refused.
   */
  private val HeapBytesPerFile = 1536L

  /**
   * In local mode: refuses, with [[PredictedOutOfMemoryException]], to build a state of `files`
   * files in `partitions` partitions when the tasks that run at once would need more than the
   * driver's whole heap.
   */
  def checkLocalFit(spark: SparkSession, files: Long, partitions: Int): Unit = {
    val sc = spark.sparkContext
    if (!sc.isLocal || partitions <= 0) return
    val perPartition = (files + partitions - 1) / partitions
    val atOnce = math.min(partitions, math.max(1, sc.defaultParallelism))
    val needed = atOnce * perPartition * HeapBytesPerFile
    val heap = Runtime.getRuntime.maxMemory
    if (needed > heap) throw new PredictedOutOfMemoryException(
      s"$atOnce tasks at once, each rebuilding about $perPartition files of delta-spark's state, " +
        s"need about ${needed >> 20} MB, more than the driver's ${heap >> 20} MB of heap, so the " +
        "job was not started"
    )
  }

  /** Runs in a task: `body`, with running out of heap turned into an ordinary task failure. */
  private[core] def inTask[T](body: => T): T =
    try body
    catch {
      case e: OutOfMemoryError =>
        throw new TaskOutOfMemoryException(
          s"$e (in a task of delta-lifecycle, partition ${TaskContext.getPartitionId()})"
        )
    }

  /**
   * Whether `t` is, or was caused by, running out of heap: on the driver, in a task of this
   * project's, or in any task whose failure Spark reports in the failed job's message (it copies
   * the task's error there, and for an executor that ended on it, Spark's out-of-memory exit code
   * 52). An error this project already typed is not one again.
   */
  def isOutOfMemory(t: Throwable): Boolean = t match {
    case _: DeltaLifecycleException => false
    case _ => causes(t).exists {
        case _: OutOfMemoryError | _: TaskOutOfMemoryException | _: PredictedOutOfMemoryException =>
          true
        case e => Option(e.getMessage).exists(m =>
            m.contains(classOf[OutOfMemoryError].getName) || ExecutorOutOfMemoryExit.findFirstIn(
              m
            ).isDefined
          )
      }
  }

  /** How Spark reports an executor that ended with its out-of-memory exit code. */
  private val ExecutorOutOfMemoryExit = "exited with code 52\\b|exit code 52\\b".r

  private def causes(t: Throwable): Seq[Throwable] =
    Iterator.iterate(t)(_.getCause).takeWhile(_ != null).take(20).toSeq

  /**
   * The typed error for `failure` in `step` of `operation`. A failed job means a task ran out of
   * heap: the executors' (spark.executor.memory), or the driver's in local mode, where the tasks
   * share the driver's JVM. Anything else ran out on the driver.
   */
  def error(
      spark: SparkSession,
      operation: String,
      step: String,
      failure: Throwable
  ): DeltaLifecycleException = {
    val sc = spark.sparkContext
    val inTask = causes(failure).exists {
      case _: SparkException | _: TaskOutOfMemoryException | _: PredictedOutOfMemoryException =>
        true
      case _ => false
    }
    val reason = causes(failure).collectFirst { case p: PredictedOutOfMemoryException =>
      p.getMessage
    }.getOrElse(
      causes(failure).collectFirst { case e: OutOfMemoryError => e.toString }
        .getOrElse(s"${classOf[OutOfMemoryError].getName} (${firstLine(failure)})")
    )
    val (where, setting, now) =
      if (inTask && !sc.isLocal)
        ("a task", "spark.executor.memory", sc.getConf.get("spark.executor.memory", "1g"))
      else {
        val heap = s"${Runtime.getRuntime.maxMemory >> 20} MB of heap"
        if (inTask) ("a task (local mode: the tasks run in the driver's JVM)", DriverMemory, heap)
        else ("the driver", DriverMemory, heap)
      }
    ErrorConditions.outOfMemory(
      operation = operation,
      step = step,
      where = where,
      reason = reason,
      memorySetting = setting,
      memory = now,
      filesPerPartitionSetting = FilePartitions.FilesPerPartitionKey,
      filesPerPartition = FilePartitions.filesPerPartition(spark),
      cause = failure
    )
  }

  private val DriverMemory = "spark.driver.memory"

  private def firstLine(t: Throwable): String =
    Option(t.getMessage).flatMap(_.split('\n').find(_.trim.nonEmpty)).getOrElse(t.toString)
      .take(300)

  /** Passes the parent's partitions through [[inTask]]: computing them, and each row. */
  private final class GuardedRDD[T: ClassTag](parent: RDD[T]) extends RDD[T](parent) {
    override val partitioner = parent.partitioner

    override protected def getPartitions: Array[Partition] = parent.partitions

    override def compute(split: Partition, context: TaskContext): Iterator[T] = {
      val rows = inTask(parent.iterator(split, context))
      new Iterator[T] {
        def hasNext: Boolean = inTask(rows.hasNext)
        def next(): T = inTask(rows.next())
      }
    }
  }
}

/**
 * A task of this project's that ran out of heap: an ordinary task failure, which leaves the
 * executor (in local mode, the driver) running. The message carries the `OutOfMemoryError`.
 */
final class TaskOutOfMemoryException(message: String) extends RuntimeException(message)

/** A job [[OutOfMemory.checkLocalFit]] did not start: it would not fit the driver's heap. */
final class PredictedOutOfMemoryException(message: String) extends RuntimeException(message)
