package io.github.deltalifecycle.features.dropfeature

import io.github.deltalifecycle.LifecycleSparkSession
import io.github.deltalifecycle.LogTestFiles._
import io.github.deltalifecycle.core.{DeltaLifecycleException, LogCommitter, LogSnapshot, TableLog}
import org.apache.spark.sql.Row
import org.apache.spark.sql.delta.{CheckpointProtectionTableFeature, DeltaConfigs, DeltaLog}
import org.apache.spark.sql.delta.actions.DomainMetadata
import org.scalatest.funsuite.AnyFunSuite

/**
 * `ALTER TABLE … DROP FEATURE`: the fast drop with its protected barrier, DRY RUN's plan against
 * what the drop then does, the history-truncating flow, dropping checkpointProtection itself,
 * writer features, re-runs and every refusal.
 */
class DropFeatureSuite extends AnyFunSuite with LifecycleSparkSession {

  private val ProtectionKey = DeltaConfigs.REQUIRE_CHECKPOINT_PROTECTION_BEFORE_VERSION.key

  private def sql(text: String): Seq[Row] = spark.sql(text).collect().toSeq
  private def drop(path: String, clause: String): Row =
    sql(s"ALTER TABLE delta.`$path` DROP FEATURE $clause").head
  private def snapshot(path: String): LogSnapshot =
    TableLog.forPath(spark.sessionState.newHadoopConf(), path).latestSnapshot()
  private def features(s: LogSnapshot): Set[String] = s.protocol.readerAndWriterFeatureNames

  /** delta-spark's backfill batch size, which row-ID removal uses too, set for `body` only. */
  private def withBackfillBatch[T](files: Int)(body: => T): T = {
    val key = "spark.databricks.delta.backfill.maxNumFiles"
    spark.conf.set(key, files.toString)
    try body
    finally spark.conf.unset(key)
  }

  private def longs(row: Row, field: String): Seq[Long] =
    row.getAs[scala.collection.Seq[Long]](field).toSeq

  private def rows(path: String, version: Option[Long] = None): Set[Row] = {
    DeltaLog.clearCache()
    val reader = spark.read.format("delta")
    version.fold(reader)(v => reader.option("versionAsOf", v)).load(path).collect().toSet
  }

  private def failure(statement: String): DeltaLifecycleException =
    intercept[DeltaLifecycleException](sql(statement))

  /** 10 files of two rows each; three of them carry deletion vectors. */
  private def tableWithDeletionVectors(name: String, properties: String = ""): String = {
    val path = newTableDir(name)
    sql(
      s"CREATE TABLE delta.`$path` (id BIGINT) USING delta TBLPROPERTIES " +
        s"('delta.enableDeletionVectors' = 'true'$properties)"
    )
    (0 until 10).foreach(i =>
      sql(
        s"INSERT INTO delta.`$path` SELECT /*+ COALESCE(1) */ * FROM VALUES ($i), " +
          s"(${i + 100}) AS t(id)"
      )
    )
    sql(s"DELETE FROM delta.`$path` WHERE id IN (101, 103, 105)")
    assert(snapshot(path).activeFiles.count(_.deletionVector != null) === 3)
    path
  }

  test("fast drop of deletionVectors: DRY RUN plans exactly what the drop then writes") {
    val path = tableWithDeletionVectors("dv-fast")
    val before = snapshot(path)
    val expectedRows = rows(path)
    val logBefore = logNames(path)

    val plan = drop(path, "deletionVectors DRY RUN")
    assert(logNames(path) === logBefore, "DRY RUN must not write")
    assert(plan.getAs[String]("status") === "planned")
    assert(plan.getAs[Long]("filesRewritten") === 3)
    assert(plan.getAs[Long]("bytesRewritten") ===
      before.activeFiles.filter(_.deletionVector != null).map(_.size).sum)

    val done = drop(path, "deletionVectors")
    assert(done.getAs[String]("status") === "dropped" && done.getAs[String]("mode") === "fast")
    for (
      field <- Seq(
        "filesRewritten",
        "bytesRewritten",
        "commitVersions",
        "checkpointVersions",
        "protectedBefore",
        "readableWithoutFeatureFrom",
        "steps"
      )
    ) assert(done.getAs[Any](field) === plan.getAs[Any](field), field)

    val after = snapshot(path)
    val boundary = done.getAs[Long]("protectedBefore")
    assert(after.version === boundary && longs(done, "commitVersions").last === boundary)
    assert(!features(after).contains("deletionVectors"))
    assert(features(after).contains(CheckpointProtectionTableFeature.name))
    assert(after.configuration(ProtectionKey) === boundary.toString)
    assert(after.activeFiles.forall(_.deletionVector == null))
    // Three barrier checkpoints right before the boundary, one at it.
    assert(longs(done, "checkpointVersions") ===
      Seq(boundary - 3, boundary - 2, boundary - 1, boundary))
    longs(done, "checkpointVersions").foreach(v =>
      assert(logNames(path).contains(name(v, "checkpoint.parquet")))
    )

    assert(rows(path) === expectedRows)
    // Every barrier version reads the same rows: the copied checkpoints hold the right state.
    (boundary - 3 to boundary).foreach(v =>
      assert(rows(path, Some(v)) === expectedRows, s"version $v")
    )
    assert(rows(path, Some(before.version)) === expectedRows)
    val history = sql(s"DESCRIBE HISTORY delta.`$path` LIMIT 1").head
    assert(history.getAs[String]("operation") === "DROP FEATURE")
    assert(history.getAs[Map[String, String]]("operationParameters")("featureName") ===
      "deletionVectors")

    // The feature is gone: a second run says so and writes nothing.
    val names = logNames(path)
    assert(failure(s"ALTER TABLE delta.`$path` DROP FEATURE deletionVectors").condition ===
      "DELTA_LIFECYCLE_FEATURE_NOT_PRESENT")
    assert(logNames(path) === names)
    // delta-spark still writes to the table, without deletion vectors.
    sql(s"DELETE FROM delta.`$path` WHERE id = 0")
    assert(snapshot(path).activeFiles.forall(_.deletionVector == null))
  }

  test("deletion vectors enabled but never written: the plan still matches the drop") {
    val path = newTableDir("dv-enabled-unused")
    sql(
      s"CREATE TABLE delta.`$path` (id BIGINT) USING delta TBLPROPERTIES " +
        "('delta.enableDeletionVectors' = 'true')"
    )
    sql(s"INSERT INTO delta.`$path` VALUES (1), (2)")
    val plan = drop(path, "deletionVectors DRY RUN")
    val done = drop(path, "deletionVectors")
    assert(done.getAs[Long]("filesRewritten") === 0)
    for (field <- Seq("commitVersions", "checkpointVersions", "protectedBefore", "steps"))
      assert(done.getAs[Any](field) === plan.getAs[Any](field), field)
  }

  test("a re-run after a drop that stopped part-way completes it") {
    val path = tableWithDeletionVectors("dv-rerun")
    val expectedRows = rows(path)
    // As if a first run had stopped after preparing and one barrier commit.
    sql(s"ALTER TABLE delta.`$path` UNSET TBLPROPERTIES ('delta.enableDeletionVectors')")
    sql(s"REORG TABLE delta.`$path` APPLY (PURGE)")
    val done = drop(path, "deletionVectors")
    assert(done.getAs[Long]("filesRewritten") === 0)
    assert(!features(snapshot(path)).contains("deletionVectors"))
    assert(rows(path) === expectedRows)
  }

  test(
    "a writer appending throughout the drop: every append commits once or fails with a conflict"
  ) {
    val path = tableWithDeletionVectors("dv-concurrent")
    val initial = rows(path).size
    val stop = new java.util.concurrent.atomic.AtomicBoolean(false)
    val committed = new java.util.concurrent.atomic.AtomicInteger(0)
    val failures = new java.util.concurrent.ConcurrentLinkedQueue[Throwable]()
    val writer = new Thread(() => {
      var i = 0
      while (!stop.get()) {
        i += 1
        try {
          spark.range(1).selectExpr(
            s"CAST(${1000000 + i} AS BIGINT) AS id"
          ).write.format("delta").mode("append").save(path)
          committed.incrementAndGet()
        } catch { case e: Throwable => failures.add(e) }
        Thread.sleep(250)
      }
    })
    writer.start()
    // A drop that loses to the writer fails with a typed conflict; running it again completes.
    val lost = new java.util.concurrent.ConcurrentLinkedQueue[String]()
    val done = Iterator.continually {
      try Some(drop(path, "deletionVectors"))
      catch {
        case e: DeltaLifecycleException
            if Set(
              "DELTA_LIFECYCLE_CONCURRENT_COMMIT",
              "DELTA_LIFECYCLE_FEATURE_TRACES_REMAIN"
            ).contains(e.condition) =>
          lost.add(e.getMessage)
          None
      }
    }.take(5).collectFirst { case Some(row) => row }
    stop.set(true)
    writer.join()

    assert(done.isDefined, s"the drop completes within five runs; the runs lost with: $lost")
    assert(
      committed.get() > 0,
      s"the writer committed during the drop; failures: ${failures.size()}: " +
        s"${Option(failures.peek())}"
    )
    failures.forEach(e =>
      assert(e.isInstanceOf[java.util.ConcurrentModificationException], e.toString)
    )
    assert(!features(snapshot(path)).contains("deletionVectors"))
    assert(rows(path).size === initial + committed.get())
  }

  test("v2Checkpoint: the barrier and final checkpoints are classic, the policy property goes") {
    val path = newTableDir("v2checkpoint")
    sql(
      s"CREATE TABLE delta.`$path` (id BIGINT) USING delta TBLPROPERTIES " +
        "('delta.checkpointPolicy' = 'v2', 'delta.checkpointInterval' = '2')"
    )
    (0 until 4).foreach(i => sql(s"INSERT INTO delta.`$path` VALUES ($i)"))
    assert(logNames(path).exists(_.matches("""\d{20}\.checkpoint\.[0-9a-f-]+\.(json|parquet)""")))
    val expectedRows = rows(path)
    val done = drop(path, "v2Checkpoint")
    val after = snapshot(path)
    assert(!features(after).contains("v2Checkpoint"))
    // As delta-spark does, the policy stays at classic, its default.
    assert(after.configuration.getOrElse("delta.checkpointPolicy", "classic") === "classic")
    longs(done, "checkpointVersions").foreach(v =>
      assert(logNames(path).contains(name(v, "checkpoint.parquet")), s"classic checkpoint $v")
    )
    assert(rows(path) === expectedRows)
  }

  test(
    "typeWidening: files written with the narrower type are rewritten and the type-change " +
      "records removed"
  ) {
    val path = newTableDir("type-widening")
    sql(
      s"CREATE TABLE delta.`$path` (id SMALLINT) USING delta TBLPROPERTIES " +
        "('delta.enableTypeWidening' = 'true')"
    )
    sql(s"INSERT INTO delta.`$path` VALUES (1), (2)")
    val narrowFiles = snapshot(path).activeFiles.size.toLong
    sql(s"ALTER TABLE delta.`$path` ALTER COLUMN id TYPE INT")
    sql(s"INSERT INTO delta.`$path` VALUES (100000)")
    val expectedRows = rows(path)

    val plan = drop(path, "typeWidening DRY RUN")
    assert(plan.getAs[Long]("filesRewritten") === narrowFiles)
    val done = drop(path, "typeWidening")
    assert(done.getAs[Long]("filesRewritten") === narrowFiles)
    assert(longs(done, "commitVersions") === longs(plan, "commitVersions"))
    val after = snapshot(path)
    assert(!features(after).exists(_.startsWith("typeWidening")))
    assert(!after.metadata.schemaString.contains("delta.typeChanges"))
    assert(rows(path) === expectedRows)
  }

  test(
    "columnMapping: the table is rewritten with logical names; vacuumProtocolCheck drops after it"
  ) {
    val path = newTableDir("column-mapping")
    sql(
      s"CREATE TABLE delta.`$path` (id BIGINT, name STRING) USING delta " +
        "TBLPROPERTIES ('delta.columnMapping.mode' = 'name', " +
        "'delta.feature.vacuumProtocolCheck' = 'supported')"
    )
    sql(s"INSERT INTO delta.`$path` VALUES (1, 'a'), (2, 'b')")
    sql(s"ALTER TABLE delta.`$path` RENAME COLUMN name TO label")
    val expectedRows = rows(path)

    val plan = drop(path, "columnMapping DRY RUN")
    // delta-spark's own preparation decides what it rewrites: the plan says so, the drop counts.
    assert(plan.getAs[Seq[String]]("steps").exists(_.contains("delta-spark's own preparation")))
    assert(plan.getAs[Long]("filesRewritten") === 0)
    val done = drop(path, "columnMapping")
    assert(done.getAs[Long]("filesRewritten") === snapshot(path).activeFiles.size)
    assert(longs(done, "commitVersions") === longs(plan, "commitVersions"))
    val after = snapshot(path)
    assert(!features(after).contains("columnMapping"))
    assert(after.configuration.getOrElse("delta.columnMapping.mode", "none") === "none")
    assert(rows(path) === expectedRows)
    assert(spark.read.format("delta").load(path).columns.toSeq === Seq("id", "label"))

    drop(path, "vacuumProtocolCheck")
    assert(!features(snapshot(path)).contains("vacuumProtocolCheck"))
    assert(rows(path) === expectedRows)
  }

  test("writer features drop without a barrier; CHECK constraints must go first") {
    val path = newTableDir("writer-features")
    sql(
      s"CREATE TABLE delta.`$path` (id BIGINT) USING delta TBLPROPERTIES " +
        "('delta.enableInCommitTimestamps' = 'true')"
    )
    sql(s"INSERT INTO delta.`$path` VALUES (1)")
    sql(s"ALTER TABLE delta.`$path` ADD CONSTRAINT positive CHECK (id > 0)")

    val inUse = failure(s"ALTER TABLE delta.`$path` DROP FEATURE checkConstraints")
    assert(inUse.condition === "DELTA_LIFECYCLE_FEATURE_IN_USE" &&
      inUse.subCondition.contains("CHECK_CONSTRAINTS") &&
      inUse.getMessage.contains("DROP CONSTRAINT positive"))
    sql(s"ALTER TABLE delta.`$path` DROP CONSTRAINT positive")
    val checks = drop(path, "checkConstraints")
    assert(longs(checks, "checkpointVersions").isEmpty &&
      checks.isNullAt(checks.fieldIndex("protectedBefore")))

    val ict = drop(path, "inCommitTimestamp")
    assert(ict.getAs[Long]("readableWithoutFeatureFrom") === 0)
    val after = snapshot(path)
    assert(!features(after).exists(Set(
      "checkConstraints",
      "inCommitTimestamp",
      CheckpointProtectionTableFeature.name
    )))
    assert(!after.configuration.contains("delta.enableInCommitTimestamps") ||
      after.configuration("delta.enableInCommitTimestamps") == "false")
    // delta-spark knows appendOnly but does not declare it removable: refused before any write.
    val refused = failure(s"ALTER TABLE delta.`$path` DROP FEATURE appendOnly TRUNCATE HISTORY")
    assert(refused.condition === "DELTA_LIFECYCLE_DROP_NOT_SUPPORTED_ON_LINE")
    sql(s"INSERT INTO delta.`$path` VALUES (2)")
    assert(rows(path).size === 2)
  }

  test("rowTracking then domainMetadata: row IDs, their properties and every domain go") {
    val path = newTableDir("row-tracking")
    sql(
      s"CREATE TABLE delta.`$path` (id BIGINT) USING delta TBLPROPERTIES " +
        "('delta.enableRowTracking' = 'true')"
    )
    (0 until 3).foreach(i => sql(s"INSERT INTO delta.`$path` VALUES ($i), (${i + 10})"))
    val expectedRows = rows(path)
    assert(snapshot(path).activeFiles.forall(_.baseRowId.isDefined))

    // domainMetadata goes last: rowTracking needs it.
    val needed = failure(s"ALTER TABLE delta.`$path` DROP FEATURE domainMetadata")
    assert(needed.condition === "DELTA_LIFECYCLE_DEPENDENT_FEATURE" &&
      needed.getMessage.contains("rowTracking"))
    // Two files per commit: the files with row IDs lose them in several commits, after the one
    // that turns row tracking off, and the plan counts each (delta-spark 4.4's preparation on the
    // 4.x lines, this project's removal on 3.5; both batch by delta-spark's backfill size).
    val withRowIds = snapshot(path).activeFiles.size
    assert(withRowIds >= 3)
    val (plan, done) = withBackfillBatch(2) {
      val plan = drop(path, "rowTracking DRY RUN")
      (plan, drop(path, "rowTracking"))
    }
    assert(done.getAs[String]("feature") === "rowTracking")
    assert(longs(plan, "commitVersions") === longs(done, "commitVersions"))
    val batches = (withRowIds + 1) / 2
    assert(longs(done, "commitVersions").size === 1 + batches + 1, "properties, batches, downgrade")
    assert(longs(plan, "checkpointVersions").isEmpty && longs(done, "checkpointVersions").isEmpty)
    assert(done.isNullAt(done.fieldIndex("protectedBefore")), "a writer feature needs no barrier")
    val withoutRowIds = snapshot(path)
    assert(!features(withoutRowIds).contains("rowTracking"))
    assert(withoutRowIds.activeFiles.forall(f =>
      f.baseRowId.isEmpty && f.defaultRowCommitVersion.isEmpty
    ))
    assert(!withoutRowIds.configuration.keys.exists(_.startsWith("delta.rowTracking")))
    assert(withoutRowIds.configuration.get("delta.enableRowTracking").forall(_ == "false"))
    assert(rows(path) === expectedRows)

    // A domain no feature owns is a leftover: the domainMetadata drop removes it first.
    val log = TableLog.forPath(spark.sessionState.newHadoopConf(), path)
    LogCommitter.commit(
      log,
      withoutRowIds.version,
      Seq(DomainMetadata("leftover.app", "{}", removed = false)),
      "MANUAL UPDATE",
      Map.empty
    )
    val domains = drop(path, "domainMetadata DRY RUN")
    // One commit removes the leftover (this project's removal names it), one downgrades.
    assert(longs(domains, "commitVersions").size === 2)
    drop(path, "domainMetadata")
    val after = DeltaLog.forTable(spark, path).update()
    assert(after.domainMetadata.isEmpty)
    assert(!after.protocol.readerAndWriterFeatureNames.contains("domainMetadata"))
    assert(rows(path) === expectedRows)
    sql(s"INSERT INTO delta.`$path` VALUES (100)")
    assert(snapshot(path).activeFiles.forall(_.baseRowId.isEmpty))
  }

  test(
    "TRUNCATE HISTORY: the first run prepares and says how long to wait; a run after the " +
      "wait truncates and downgrades"
  ) {
    val path = tableWithDeletionVectors("dv-truncate")
    val expectedRows = rows(path)

    val plan = drop(path, "deletionVectors TRUNCATE HISTORY DRY RUN")
    assert(plan.getAs[String]("mode") === "truncate-history")
    val waiting =
      failure(s"ALTER TABLE delta.`$path` DROP FEATURE deletionVectors TRUNCATE HISTORY")
    assert(waiting.condition === "DELTA_LIFECYCLE_DROP_FEATURE_WAIT")
    assert(waiting.getMessage.contains("24 hours") &&
      waiting.getMessage.contains("TRUNCATE HISTORY"))
    val prepared = snapshot(path)
    assert(
      features(prepared).contains("deletionVectors"),
      "the protocol keeps the feature until the wait is over"
    )
    assert(prepared.activeFiles.forall(_.deletionVector == null))
    assert(longs(plan, "commitVersions").last === prepared.version)

    // Still inside the retention: the history still holds deletion vectors.
    assert(failure(
      s"ALTER TABLE delta.`$path` DROP FEATURE deletionVectors TRUNCATE HISTORY"
    ).condition ===
      "DELTA_LIFECYCLE_DROP_FEATURE_WAIT")
    age(path, through = snapshot(path).version, hours = 48)
    val done = drop(path, "deletionVectors TRUNCATE HISTORY")
    assert(done.getAs[String]("status") === "dropped")
    val after = snapshot(path)
    assert(!features(after).contains("deletionVectors") &&
      !features(after).contains(CheckpointProtectionTableFeature.name))
    assert(done.getAs[Long]("historyTruncatedBefore") > 0)
    assert(!logNames(path).contains(name(0, "json")))
    assert(rows(path) === expectedRows)
  }

  test(
    "checkpointProtection drops only with TRUNCATE HISTORY, taking everything before its " +
      "boundary in one pass"
  ) {
    val path = tableWithDeletionVectors("drop-protection", ", 'delta.checkpointInterval' = '4'")
    val boundary = drop(path, "deletionVectors").getAs[Long]("protectedBefore")
    sql(s"INSERT INTO delta.`$path` VALUES (1000)")
    val expectedRows = rows(path)

    assert(failure(s"ALTER TABLE delta.`$path` DROP FEATURE checkpointProtection").condition ===
      "DELTA_LIFECYCLE_TRUNCATE_HISTORY_REQUIRED")
    val early =
      failure(s"ALTER TABLE delta.`$path` DROP FEATURE checkpointProtection TRUNCATE HISTORY")
    assert(early.condition === "DELTA_LIFECYCLE_DROP_FEATURE_WAIT" &&
      early.getMessage.contains(s"from $boundary on"))
    assert(
      logNames(path).contains(name(0, "json")),
      "nothing is deleted while the boundary is too young"
    )

    age(path, through = snapshot(path).version, hours = 48)
    val done = drop(path, "checkpointProtection TRUNCATE HISTORY")
    assert(done.getAs[Long]("historyTruncatedBefore") === boundary)
    assert(logNames(path).forall(n =>
      !n.matches("""\d{20}\..*""") || n.take(20).toLong >= boundary
    ))
    val after = snapshot(path)
    assert(!features(after).contains(CheckpointProtectionTableFeature.name))
    assert(!after.configuration.contains(ProtectionKey))
    assert(rows(path) === expectedRows)
  }

  test("refusals name the problem and write nothing") {
    val path = tableWithDeletionVectors("refusals")
    val names = logNames(path)
    val unknown = failure(s"ALTER TABLE delta.`$path` DROP FEATURE nosuchFeature")
    assert(unknown.condition === "DELTA_LIFECYCLE_UNKNOWN_FEATURE" &&
      DroppableFeatures.Names.forall(unknown.getMessage.contains))
    assert(failure(s"ALTER TABLE delta.`$path` DROP FEATURE v2Checkpoint").condition ===
      "DELTA_LIFECYCLE_FEATURE_NOT_PRESENT")
    assert(failure(s"ALTER TABLE delta.`$path` DROP FEATURE 'typeWidening-preview'").condition ===
      "DELTA_LIFECYCLE_FEATURE_NOT_PRESENT")
    assert(
      failure(s"ALTER TABLE delta.`$path` DROP FEATURE typeWidening-preview DRY RUN").condition ===
        "DELTA_LIFECYCLE_FEATURE_NOT_PRESENT"
    )
    assert(logNames(path) === names)
    // Every listed name is a feature delta-spark can remove.
    DroppableFeatures.Names.foreach(n => assert(DroppableFeatures.lookup(n, "t").name === n))

    val dependent = newTableDir("dependent")
    sql(s"CREATE TABLE delta.`$dependent` (id BIGINT) USING delta " +
      "TBLPROPERTIES ('delta.columnMapping.mode' = 'name', 'delta.enableIcebergCompatV2' = 'true')")
    val needed = failure(s"ALTER TABLE delta.`$dependent` DROP FEATURE columnMapping DRY RUN")
    assert(needed.condition === "DELTA_LIFECYCLE_DEPENDENT_FEATURE" &&
      needed.getMessage.contains("icebergCompatV2"))

    val notDelta = newTableDir("not-delta")
    new java.io.File(notDelta).mkdirs()
    assert(failure(s"ALTER TABLE delta.`$notDelta` DROP FEATURE deletionVectors").condition ===
      "DELTA_LIFECYCLE_NOT_A_DELTA_TABLE")
  }

  test("by catalog name") {
    sql(
      "CREATE TABLE dv_by_name (id BIGINT) USING delta TBLPROPERTIES " +
        "('delta.enableDeletionVectors' = 'true')"
    )
    sql("INSERT INTO dv_by_name VALUES (1), (2), (3)")
    sql("DELETE FROM dv_by_name WHERE id = 2")
    val done = sql("ALTER TABLE dv_by_name DROP FEATURE deletionVectors").head
    assert(done.getAs[String]("status") === "dropped")
    assert(sql("SELECT id FROM dv_by_name").map(_.getLong(0)).toSet === Set(1L, 3L))
  }
}
