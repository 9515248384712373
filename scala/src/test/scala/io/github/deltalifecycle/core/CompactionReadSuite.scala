package io.github.deltalifecycle.core

import java.io.File
import java.nio.charset.StandardCharsets
import java.nio.file.Files

import io.github.deltalifecycle.LifecycleSparkSession
import org.apache.spark.sql.delta.DeltaLog
import org.apache.spark.sql.delta.actions.{Action, AddFile, CommitInfo}
import org.scalatest.funsuite.AnyFunSuite

/**
 * Snapshots built from `<x>.<y>.compacted.json` files: a good compaction replaces its commits, a
 * bad one (empty, truncated, overlapping) falls back to them, and delta-spark (which reads
 * compactions itself) agrees with the core on the result.
 */
class CompactionReadSuite extends AnyFunSuite with LifecycleSparkSession {

  private def table(name: String, commits: Int): (String, TableLog) = {
    val path = newTableDir(name)
    (0 until commits).foreach(i =>
      spark.range(i * 10, i * 10 + 10).write.format("delta").mode("append").save(path)
    )
    spark.sql(s"DELETE FROM delta.`$path` WHERE id % 10 = 0")
    (path, TableLog.forPath(spark.sessionState.newHadoopConf(), path))
  }

  private def logFile(path: String, name: String) = new File(new File(path, "_delta_log"), name)

  /** Writes the reconciled actions of commits start..end as PROTOCOL.md's compaction file. */
  private def writeCompaction(log: TableLog, path: String, start: Long, end: Long): File = {
    val listing = log.listing()
    val reconciler = new StateReconciler(log.fs, log.tablePath)
    val actions: Seq[Action] = (start to end).flatMap(v =>
      ActionReader.readJson(log.fs, listing.commit(v).get.status)
    )
      .filterNot(_.isInstanceOf[CommitInfo])
    actions.foreach(reconciler.apply)
    val state = reconciler.currentProtocol.toSeq ++ reconciler.currentMetadata.toSeq ++
      reconciler.activeFiles ++ reconciler.tombstoneFiles ++ reconciler.setTransactions.values
    val file = logFile(path, f"$start%020d.$end%020d.compacted.json")
    Files.write(
      file.toPath,
      state.map(_.json).mkString("", "\n", "\n").getBytes(StandardCharsets.UTF_8)
    )
    file
  }

  private def fileSet(files: Seq[AddFile], log: TableLog): Set[(String, Long)] = {
    val r = new StateReconciler(log.fs, log.tablePath)
    files.map(a => (r.canonicalPath(a.path), a.size)).toSet
  }

  test("a good compaction replaces its commits, and delta-spark reads the same state") {
    val (path, log) = table("good", 5)
    val before = log.latestSnapshot()
    writeCompaction(log, path, 1, 3)
    val snapshot = log.latestSnapshot()
    assert(snapshot.segment.compactions.map(c => (c.start, c.end)) === Seq((1L, 3L)))
    // Damage a commit inside the range: only a snapshot that used the compaction still builds.
    Files.write(
      logFile(path, f"${2}%020d.json").toPath,
      "not json\n".getBytes(StandardCharsets.UTF_8)
    )
    val fromCompaction = log.latestSnapshot()
    assert(fileSet(fromCompaction.activeFiles, log) === fileSet(before.activeFiles, log))

    DeltaLog.clearCache()
    val deltaSpark = DeltaLog.forTable(spark, path).update()
    assert(fileSet(deltaSpark.allFiles.collect().toSeq, log) ===
      fileSet(fromCompaction.activeFiles, log))
  }

  test("an empty or truncated compaction falls back to the commits") {
    val (path, log) = table("bad", 5)
    val expected = fileSet(log.latestSnapshot().activeFiles, log)
    val compaction = writeCompaction(log, path, 1, 4)

    Files.write(compaction.toPath, Array.emptyByteArray)
    assert(fileSet(log.latestSnapshot().activeFiles, log) === expected)

    // Cut inside the last line, as an interrupted write leaves it. (A cut that happens to
    // fall exactly on a line boundary leaves a shorter file that parses; no reader can tell.)
    writeCompaction(log, path, 1, 4)
    val bytes = Files.readAllBytes(compaction.toPath)
    Files.write(compaction.toPath, bytes.take(bytes.length - 20))
    assert(fileSet(log.latestSnapshot().activeFiles, log) === expected)
  }

  test("overlapping compactions are never combined; the plan picks a non-overlapping chain") {
    val (path, log) = table("overlap", 6)
    val expected = fileSet(log.latestSnapshot().activeFiles, log)
    writeCompaction(log, path, 1, 3)
    writeCompaction(log, path, 2, 5)
    writeCompaction(log, path, 4, 5)
    val snapshot = log.latestSnapshot()
    assert(snapshot.segment.compactions.map(c => (c.start, c.end)) === Seq((1L, 3L), (4L, 5L)))
    assert(fileSet(snapshot.activeFiles, log) === expected)
    // Time travel into the middle of a compaction's range does not use it.
    assert(log.snapshotAt(2).segment.compactions.isEmpty)
  }

  test("DESCRIBE PROTOCOL HISTORY lists the compactions that cover each version") {
    val (path, log) = table("history", 4)
    writeCompaction(log, path, 1, 2)
    val rows = spark.sql(s"DESCRIBE PROTOCOL HISTORY delta.`$path`").collect()
    val covering =
      rows.map(r => r.getLong(0) -> r.getSeq[String](r.fieldIndex("compactions"))).toMap
    assert(covering(0).isEmpty)
    assert(covering(1) === Seq(f"${1}%020d.${2}%020d.compacted.json"))
    assert(covering(2) === covering(1))
    assert(covering(3).isEmpty)
  }
}
