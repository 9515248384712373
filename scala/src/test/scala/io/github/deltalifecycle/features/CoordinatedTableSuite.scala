package io.github.deltalifecycle.features

import java.io.File
import java.nio.charset.StandardCharsets
import java.nio.file.{Files, StandardOpenOption}

import io.github.deltalifecycle.{LifecycleSparkSession, LogTestFiles}
import io.github.deltalifecycle.core.{DeltaLifecycleException, LogCommitter, TableLog}
import io.github.deltalifecycle.features.compaction.{
  LogMaintenance,
  LogMaintenancePolicy,
  MaintenanceAction,
  PolicySettings
}
import org.apache.spark.sql.delta.DeltaLog
import org.apache.spark.sql.delta.actions.Protocol
import org.scalatest.funsuite.AnyFunSuite

/**
 * Real tables handed to a catalog or a commit coordinator by a planted commit: the post-commit
 * policy leaves them alone without failing, and the committer refuses to write past the owner. (The
 * SQL statements on such tables are checked end to end in tests/test_coordinated_commits.py.)
 */
class CoordinatedTableSuite extends AnyFunSuite with LifecycleSparkSession {
  private def hadoopConf = spark.sessionState.newHadoopConf()

  /** Every file under `_delta_log` (staged commits, sidecars too) with its size. */
  private def logState(path: String): Map[String, Long] = {
    val root = LogTestFiles.logDir(path).toPath
    val files = Files.walk(root)
    try
      files.filter(Files.isRegularFile(_)).toArray.toSeq.map { p =>
        val f = p.asInstanceOf[java.nio.file.Path]
        root.relativize(f).toString -> Files.size(f)
      }.toMap
    finally files.close()
  }

  private def withPolicy[T](enabled: Boolean)(body: => T): T = {
    spark.conf.set(PolicySettings.EnabledSessionKey, enabled.toString)
    try body
    finally spark.conf.unset(PolicySettings.EnabledSessionKey)
  }

  /**
   * Five commits that the policy would compact (interval 3), made with the policy off so that it
   * leaves them for the test. It hears of commits from a listener, so it stays off until the
   * listener has seen them.
   */
  private def table(name: String): String = withPolicy(enabled = false) {
    val path = newTableDir(name)
    spark.sql(s"CREATE TABLE delta.`$path` (id BIGINT) USING delta TBLPROPERTIES (" +
      "'delta.checkpointInterval' = '100', 'deltaLifecycle.logCompaction.interval' = '3')")
    (1 to 4).foreach(i => spark.sql(s"INSERT INTO delta.`$path` VALUES ($i)"))
    assert(LogMaintenance.awaitIdle(60000))
    path
  }

  /**
   * Appends the next commit, put-if-absent as any writer would, with `protocol` (if given) and the
   * metadata plus `properties`. delta-spark may refuse to open the table afterwards; the log core
   * reads it.
   */
  private def plant(
      path: String,
      protocol: Option[Protocol],
      properties: Map[String, String] = Map.empty
  ): Long = {
    val log = TableLog.forPath(hadoopConf, path)
    val listing = log.listing()
    val (_, metadata) = log.protocolAndMetadataAt(listing.latestVersion, listing)
    val version = listing.latestVersion + 1
    val lines =
      s"""{"commitInfo":{"timestamp":${System.currentTimeMillis()},"operation":"PLANTED"}}""" +:
        (protocol.toSeq.map(_.json) :+
          metadata.copy(configuration = metadata.configuration ++ properties).json)
    Files.write(
      new File(LogTestFiles.logDir(path), LogTestFiles.name(version, "json")).toPath,
      lines.mkString("", "\n", "\n").getBytes(StandardCharsets.UTF_8),
      StandardOpenOption.CREATE_NEW
    )
    version
  }

  private def catalogManaged(name: String) = Protocol(
    3,
    7,
    Some(Set(name, "vacuumProtocolCheck")),
    Some(Set(name, "vacuumProtocolCheck", "inCommitTimestamp"))
  )

  /** Each way a table names its owner, and a table of its own for each. */
  private val variants: Seq[(String, String => Long)] = Seq(
    "catalogManaged" -> (p => plant(p, Some(catalogManaged("catalogManaged")))),
    "catalogOwned-preview" -> (p => plant(p, Some(catalogManaged("catalogOwned-preview")))),
    "coordinatedCommits-preview" ->
      (p =>
        plant(p, Some(Protocol(1, 7, None, Some(Set("coordinatedCommits-preview", "appendOnly")))))
      ),
    "delta.coordinatedCommits.commitCoordinator-preview" ->
      (p =>
        plant(
          p,
          None,
          Map(
            "delta.coordinatedCommits.commitCoordinator-preview" -> "dynamodb",
            "delta.coordinatedCommits.commitCoordinatorConf-preview" -> "{}",
            // A large-commit threshold every commit passes: the policy asks for a checkpoint.
            PolicySettings.LargeCommitBytesKey -> "1"
          )
        )
      )
  )

  variants.zipWithIndex.foreach { case ((owner, plantOwner), i) =>
    test(s"the post-commit policy leaves a table with $owner alone and writes nothing") {
      val path = table(s"policy-$i")
      plantOwner(path)
      val log = TableLog.forPath(hadoopConf, path)
      val listing = log.listing()
      val (_, metadata) = log.protocolAndMetadataAt(listing.latestVersion, listing)
      // Without the owner, the policy would write here.
      val wanted = LogMaintenancePolicy.decide(
        listing,
        PolicySettings.resolve(metadata.configuration, spark.conf.getOption)
      )
      assert(wanted != MaintenanceAction.Nothing)

      val before = logState(path)
      assert(LogMaintenance.run(spark, log) === MaintenanceAction.Nothing)
      // As after a commit: judged on delta-spark's snapshot, run on the maintenance thread.
      withPolicy(enabled = true) {
        LogMaintenance.onCommitted(spark, DeltaLog.forTable(spark, path))
        assert(LogMaintenance.awaitIdle(60000))
      }
      assert(logState(path) === before)
    }
  }

  test("the committer refuses to commit to such a table, writing nothing") {
    val path = table("committer")
    val version = plant(path, Some(catalogManaged("catalogManaged")))
    val log = TableLog.forPath(hadoopConf, path)
    val metadata = log.protocolAndMetadataAt(version, log.listing())._2
    val before = logState(path)
    val e = intercept[DeltaLifecycleException] {
      LogCommitter.commit(
        log,
        version,
        Seq(metadata.copy(description = "changed")),
        "SET TBLPROPERTIES",
        Map.empty
      )
    }
    assert(e.condition === "DELTA_LIFECYCLE_COORDINATED_TABLE")
    assert(e.getMessage.contains("'catalogManaged'"))
    assert(logState(path) === before)
  }
}
