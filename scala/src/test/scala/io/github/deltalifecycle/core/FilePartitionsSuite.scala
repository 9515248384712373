package io.github.deltalifecycle.core

import io.github.deltalifecycle.LifecycleSparkSession
import org.apache.spark.SparkException
import org.apache.spark.sql.delta.DeltaLog
import org.apache.spark.sql.delta.sources.DeltaSQLConf
import org.scalatest.funsuite.AnyFunSuite

/**
 * How work over a table's files is split (FilePartitions), and running out of memory as a typed
 * error (OutOfMemory): the arithmetic, the session setting, delta-spark building a real table's
 * state in the partitions the scope sets, and a real job whose task runs out of heap.
 */
class FilePartitionsSuite extends AnyFunSuite with LifecycleSparkSession {
  private val Key = FilePartitions.FilesPerPartitionKey
  private val SnapshotPartitions = DeltaSQLConf.DELTA_SNAPSHOT_PARTITIONS.key

  private def withSetting[T](key: String, value: Option[String])(body: => T): T = {
    val before = spark.conf.getOption(key)
    value.fold(spark.conf.unset(key))(spark.conf.set(key, _))
    try body
    finally before.fold(spark.conf.unset(key))(spark.conf.set(key, _))
  }

  test("partitions grow with the files, never their size") {
    withSetting(Key, None) {
      assert(FilePartitions.filesPerPartition(spark) === FilePartitions.DefaultFilesPerPartition)
      assert(FilePartitions.partitionsFor(spark, 0) === 1)
      assert(FilePartitions.partitionsFor(spark, 50000) === 1)
      assert(FilePartitions.partitionsFor(spark, 50001) === 2)
      assert(FilePartitions.partitionsFor(spark, 10000000) === 200)
    }
    withSetting(Key, Some("1000")) {
      assert(FilePartitions.partitionsFor(spark, 10000000) === 10000)
      assert(FilePartitions.partitionsFor(spark, Long.MaxValue / 2) === 100000)
    }
  }

  test("a setting that is not a positive number of files is a typed error") {
    Seq("0", "-5", "many", "1.5").foreach { bad =>
      withSetting(Key, Some(bad)) {
        val e = intercept[DeltaLifecycleException](FilePartitions.filesPerPartition(spark))
        assert(e.condition === "DELTA_LIFECYCLE_INVALID_ARGUMENT")
        assert(e.getMessage.contains(Key) && e.getMessage.contains(bad))
      }
    }
  }

  test("the file estimate reads the log's bytes, on the high side") {
    // 10 million adds in a 330 MB checkpoint (the benchmark's), 50 small commits of 464 bytes.
    val estimate = FilePartitions.estimatedFiles(330L << 20, 50L * 464)
    assert(estimate >= 10000000L && estimate < 11000000L)
    assert(FilePartitions.estimatedFiles(0, 0) === 0)
  }

  test(
    "delta-spark builds a snapshot's state in the partitions the scope sets, then it is put back"
  ) {
    val path = newTableDir("partitioned-state")
    spark.range(0, 40, 1, 20).write.format("delta").save(path)
    val log = DeltaLog.forTable(spark, path)
    withSetting(Key, Some("2")) {
      withSetting(SnapshotPartitions, Some("3")) {
        DeltaLog.clearCache()
        val snapshot = DeltaLog.forTable(spark, path).update()
        val files = FilePartitions.estimatedFiles(snapshot)
        val needed = FilePartitions.partitionsFor(spark, files)
        assert(needed > 3, s"$files files estimated")
        FilePartitions.withDeltaState(spark, files) {
          assert(spark.conf.get(SnapshotPartitions) === needed.toString)
          assert(snapshot.stateDS.rdd.getNumPartitions === needed)
          assert(DeltaState.load(snapshot).files === 20)
        }
        assert(spark.conf.get(SnapshotPartitions) === "3")
        // Never lowered: a session that asks for more partitions keeps them.
        withSetting(SnapshotPartitions, Some("1000")) {
          FilePartitions.withDeltaState(spark, files) {
            assert(spark.conf.get(SnapshotPartitions) === "1000")
          }
        }
      }
      withSetting(SnapshotPartitions, None) {
        FilePartitions.withDeltaState(spark, 1000L)(
          assert(spark.conf.get(SnapshotPartitions) === "500")
        )
        assert(spark.conf.getOption(SnapshotPartitions).isEmpty)
      }
    }
    assert(log.update().numOfFiles === 20)
  }

  test("what counts as running out of memory") {
    val heap = new OutOfMemoryError("Java heap space")
    assert(OutOfMemory.isOutOfMemory(heap))
    assert(OutOfMemory.isOutOfMemory(new RuntimeException("wrapped", heap)))
    assert(OutOfMemory.isOutOfMemory(new SparkException(
      "Job aborted due to stage failure: Task 1 in stage 3.0 failed 1 times, most recent " +
        "failure: Lost task 1.0 (TID 7): java.lang.OutOfMemoryError: Java heap space"
    )))
    assert(OutOfMemory.isOutOfMemory(new SparkException(
      "ExecutorLostFailure (executor 2 exited caused by one of the running tasks) " +
        "Reason: Command exited with code 52"
    )))
    assert(OutOfMemory.isOutOfMemory(new SparkException(
      "job failed",
      new TaskOutOfMemoryException(
        "java.lang.OutOfMemoryError: Java heap space (in a task of delta-lifecycle, partition 0)"
      )
    )))
    assert(!OutOfMemory.isOutOfMemory(new SparkException("exited with code 520")))
    assert(!OutOfMemory.isOutOfMemory(new IllegalStateException("no")))
    val typed = ErrorConditions.outOfMemory(
      operation = "op",
      step = "s",
      where = "w",
      reason = "r",
      memorySetting = "m",
      memory = "1g",
      filesPerPartitionSetting = Key,
      filesPerPartition = 1L,
      cause = heap
    )
    assert(!OutOfMemory.isOutOfMemory(typed))
  }

  test("a guarded task that runs out of heap fails its job, not the JVM; Progress names the step") {
    val rdd = spark.sparkContext.parallelize(1 to 4, 2).map { i =>
      if (i == 3) throw new OutOfMemoryError("Java heap space (thrown by the test)")
      i
    }
    val failure = intercept[DeltaLifecycleException] {
      Progress.run(spark, "TEST OPERATION on t", 2) { p =>
        p.start("first")
        p.start("count the files")
        OutOfMemory.guarded(rdd).count()
      }
    }
    assert(failure.condition === "DELTA_LIFECYCLE_OUT_OF_MEMORY")
    val parameters = failure.parameters
    assert(parameters("operation") === "TEST OPERATION on t")
    assert(parameters("step") === "step 2 of 2 (count the files)")
    assert(parameters("where").startsWith("a task (local mode"))
    assert(parameters("memorySetting") === "spark.driver.memory")
    assert(parameters("filesPerPartitionSetting") === Key)
    assert(failure.getMessage.contains("raise spark.driver.memory"))
    // The session and its JVM are still there.
    assert(spark.range(10).count() === 10)
  }

  test("in local mode, a state whose partitions cannot fit the heap is refused before it starts") {
    val heap = Runtime.getRuntime.maxMemory
    // Fits: a partition's worth for each of the session's two task slots is far below the heap.
    OutOfMemory.checkLocalFit(spark, 200000, 100)
    val failure = intercept[DeltaLifecycleException] {
      Progress.run(spark, "TEST OPERATION on t", 1) { p =>
        p.start("rebuild the state")
        OutOfMemory.checkLocalFit(spark, heap / 1000, 1)
      }
    }
    assert(failure.parameters("step") === "step 1 of 1 (rebuild the state)")
    assert(failure.parameters("where").startsWith("a task (local mode"))
    assert(failure.parameters("reason").contains("so the job was not started"), failure.getMessage)
  }

  test("running out of heap on the driver is named as such") {
    val failure = intercept[DeltaLifecycleException] {
      Progress.run(spark, "TEST OPERATION on t", 1) { p =>
        p.start("collect")
        throw new OutOfMemoryError("Java heap space (thrown by the test)")
      }
    }
    assert(failure.parameters("where") === "the driver")
    assert(failure.parameters("step") === "step 1 of 1 (collect)")
  }
}
