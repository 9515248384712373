package io.github.deltalifecycle.features.redirect

import io.github.deltalifecycle.core.OutOfMemory
import org.apache.spark.{Partitioner, SparkContext}
import org.apache.spark.rdd.RDD
import org.apache.spark.storage.StorageLevel

/** The files of a copy: how many, their bytes, and how they go to the copy tasks. */
private[redirect] sealed trait CopyPlan {
  def count: Long
  def bytes: Long
  def inPlace: Long
  def tasks: Int

  /** Every file, those referenced in place too (a DRY RUN looks each one up). */
  def all: RDD[CopyFile]

  /**
   * The files to copy, partition k holding task k's files: each file goes to the task its
   * cumulative weight falls in, so each task gets about the same share of the weight (bytes plus a
   * per-file cost).
   */
  def balanced: RDD[CopyFile]

  def release(): Unit
}

/**
 * Files a Spark job lists, persisted, with what pass 1 found: per input partition the count, bytes
 * and weight of the files to copy, and the count of files referenced in place (one small row per
 * partition reaches the driver). Files referenced in place are neither copied nor looked up, so
 * each partition keeps only their number: a table whose files live elsewhere (a shallow clone's)
 * caches nothing per file; the listing itself may have counted such files already (Left).
 */
private[redirect] final class ListedOnExecutors(
    sc: SparkContext,
    files: RDD[Either[Long, CopyFile]]
) extends CopyPlan {
  // Cached in the list's partitions, which ReferencedFiles bounds; tasks that run out of heap,
  // listing or reading the cache back, fail as tasks (OutOfMemory.guarded).
  private val cached = OutOfMemory.guarded(files.mapPartitions { it =>
    var inPlace = 0L
    val kept = it.filter {
      case Left(counted) => inPlace += counted; false
      case Right(f) if f.target == null => inPlace += 1; false
      case Right(_) => true
    }
    kept ++ Iterator.single(Left(inPlace))
  }).persist(StorageLevel.MEMORY_AND_DISK)
  private val listed = OutOfMemory.guarded(cached)
  val all: RDD[CopyFile] = listed.flatMap(_.toOption)
  private val sums = listed.mapPartitions { it =>
    var n, bytes, weight, inPlace = 0L
    it.foreach {
      case Left(elsewhere) => inPlace += elsewhere
      case Right(f) => n += 1; bytes += math.max(f.size, 0L); weight += CopyPlan.weight(f)
    }
    Iterator.single((n, bytes, weight, inPlace))
  }.collect()
  val count: Long = sums.map(_._1).sum
  val bytes: Long = sums.map(_._2).sum
  val inPlace: Long = sums.map(_._4).sum
  private val totalWeight = sums.map(_._3).sum
  val tasks: Int = CopyPlan.taskCount(count, totalWeight, sc.defaultParallelism)

  def balanced: RDD[CopyFile] = {
    val perTask = CopyPlan.perTask(totalWeight, tasks)
    val offsets = sums.map(_._3).scanLeft(0L)(_ + _)
    val n = tasks
    all.mapPartitionsWithIndex((i, it) => CopyPlan.assign(it, offsets(i), perTask, n))
      .partitionBy(new CopyPlan.ExactPartitioner(n)).values
  }

  def release(): Unit = cached.unpersist(blocking = false)
}

/**
 * Files the driver holds already (log files, a few thousand at most where a checkpoint keeps the
 * log short): summed and given to their tasks here, so their copy is one job of one stage.
 */
private[redirect] final class ListedOnDriver(sc: SparkContext, files: Seq[CopyFile])
    extends CopyPlan {
  private val toCopy = files.filter(_.target != null)
  val count: Long = toCopy.size.toLong
  val bytes: Long = toCopy.map(f => math.max(f.size, 0L)).sum
  val inPlace: Long = (files.size - toCopy.size).toLong
  private val totalWeight = toCopy.map(CopyPlan.weight).sum
  val tasks: Int = CopyPlan.taskCount(count, totalWeight, sc.defaultParallelism)

  def all: RDD[CopyFile] = sc.parallelize(files, math.max(1, tasks))

  def balanced: RDD[CopyFile] = {
    val byTask =
      CopyPlan.assign(toCopy.iterator, 0L, CopyPlan.perTask(totalWeight, tasks), tasks)
        .toSeq.groupBy(_._1)
    // One element per task: parallelize puts element k in partition k.
    sc.parallelize((0 until tasks).map(k => byTask.getOrElse(k, Nil).map(_._2)), tasks)
      .flatMap(identity)
  }

  def release(): Unit = ()
}

/** How a copy's files are shared out among its tasks: by weight, about the same share each. */
private[redirect] object CopyPlan {

  /** What a file costs a task: its bytes plus a fixed cost per file (opening, checks). */
  private val PerFileWeight: Long = 1L << 20
  private val TaskWeight: Long = 256L << 20
  private val MaxTasks = 10000

  private[redirect] def weight(f: CopyFile): Long = math.max(f.size, 0L) + PerFileWeight

  /**
   * About 256 MB of weight per task, at least two tasks per core while there are files for them,
   * and at most 10,000 tasks.
   */
  private[redirect] def taskCount(files: Long, weight: Long, cores: Int): Int = {
    val byWeight = (weight + TaskWeight - 1) / TaskWeight
    math.max(1L, math.min(files, math.min(MaxTasks.toLong, math.max(byWeight, 2L * cores))))
      .toInt
  }

  private[redirect] def perTask(totalWeight: Long, tasks: Int): Long =
    math.max(1L, (totalWeight + tasks - 1) / tasks)

  /**
   * The task of each file to copy (files referenced in place are left out): the one its cumulative
   * weight, from `start`, falls in.
   */
  private[redirect] def assign(
      files: Iterator[CopyFile],
      start: Long,
      perTask: Long,
      tasks: Int
  ): Iterator[(Int, CopyFile)] = {
    var cumulative = start
    files.filter(_.target != null).map { f =>
      val w = weight(f)
      val task = math.min(tasks - 1L, (cumulative + w / 2) / perTask).toInt
      cumulative += w
      task -> f
    }
  }

  /** Partition `k` for key `k`: the balanced assignment is computed, not hashed. */
  private[redirect] final class ExactPartitioner(n: Int) extends Partitioner {
    override def numPartitions: Int = n
    override def getPartition(key: Any): Int = key.asInstanceOf[Int]
  }
}
