package io.github.deltalifecycle.core

import java.io.File
import java.nio.file.Files

import io.github.deltalifecycle.LifecycleSparkSession
import org.scalatest.funsuite.AnyFunSuite

/** An unreadable checkpoint is replaced by older state when the log has it, else a typed error. */
class CheckpointFallbackSuite extends AnyFunSuite with LifecycleSparkSession {

  private def logFile(path: String, name: String) = new File(new File(path, "_delta_log"), name)

  test("a corrupt checkpoint falls back to the commits, and fails clearly when they are gone") {
    val path = newTableDir("corrupt-checkpoint")
    spark.range(1).write.format("delta").option("delta.checkpointInterval", "2").save(path)
    (1 to 3).foreach(i => spark.range(i, i + 1).write.format("delta").mode("append").save(path))
    val log = TableLog.forPath(spark.sessionState.newHadoopConf(), path)
    val expected = log.latestSnapshot()
    assert(expected.segment.checkpointVersion === 2)

    val checkpoint = logFile(path, f"${2}%020d.checkpoint.parquet")
    Files.write(checkpoint.toPath, "not parquet".getBytes)
    val rebuilt = log.latestSnapshot()
    assert(rebuilt.segment.checkpoint.isEmpty, "expected a replay from version 0")
    assert(rebuilt.activeFiles.map(_.path).toSet === expected.activeFiles.map(_.path).toSet)
    // Reading only the protocol and metadata falls back the same way (without the version
    // checksums, which would answer first).
    Option(new File(path, "_delta_log").listFiles()).toSeq.flatten
      .filter(_.getName.endsWith(".crc")).foreach(_.delete())
    val head = log.latestHead()
    assert(head.version === expected.version)
    assert(head.protocol === expected.protocol && head.metadata === expected.metadata)

    Seq(0, 1).foreach(v => logFile(path, f"$v%020d.json").delete())
    val e = intercept[DeltaLifecycleException](log.latestSnapshot())
    assert(e.getCondition === "DELTA_LIFECYCLE_UNREADABLE_CHECKPOINT")
    assert(e.getMessage.contains(checkpoint.getName))
    val fromHead = intercept[DeltaLifecycleException](log.latestHead())
    assert(fromHead.getCondition === "DELTA_LIFECYCLE_UNREADABLE_CHECKPOINT")
  }

  test("the tail is listed from _last_checkpoint; a damaged or stale one does not mislead") {
    val path = newTableDir("last-checkpoint")
    spark.range(1).write.format("delta").option("delta.checkpointInterval", "2").save(path)
    (1 to 4).foreach(i => spark.range(i, i + 1).write.format("delta").mode("append").save(path))
    val log = TableLog.forPath(spark.sessionState.newHadoopConf(), path)
    val tail = log.tailListing()
    assert(tail.listedFrom === 4L)
    assert(tail.commits.map(_.version) === Seq(4L))
    val expected = log.snapshotAt(4, log.listing()).activeFiles.map(_.path).toSet

    val lastCheckpoint = logFile(path, TableLog.LastCheckpointFileName)
    Seq("not json", """{"version":999,"size":1}""", """{"size":1}""", "").foreach { damaged =>
      Files.write(lastCheckpoint.toPath, damaged.getBytes)
      val listing = log.tailListing()
      assert(listing.listedFrom === 0L, damaged)
      assert(listing.latestVersion === 4L, damaged)
      assert(log.latestSnapshot().activeFiles.map(_.path).toSet === expected, damaged)
    }
    // An older checkpoint named by a stale file still plans the latest version.
    Files.write(lastCheckpoint.toPath, """{"version":2,"size":1}""".getBytes)
    assert(log.tailListing().listedFrom === 2L)
    assert(log.latestSnapshot().segment.checkpointVersion === 4L)
  }

  test("a protocol the Delta protocol does not define is a typed error") {
    val path = newTableDir("invalid-protocol")
    spark.range(1).write.format("delta").save(path)
    val commit = logFile(path, f"${1}%020d.json")
    val log = TableLog.forPath(spark.sessionState.newHadoopConf(), path)
    def refusal(protocolJson: String): DeltaLifecycleException = {
      Files.write(commit.toPath, s"""{"protocol":$protocolJson}""".getBytes)
      intercept[DeltaLifecycleException](log.latestSnapshot())
    }

    val tooNew = refusal(
      """{"minReaderVersion":99,"minWriterVersion":7,"readerFeatures":[],"writerFeatures":[]}"""
    )
    withClue(tooNew.getMessage) {
      assert(tooNew.getCondition === "DELTA_LIFECYCLE_INVALID_PROTOCOL")
      assert(tooNew.getMessage.contains("minReaderVersion 99"))
    }
    // Reader version 3 requires a reader feature list; delta-spark's Protocol refuses it.
    val inconsistent = refusal("""{"minReaderVersion":3,"minWriterVersion":7}""")
    withClue(inconsistent.getMessage) {
      assert(inconsistent.getCondition === "DELTA_LIFECYCLE_INVALID_PROTOCOL")
      assert(inconsistent.getMessage.contains(commit.getName))
    }
    // Version 0 is still readable; only versions from the bad commit on are refused.
    assert(log.snapshotAt(0).protocol.minReaderVersion === 1)
  }
}
