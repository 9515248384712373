package io.github.deltalifecycle.core

import scala.util.Try

import io.github.deltalifecycle.{LifecycleSparkSession, SharedTestData}
import io.github.deltalifecycle.features.compaction.LogCompaction
import org.apache.spark.sql.{DataFrame, Row}
import org.apache.spark.sql.delta.{DeltaLog, Snapshot}
import org.apache.spark.sql.functions.col
import org.scalatest.funsuite.AnyFunSuite

/**
 * The file state [[FileState]] answers from a checkpoint and the commits after it agrees with
 * delta-spark's snapshot (its full state reconstruction): the live files (canonical path and
 * deletion vector), their count and bytes, the files with deletion vectors, and the unexpired
 * tombstones. On every table of tests/data that delta-spark opens, and on tables whose commits
 * after the checkpoint remove, re-add and give files new deletion vectors, with classic, multi-part
 * and V2 checkpoints, with and without compactions; each answered both ways, with the tail
 * reconciled on the driver and in a Spark job.
 */
class FileStateSuite extends AnyFunSuite with LifecycleSparkSession with TablesWithTail {

  /** What is compared: the live files as keys, their bytes, the DV count and the tombstones. */
  private case class Figures(
      files: Set[FileKey],
      bytes: Long,
      withDeletionVectors: Long,
      tombstones: Set[FileKey]
  )

  /** The key of a row whose first two columns are a file's path and deletion vector. */
  private def keyOf(keys: FileKeys)(r: Row): FileKey = {
    val dv = Option(r.getStruct(1)).map(d =>
      d.getString(0) + d.getString(1) + Option(d.get(2)).fold("")("@" + _)
    )
    FileKey(keys.canonicalPath(r.getString(0)), dv)
  }

  private def keysOf(df: DataFrame, keys: FileKeys, c: String): Set[FileKey] =
    df.select(col(s"$c.path"), col(s"$c.deletionVector")).collect().map(keyOf(keys)).toSet

  private def minRetention(snapshot: Snapshot): Long =
    snapshot.deltaLog.clock.getTimeMillis() - DeltaLog.tombstoneRetentionMillis(snapshot.metadata)

  /** delta-spark's figures, from one collect of its files and one of its tombstones. */
  private def expected(snapshot: Snapshot, keys: FileKeys): Figures = {
    val files = snapshot.allFiles.toDF().select("path", "deletionVector", "size").collect()
    val tombstones = snapshot.tombstones.toDF().select("path", "deletionVector").collect()
    Figures(
      files.map(keyOf(keys)).toSet,
      files.map(_.getLong(2)).sum,
      files.count(!_.isNullAt(1)).toLong,
      tombstones.map(keyOf(keys)).toSet
    )
  }

  private def actual(log: TableLog, version: Long, tailBytes: Long, retention: Long): Figures = {
    val listing = log.listingFor(version)
    val keys = new FileKeys(log.fs, log.tablePath)
    def scan(q: FileQuery) = FileState.of(spark, log, listing, version, q, tailBytes)
    val all = scan(FileState.allFiles())
    val tombstones = scan(FileQuery(
      FileActionKind.Remove,
      Seq("deletionTimestamp"),
      col("remove.deletionTimestamp") > retention
    ))
    Figures(
      keysOf(all, keys, "add"),
      FileState.tally(all).bytes,
      FileState.tally(scan(FileState.withDeletionVectors)).files,
      keysOf(tombstones, keys, "remove")
    )
  }

  /** Both ways of reconciling the tail agree with delta-spark at `version`. */
  private def check(path: String, version: Long): Unit = {
    val deltaLog = DeltaLog.forTable(spark, path)
    val snapshot = deltaLog.getSnapshotAt(version)
    val log = TableLog.forPath(spark.sessionState.newHadoopConf(), path)
    val reference = expected(snapshot, new FileKeys(log.fs, log.tablePath))
    // FileState reconciles on the driver only a tail after a checkpoint; without either, both
    // ways run the same job on the same segment, so that job is checked once.
    val (segment, _) = log.readableSegment(version, log.listingFor(version))
    val driverWay = segment.checkpoint.isDefined && segment.commits.nonEmpty
    val ways = Seq("on the driver" -> FileState.DriverTailBytes, "in a job" -> 0L)
    for ((how, bytes) <- if (driverWay) ways else ways.takeRight(1)) {
      withClue(s"version $version, tail reconciled $how: ") {
        assert(actual(log, version, bytes, minRetention(snapshot)) === reference)
      }
    }
  }

  for (group <- Seq("delta-golden", "delta-rs"); name <- SharedTestData.tables(group)) {
    test(s"agrees with delta-spark on $group/$name") {
      val path = copyOfSharedTable(group, name)
      DeltaLog.clearCache()
      Try(DeltaLog.forTable(spark, path).update()).toOption.filter(_.version >= 0) match {
        case Some(latest) => check(path, latest.version)
        case None => // delta-spark refuses it; ConformanceSuite checks the core's refusal
      }
    }
  }

  private def checkEveryVersionAfter(path: String, checkpointed: Long): Unit = {
    val latest = DeltaLog.forTable(spark, path).update().version
    (checkpointed to latest).foreach(v => check(path, v))
  }

  test("a classic checkpoint and a tail of removes, re-adds and new deletion vectors") {
    withoutPolicy {
      val (path, checkpointed) = tableWithTail("classic", Map.empty)
      val log = TableLog.forPath(spark.sessionState.newHadoopConf(), path)
      val kinds = log.listing().checkpoints.map(c => c.version -> c.kind)
      assert(kinds.headOption === Some(checkpointed -> CheckpointKind.Classic), kinds)
      checkEveryVersionAfter(path, checkpointed)
    }
  }

  test("a multi-part checkpoint") {
    withoutPolicy {
      val settings = Map("spark.databricks.delta.checkpoint.partSize" -> "3")
      val (path, checkpointed) = tableWithTail("multi-part", settings)
      val log = TableLog.forPath(spark.sessionState.newHadoopConf(), path)
      val kinds = log.listing().checkpoints.map(c => c.version -> c.kind)
      assert(kinds.headOption === Some(checkpointed -> CheckpointKind.MultiPart), kinds)
      checkEveryVersionAfter(path, checkpointed)
    }
  }

  for (format <- Seq("json", "parquet")) {
    test(s"a V2 checkpoint with sidecars and a $format manifest") {
      withoutPolicy {
        val settings = Map(
          "delta.checkpointPolicy" -> "v2",
          "spark.databricks.delta.checkpointV2.topLevelFileFormat" -> format,
          "spark.databricks.delta.checkpoint.partSize" -> "4"
        )
        val (path, checkpointed) = tableWithTail(s"v2-$format", settings)
        val log = TableLog.forPath(spark.sessionState.newHadoopConf(), path)
        val checkpoint = log.listing().checkpoints.find(_.version == checkpointed).get
        assert(checkpoint.kind === CheckpointKind.V2)
        assert(checkpoint.files.head.name.endsWith(s".$format"))
        assert(log.sidecarsOf(checkpoint).size > 1)
        checkEveryVersionAfter(path, checkpointed)
      }
    }
  }

  test("compactions of the commits after the checkpoint") {
    withoutPolicy {
      val (path, checkpointed) = tableWithTail("compacted", Map.empty)
      val log = TableLog.forPath(spark.sessionState.newHadoopConf(), path)
      val latest = log.listing().latestVersion
      LogCompaction.compact(log, log.listing(), checkpointed + 1, checkpointed + 3)
      LogCompaction.compact(log, log.listing(), checkpointed + 4, latest - 1)
      assert(log.listing().compactions.size === 2, log.listing().compactions)
      assert(log.snapshotAt(latest).segment.compactions.nonEmpty)
      checkEveryVersionAfter(path, checkpointed)
    }
  }

  test("a table without a checkpoint") {
    withoutPolicy {
      val path = newTableDir("no-checkpoint")
      spark.range(0, 50, 1, 4).write.format("delta")
        .option("delta.enableDeletionVectors", "true").save(path)
      spark.sql(s"DELETE FROM delta.`$path` WHERE id % 7 = 0")
      spark.sql(s"DELETE FROM delta.`$path` WHERE id % 7 = 1")
      val log = TableLog.forPath(spark.sessionState.newHadoopConf(), path)
      assert(log.listing().checkpoints.isEmpty)
      (0L to 2L).foreach(v => check(path, v))
    }
  }
}
