package io.github.deltalifecycle.core

import java.io.File

import scala.util.Try

import io.github.deltalifecycle.SharedTestData
import org.apache.commons.io.FileUtils
import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.delta.DeltaLog
import org.apache.spark.sql.functions.{col, struct, to_json}
import org.apache.spark.sql.types.StructType
import org.scalatest.funsuite.AnyFunSuite

/**
 * An incremental checkpoint holds the same rows as delta-spark's full checkpoint of the same
 * version, column for column (stats, parsed stats and partition values, deletion vectors,
 * tombstones, protocol, metadata, transactions, domains), and delta-spark reads the table through
 * it as through its own: for classic, multi-part and V2 checkpoints, after tails that append,
 * remove, re-add, give files deletion vectors, rewrite them (OPTIMIZE) and change the schema.
 */
class IncrementalCheckpointSuite extends AnyFunSuite with TablesWithTail {

  private def logOf(path: String) = TableLog.forPath(spark.sessionState.newHadoopConf(), path)

  /**
   * Every row of a checkpoint (a V2 one's manifest and sidecars) as JSON in `schema`, which Spark's
   * set operations compare (they refuse maps).
   */
  private def rowsOf(path: String, checkpoint: LogCheckpoint, schema: StructType): DataFrame = {
    val (json, parquet) =
      (checkpoint.files.map(_.status.getPath) ++
        logOf(path).sidecarsOf(checkpoint)).map(_.toString).partition(_.endsWith(".json"))
    val reader = spark.read.schema(schema)
    val frames = json.map(reader.json(_)) ++ Seq(reader.parquet(parquet: _*))
    frames.reduce(_ unionByName _)
      .where(schema.fieldNames.map(col(_).isNotNull).reduce(_ || _))
      .select(to_json(struct(schema.fieldNames.map(col): _*)).as("row"))
  }

  private def latestCheckpoint(path: String): LogCheckpoint = logOf(path).listing().checkpoints.last

  /** The columns of a checkpoint's Parquet files (a V2 one's sidecars and manifest). */
  private def schemaOf(path: String, checkpoint: LogCheckpoint): StructType = {
    val files = (checkpoint.files.map(_.status.getPath) ++ logOf(path).sidecarsOf(checkpoint))
      .filterNot(_.getName.endsWith(".json")).map(_.toString)
    StructType(files.flatMap(f => spark.read.parquet(f).schema.fields).distinct
      .groupBy(_.name).map(_._2.head).toSeq)
  }

  /**
   * The columns compared: delta-spark's full checkpoint's, without the V2 bookkeeping columns, and
   * without the optional columns of `add` that the earlier checkpoint lacks (one that an older
   * writer wrote without `stats_parsed` leaves it out of the incremental one too, as the protocol
   * allows).
   */
  private def comparedSchema(full: StructType, earlier: StructType): StructType = {
    val kept = Seq("txn", "add", "remove", "metaData", "protocol", "domainMetadata")
    val earlierAdd = earlier.find(_.name == "add").map(_.dataType.asInstanceOf[StructType])
    StructType(kept.flatMap(n => full.find(_.name == n)).map {
      case f if f.name == "add" && earlierAdd.isDefined =>
        val names = earlierAdd.get.fieldNames.toSet
        f.copy(dataType =
          StructType(f.dataType.asInstanceOf[StructType].filter(a =>
            names(a.name)
          ))
        )
      case f => f
    })
  }

  /**
   * Writes the incremental checkpoint of the latest version of `path`, and delta-spark's full one
   * on a copy of the table, and compares them; returns the plan.
   */
  private def checkAgainstFull(path: String): CheckpointPlan = {
    val copy = path + "-full"
    FileUtils.copyDirectory(new File(path), new File(copy))
    DeltaLog.clearCache()
    DeltaLog.forTable(spark, copy).checkpoint()
    val log = logOf(path)
    val listing = log.tailListing()
    val plan = IncrementalCheckpoint.plan(spark, log, listing, listing.latestVersion)
      .fold(
        reason =>
          fail(s"no incremental checkpoint: $reason; ${listing.checkpoints}, " +
            s"${listing.latestVersion}"),
        identity
      )
    val written = IncrementalCheckpoint.write(spark, log, plan, () => ())
    assert(written.checkpoint.version === listing.latestVersion)
    val full = latestCheckpoint(copy)
    assert(full.version === written.checkpoint.version)
    val schema = comparedSchema(schemaOf(copy, full), schemaOf(path, plan.base))
    val ours = rowsOf(path, written.checkpoint, schema)
    val theirs = rowsOf(copy, full, schema)
    assert(ours.count() === theirs.count())
    val onlyOurs = ours.exceptAll(theirs).collect().map(_.getString(0)).sorted.toSeq
    val onlyTheirs = theirs.exceptAll(ours).collect().map(_.getString(0)).sorted.toSeq
    assert(onlyOurs === onlyTheirs.take(0), s"delta-spark's rows instead: $onlyTheirs")
    // delta-spark reads the table through the new checkpoint as through its own.
    DeltaLog.clearCache()
    val snapshot = DeltaLog.forTable(spark, path).update()
    assert(snapshot.logSegment.checkpointProvider.version === written.checkpoint.version)
    val reference = DeltaLog.forTable(spark, copy).update()
    assert(snapshot.allFiles.collect().toSet === reference.allFiles.collect().toSet)
    assert(snapshot.metadata === reference.metadata)
    assert(snapshot.protocol === reference.protocol)
    // Some tables of tests/data hold a log and no data files: their rows cannot be read.
    if (Try(spark.read.format("delta").load(copy).count()).isSuccess) {
      // As JSON: Spark's set operations refuse maps.
      def rows(p: String) = {
        val table = spark.read.format("delta").load(p)
        table.select(to_json(struct(table.columns.map(c => col(s"`$c`")): _*)))
      }
      assert(rows(path).exceptAll(rows(copy)).isEmpty)
      assert(rows(path).count() === rows(copy).count())
    }
    plan
  }

  /**
   * A checkpoint of the latest version by delta-spark (RESTORE writes one of its own, so the
   * table's commits re-add files before it), then commits that give files deletion vectors and new
   * ones (two DELETEs), remove and add files (OPTIMIZE, appends), and change a property that shapes
   * no checkpoint column; returns the checkpoint's version.
   */
  private def checkpointThenChange(path: String): Long = {
    DeltaLog.forTable(spark, path).checkpoint()
    val checkpointed = DeltaLog.forTable(spark, path).update().version
    spark.sql(s"DELETE FROM delta.`$path` WHERE id % 10 = 3")
    spark.sql(s"DELETE FROM delta.`$path` WHERE id % 10 = 4")
    spark.sql(s"OPTIMIZE delta.`$path` WHERE true")
    spark.range(3000, 3010, 1, 2).write.format("delta").mode("append").save(path)
    spark.sql(s"DELETE FROM delta.`$path` WHERE id = 3005")
    spark.sql(s"ALTER TABLE delta.`$path` SET TBLPROPERTIES ('delta.logRetentionDuration' = " +
      "'interval 60 days')")
    spark.sql(s"INSERT INTO delta.`$path` VALUES (2000)")
    checkpointed
  }

  private val kinds: Seq[(String, Map[String, String], CheckpointKind)] = Seq(
    ("classic", Map.empty, CheckpointKind.Classic),
    (
      "multi-part",
      Map("spark.databricks.delta.checkpoint.partSize" -> "3"),
      CheckpointKind.MultiPart
    ),
    (
      "v2-json",
      Map(
        "delta.checkpointPolicy" -> "v2",
        "spark.databricks.delta.checkpointV2.topLevelFileFormat" -> "json",
        "spark.databricks.delta.checkpoint.partSize" -> "8"
      ),
      CheckpointKind.V2
    ),
    (
      "v2-parquet",
      Map(
        "delta.checkpointPolicy" -> "v2",
        "spark.databricks.delta.checkpointV2.topLevelFileFormat" -> "parquet",
        "spark.databricks.delta.checkpoint.partSize" -> "8"
      ),
      CheckpointKind.V2
    )
  )

  /**
   * `body` with the session settings of `settings` in force, so that every checkpoint delta-spark
   * writes meanwhile (some commands write one) is of the kind under test.
   */
  private def withSessionSettings[T](settings: Map[String, String])(body: => T): T = {
    val session = settings.filter(_._1.startsWith("spark."))
    session.foreach { case (k, v) => spark.conf.set(k, v) }
    try withoutPolicy(body)
    finally session.keys.foreach(spark.conf.unset)
  }

  for ((name, settings, kind) <- kinds) {
    test(s"$name: the same rows as delta-spark's full checkpoint after every kind of change") {
      val (path, _) = withoutPolicy(tableWithTail(s"changes-$name", settings))
      withSessionSettings(settings) {
        val checkpointed = checkpointThenChange(path)
        assert(latestCheckpoint(path).kind === kind)
        val plan = checkAgainstFull(path)
        assert(plan.base.version === checkpointed)
        assert(plan.tailAdds > 0 && plan.tailRemoves > 0)
      }
    }

    test(s"$name: a tail of appends reuses every piece of the checkpoint") {
      val (path, _) = withoutPolicy(tableWithTail(s"appends-$name", settings))
      withSessionSettings(settings) {
        DeltaLog.forTable(spark, path).checkpoint()
        assert(latestCheckpoint(path).kind === kind)
        (0 until 3).foreach(i =>
          spark.range(5000 + i * 10, 5010 + i * 10, 1, 1).write.format("delta")
            .mode("append").save(path)
        )
        val plan = checkAgainstFull(path)
        assert(plan.tailAdds === 3)
        assert(plan.rewritten === Nil)
        assert(plan.reused.nonEmpty)
      }
    }
  }

  test("a schema change since the checkpoint asks for a full checkpoint") {
    withoutPolicy {
      val (path, _) = tableWithTail("schema-change", Map.empty)
      val checkpointed = latestCheckpoint(path).version
      spark.sql(s"ALTER TABLE delta.`$path` ADD COLUMNS (note STRING)")
      val log = logOf(path)
      val listing = log.tailListing()
      val refused = IncrementalCheckpoint.plan(spark, log, listing, listing.latestVersion)
      assert(refused === Left(s"the table's schema or statistics settings changed since " +
        s"checkpoint $checkpointed"))
    }
  }

  test("a partitioned table: parsed partition values and statistics of the new files") {
    withoutPolicy {
      val path = newTableDir("partitioned")
      spark.sql(
        s"CREATE TABLE delta.`$path` (id BIGINT, day DATE, ts TIMESTAMP) USING delta " +
          "PARTITIONED BY (day) TBLPROPERTIES ('delta.checkpoint.writeStatsAsStruct' = 'true')"
      )
      spark.sql(
        s"INSERT INTO delta.`$path` VALUES (1, DATE'2024-01-01', TIMESTAMP'2024-01-01 1:00')"
      )
      DeltaLog.forTable(spark, path).checkpoint()
      spark.sql(
        s"INSERT INTO delta.`$path` VALUES (2, DATE'2024-01-02', TIMESTAMP'2024-01-02 2:00')"
      )
      spark.sql(s"INSERT INTO delta.`$path` VALUES (3, NULL, NULL)")
      spark.sql(s"DELETE FROM delta.`$path` WHERE id = 1")
      checkAgainstFull(path)
    }
  }

  /**
   * The tables of tests/data that CI checkpoints incrementally: every kind of checkpoint, deletion
   * vectors, column mapping, partitions, domains, struct-only statistics. With
   * DELTA_LIFECYCLE_FULL_MATRIX=1, every table delta-spark writes to.
   */
  private val ciTables = Set(
    "delta-golden/v2-checkpoint-json",
    "delta-golden/v2-checkpoint-parquet",
    "delta-golden/multi-part-checkpoint",
    "delta-golden/dv-partitioned-with-checkpoint",
    "delta-golden/dv-with-columnmapping",
    "delta-rs/checkpoint_with_partitions",
    "delta-rs/delta-1.2.1-only-struct-stats",
    "delta-rs/table-with-domain-metadata"
  )
  private val everyTable = sys.env.get("DELTA_LIFECYCLE_FULL_MATRIX").contains("1")

  for {
    group <- Seq("delta-golden", "delta-rs")
    name <- SharedTestData.tables(group) if everyTable || ciTables(s"$group/$name")
  } test(s"$group/$name: a checkpoint, commits after it, then an incremental one") {
    withoutPolicy {
      val path = copyOfSharedTable(group, name)
      DeltaLog.clearCache()
      // Tables delta-spark does not open or write are left to ConformanceSuite.
      val written = Try {
        DeltaLog.forTable(spark, path).checkpoint()
        // Some tables checkpoint often; the commits after this checkpoint must stay a tail.
        spark.sql(s"ALTER TABLE delta.`$path` SET TBLPROPERTIES " +
          "('delta.checkpointInterval' = '1000')")
      }
      if (written.isSuccess) {
        // OPTIMIZE removes and adds files where the table has small ones and delta-spark can.
        Try(spark.sql(s"OPTIMIZE delta.`$path`").collect())
        checkAgainstFull(path)
      }
    }
  }
}
