package io.github.deltalifecycle.features.redirect

import io.github.deltalifecycle.{LifecycleSparkSession, SparkLines}
import io.github.deltalifecycle.core.{LogCommitter, TableLog}
import org.apache.spark.sql.{AnalysisException, Row}
import org.apache.spark.sql.catalyst.TableIdentifier
import org.apache.spark.sql.catalyst.catalog.CatalogTableType
import org.apache.spark.sql.delta.DeltaLog
import org.apache.spark.sql.deltalifecycle.SparkInternals
import org.scalatest.funsuite.AnyFunSuite

/**
 * Table redirection end to end in one session with the extension and its catalog: the enable and
 * disable procedures, routing of every entry point per state, the state machine behind ALTER TABLE
 * ... TBLPROPERTIES, and the safety checks (chains, cycles, non-empty destinations, malformed
 * values, writes in IN-PROGRESS states). The allow-list: SharedSessionPolicySuite.
 */
class RedirectSuite extends AnyFunSuite with LifecycleSparkSession {
  import spark.implicits._

  private def sql(text: String): Seq[Row] = spark.sql(text).collect().toSeq
  private def ids(df: org.apache.spark.sql.DataFrame): Seq[Long] =
    df.collect().map(_.getLong(0)).toSeq.sorted
  private def idsOf(table: String): Seq[Long] = {
    DeltaLog.clearCache(); ids(spark.sql(s"SELECT id FROM $table"))
  }
  private def hadoopConf = spark.sessionState.newHadoopConf()
  private def info(path: String): RedirectInfo =
    RedirectLookup.read(hadoopConf, new org.apache.hadoop.fs.Path(path)).get

  /** This project's error, possibly wrapped by Spark's analyzer (which keeps its condition). */
  private def failure(statement: => Any): AnalysisException = {
    val e = intercept[Exception](statement)
    Iterator.iterate[Throwable](e)(_.getCause).takeWhile(_ != null).collectFirst {
      case a: AnalysisException
          if Option(a.getCondition).exists(_.startsWith("DELTA_LIFECYCLE_")) => a
    }.getOrElse(fail(s"expected a delta-lifecycle error, got $e", e))
  }

  private def table(name: String, rows: Range): String = {
    val path = newTableDir(name)
    sql(s"CREATE TABLE delta.`$path` (id BIGINT) USING delta")
    sql(s"INSERT INTO delta.`$path` SELECT id FROM range(${rows.start}, ${rows.end})")
    path
  }

  /** ALTER TABLE ... SET TBLPROPERTIES of the reader-writer redirect property, by hand. */
  private def setProperty(path: String, value: String): Seq[Row] =
    sql(s"ALTER TABLE delta.`$path` SET TBLPROPERTIES ('delta.redirectReaderWriter' = '$value')")

  private def stateJson(state: String, dest: String): String =
    s"""{"Type":"Object Store","State":"$state","Spec":{"Location":"$dest"}}"""

  test(
    "SET REDIRECT copies the table, routes every entry point to it, " +
      "and UNSET REDIRECT brings every row back"
  ) {
    val src = table("src-basic", 0 until 10)
    val dest = newTableDir("dest-basic")
    val r = sql(s"ALTER TABLE delta.`$src` SET REDIRECT TO '$dest'").head
    assert(r.getAs[String]("state") === "READY")
    assert(r.getAs[String]("mode") === "READER WRITER")
    assert(r.getAs[Long]("filesCopied") > 0)
    assert(r.getAs[Seq[Long]]("commitVersions") === Seq(2L, 3L))

    /* The destination is a plain Delta table: delta-spark opens it on its own, at the copied
     * version. */
    assert(DeltaLog.forTable(spark, dest).update().version === 1)
    assert(RedirectLookup.read(hadoopConf, new org.apache.hadoop.fs.Path(dest)).get.config.isEmpty)

    // Reads by path in SQL, by DataFrame load, and writes by each API land at the destination.
    assert(idsOf(s"delta.`$src`") === (0 until 10))
    sql(s"INSERT INTO delta.`$src` VALUES (100)")
    Seq(101L).toDF("id").write.format("delta").mode("append").save(src)
    sql(s"DELETE FROM delta.`$src` WHERE id = 0")
    sql(s"UPDATE delta.`$src` SET id = 1001 WHERE id = 1")
    sql(
      s"MERGE INTO delta.`$src` t USING (SELECT 102L AS id) s ON t.id = s.id " +
        "WHEN NOT MATCHED THEN INSERT *"
    )
    val expected = ((2 until 10).map(_.toLong) ++ Seq(100L, 101L, 102L, 1001L)).sorted
    if (SparkLines.isSpark35) {
      // delta-spark 3.3 opens a reader-writer redirected source itself when it loads a path, and
      // refuses it before any rule can route the read (docs/spark-lines.md).
      val refused = intercept[Exception](spark.read.format("delta").load(src).collect())
      assert(refused.getMessage.contains("DELTA_UNSUPPORTED_FEATURES_FOR_READ"), refused)
    } else {
      assert(ids(spark.read.format("delta").load(src)) === expected)
      assert(ids(spark.read.format("delta").option("versionAsOf", 1).load(src)) === (0 until 10))
    }
    assert(ids(spark.read.format("delta").load(dest)) === expected)
    assert(ids(spark.sql(s"SELECT id FROM delta.`$src` VERSION AS OF 1")) === (0 until 10))
    assert(sql(
      s"DESCRIBE DETAIL delta.`$src`"
    ).head.getAs[String]("location").stripSuffix("/").endsWith("dest-basic"))

    val d = sql(s"DESCRIBE REDIRECT delta.`$src`").head
    assert(d.getAs[String]("state") === "READY" &&
      d.getAs[String]("destinationLocation").endsWith("dest-basic"))

    val u = sql(s"ALTER TABLE delta.`$src` UNSET REDIRECT").head
    assert(u.getAs[String]("state") === "NORMAL")
    assert(info(src).config.isEmpty && RedirectConfig.protocolNames(info(src).protocol).isEmpty)
    // Routing is off again: the source itself holds every row, and delta-spark reads it directly.
    assert(idsOf(s"delta.`$src`") === expected)
    assert(DeltaLog.forTable(spark, src).update().allFiles.count() > 0)
    // The destination stays readable and refuses writes.
    assert(info(dest).config.exists(_.isDestinationMarker))
    assert(idsOf(s"delta.`$dest`") === expected)
    assert(failure(sql(s"INSERT INTO delta.`$dest` VALUES (7)")).getCondition ===
      "DELTA_LIFECYCLE_REDIRECT_WRITE_REFUSED")
    // The source takes writes again.
    sql(s"INSERT INTO delta.`$src` VALUES (200)")
    assert(idsOf(s"delta.`$src`") === (expected :+ 200L).sorted)
  }

  test(
    "a catalog table redirected TO TABLE: names, saveAsTable and DESCRIBE follow; " +
      "re-running is a no-op"
  ) {
    sql("CREATE TABLE redirect_by_name (id BIGINT) USING delta")
    sql("INSERT INTO redirect_by_name SELECT id FROM range(0, 5)")
    val r = sql("ALTER TABLE redirect_by_name SET REDIRECT TO TABLE redirect_target").head
    assert(r.getAs[String]("type") === "Session Catalog" &&
      r.getAs[String]("destination") === "default.redirect_target")
    /* Registered as `CREATE TABLE ... USING delta LOCATION` registers: external, delta, at the
     * copied location, and readable by name. */
    val catalog = SparkInternals.sessionCatalog(spark)
    val targetName = TableIdentifier("redirect_target", Some("default"))
    val target = catalog.getTableMetadata(targetName)
    assert(target.tableType === CatalogTableType.EXTERNAL)
    assert(target.provider === Some("delta"))
    assert(target.location === catalog.defaultTablePath(targetName))
    assert(DeltaLog.forTable(spark, target).update().version === 1)
    assert(idsOf("redirect_target") === (0L until 5L))
    Seq(5L).toDF("id").write.format("delta").mode("append").saveAsTable("redirect_by_name")
    sql("INSERT INTO redirect_by_name VALUES (6)")
    assert(idsOf("redirect_by_name") === (0L to 6L))
    assert(idsOf("redirect_target") === (0L to 6L))
    val again = sql("ALTER TABLE redirect_by_name SET REDIRECT TO TABLE redirect_target").head
    assert(again.getAs[Seq[String]]("steps").head.contains("already READY"))
    assert(sql("ALTER TABLE redirect_by_name UNSET REDIRECT").head.getAs[String]("state") ===
      "NORMAL")
    assert(idsOf("redirect_by_name") === (0L to 6L))
  }

  test("an external catalog table, queried before, redirected to a location: its name follows") {
    val src = newTableDir("src-external")
    sql(s"CREATE TABLE redirect_external (id BIGINT) USING delta LOCATION '$src'")
    Seq(1L, 2L).toDF("id").write.format("delta").mode("append").save(src)
    assert(idsOf("redirect_external") === Seq(1L, 2L))
    val dest = newTableDir("dest-external")
    assert(
      sql(s"ALTER TABLE redirect_external SET REDIRECT TO '$dest'").head.getAs[String]("state") ===
        "READY"
    )
    sql("INSERT INTO redirect_external VALUES (3)")
    assert(idsOf("redirect_external") === Seq(1L, 2L, 3L))
    assert(idsOf(s"delta.`$dest`") === Seq(1L, 2L, 3L))
  }

  test("ENABLE-REDIRECT-IN-PROGRESS reads the source as it was and refuses every write") {
    val src = table("src-enabling", 0 until 4)
    val dest = newTableDir("dest-enabling")
    setProperty(src, stateJson("ENABLE-REDIRECT-IN-PROGRESS", dest))
    assert(info(src).state === "ENABLE-REDIRECT-IN-PROGRESS")
    // Stored under the writer-only feature while enabling, so the source stays readable everywhere.
    assert(info(src).protocol.readerFeatureNames.isEmpty &&
      info(src).protocol.writerFeatureNames.contains("redirectWriterOnly"))
    assert(info(src).config.get.targetMode === RedirectMode.ReaderWriter)
    assert(idsOf(s"delta.`$src`") === (0 until 4))
    assert(ids(spark.read.format("delta").load(src)) === (0 until 4))
    for (
      write <- Seq(
        () => sql(s"INSERT INTO delta.`$src` VALUES (9)"),
        () => sql(s"DELETE FROM delta.`$src` WHERE id = 1"),
        () => Seq(9L).toDF("id").write.format("delta").mode("append").save(src)
      )
    ) {
      assert(failure(write()).getCondition === "DELTA_LIFECYCLE_REDIRECT_WRITE_REFUSED")
    }
    // SET REDIRECT to the same target completes the unfinished enable.
    val r = sql(s"ALTER TABLE delta.`$src` SET REDIRECT TO '$dest'").head
    assert(r.getAs[String]("state") === "READY" &&
      r.getAs[Seq[String]]("steps").head.startsWith("resuming"))
    assert(info(src).protocol.readerFeatureNames === Set("redirectReaderWriter"))
    assert(idsOf(s"delta.`$dest`") === (0 until 4))
  }

  test("UNSET REDIRECT cancels an unfinished enable") {
    val src = table("src-cancel", 0 until 3)
    val dest = newTableDir("dest-cancel")
    setProperty(src, stateJson("ENABLE-REDIRECT-IN-PROGRESS", dest))
    val r = sql(s"ALTER TABLE delta.`$src` UNSET REDIRECT").head
    assert(r.getAs[String]("state") === "NORMAL")
    assert(info(src).protocol.minWriterVersion === 2 &&
      RedirectConfig.protocolNames(info(src).protocol).isEmpty)
    sql(s"INSERT INTO delta.`$src` VALUES (3)")
    assert(idsOf(s"delta.`$src`") === (0 until 4))
  }

  test(
    "WRITER ONLY: delta-spark can open the source, and a relation it built on the source is " +
      "routed too"
  ) {
    val src = table("src-writer-only", 0 until 3)
    val dest = newTableDir("dest-writer-only")
    sql(s"ALTER TABLE delta.`$src` SET REDIRECT WRITER ONLY TO '$dest'")
    assert(info(src).protocol.readerFeatureNames.isEmpty &&
      info(src).protocol.writerFeatureNames.contains("redirectWriterOnly"))
    sql(s"INSERT INTO delta.`$src` VALUES (3)")
    assert(idsOf(s"delta.`$src`") === (0 until 4))
    DeltaLog.clearCache()
    // delta-spark's DeltaTable API resolves through the same hooks, so it follows the redirect too.
    assert(ids(io.delta.tables.DeltaTable.forPath(spark, src).toDF) === (0 until 4))
    // A relation delta-spark built directly on the source (as Spark 3.5 and Spark's Hive session
    // build path reads) is routed on the relation, on every line.
    val direct = org.apache.spark.sql.delta.catalog.DeltaTableV2(
      spark,
      new org.apache.hadoop.fs.Path(src)
    ).toBaseRelation
    assert(ids(spark.baseRelationToDataFrame(direct)) === (0 until 4))
  }

  test("NoRedirectRules: the named application reads the source; others follow the redirect") {
    val src = table("src-rules", 0 until 3)
    val dest = newTableDir("dest-rules")
    val appName = spark.conf.get("spark.app.name")
    val r = sql(
      s"ALTER TABLE delta.`$src` SET REDIRECT TO '$dest' " +
        s"NO REDIRECT RULES ('$appName' ALLOW (VACUUM), 'etl' ALLOW ())"
    ).head
    assert(r.getAs[Seq[String]]("noRedirectRules") ===
      Seq(s"$appName: VACUUM", "etl: (reads only)"))
    sql(s"INSERT INTO delta.`$dest` VALUES (3)")
    /* A reader-writer source cannot be read by delta-spark, so the rule is explained, not silently
     * ignored. */
    assert(failure(sql(s"SELECT * FROM delta.`$src`")).getMessage.contains("NoRedirectRules keep"))
    sql(s"ALTER TABLE delta.`$src` UNSET REDIRECT")
    val writerOnlyDest = newTableDir("dest-rules-writer-only")
    sql(
      s"ALTER TABLE delta.`$src` SET REDIRECT WRITER ONLY TO '$writerOnlyDest' " +
        s"NO REDIRECT RULES ('$appName' ALLOW ())"
    )
    sql(s"INSERT INTO delta.`$writerOnlyDest` VALUES (5)")
    assert(idsOf(s"delta.`$src`") === (0 until 4), "this application reads the source")
    assert(idsOf(s"delta.`$writerOnlyDest`") === Seq(0L, 1L, 2L, 3L, 5L))
  }

  test(
    "refusals: non-empty destination, no redirect to unset, bad transitions and values"
  ) {
    val src = table("src-refusals", 0 until 2)
    val other = table("other-table", 0 until 1)
    assert(failure(sql(s"ALTER TABLE delta.`$src` SET REDIRECT TO '$other'")).getCondition ===
      "DELTA_LIFECYCLE_REDIRECT_DESTINATION_NOT_EMPTY")
    assert(failure(sql(s"ALTER TABLE delta.`$src` SET REDIRECT TO '$src/inner'")).getCondition ===
      "DELTA_LIFECYCLE_REDIRECT_DESTINATION_NOT_EMPTY")
    val nothingToUnset = failure(sql(s"ALTER TABLE delta.`$src` UNSET REDIRECT"))
    assert(nothingToUnset.getCondition === "DELTA_LIFECYCLE_REDIRECT_STATE" &&
      nothingToUnset.getMessage.contains("it has no redirect; there is nothing to unset"))
    val dest = newTableDir("dest-refusals")
    val toReady = failure(setProperty(src, stateJson("READY", dest)))
    assert(toReady.getCondition === "DELTA_LIFECYCLE_REDIRECT_INVALID_TRANSITION")
    val malformed = failure(setProperty(src, "{not json"))
    assert(malformed.getCondition === "DELTA_LIFECYCLE_INVALID_REDIRECT")
    val unknownState = failure(setProperty(src, stateJson("MOVING", dest)))
    assert(unknownState.getCondition === "DELTA_LIFECYCLE_INVALID_REDIRECT" &&
      unknownState.getMessage.contains("MOVING"))
    val unknownType = failure(setProperty(
      src,
      """{"Type":"Tape","State":"ENABLE-REDIRECT-IN-PROGRESS"}"""
    ))
    assert(unknownType.getMessage.contains("unknown Type 'Tape'"))
    assert(info(src).config.isEmpty, "nothing was committed")
    assert(idsOf(s"delta.`$src`") === Seq(0L, 1L))
  }

  test(
    "cycles and chains are refused when set and when resolved"
  ) {
    val a = table("cycle-a", 0 until 2)
    val b = newTableDir("cycle-b")
    sql(s"ALTER TABLE delta.`$a` SET REDIRECT TO '$b'")
    // B -> A by hand: the READY step checks the destination and finds A redirected to B.
    setProperty(b, stateJson("ENABLE-REDIRECT-IN-PROGRESS", a))
    val cycle = failure(setProperty(b, stateJson("READY", a)))
    assert(cycle.getCondition === "DELTA_LIFECYCLE_REDIRECT_CHAIN" &&
      cycle.getMessage.contains("cycle"))
    // Forced past validation (another client), the cycle is still refused when a query resolves A.
    val log = TableLog.forPath(hadoopConf, b)
    val current = info(b)
    LogCommitter.commit(
      log,
      current.version,
      Seq(RedirectProtocol.withProperty(
        current.metadata,
        current.config.get.withState(RedirectState.Ready)
      )),
      "TEST",
      Map.empty
    )
    // A's value names B qualified (file:...), B's names A as typed: still one cycle.
    val resolved = failure(sql(s"SELECT * FROM delta.`$a`"))
    assert(resolved.getCondition === "DELTA_LIFECYCLE_REDIRECT_CHAIN" &&
      resolved.getMessage.contains("is a cycle"))

  }

  test(
    "writers that raced a state change are aborted by delta-spark's conflict check, " +
      "on the source and the destination"
  ) {
    val src = table("src-race", 0 until 3)
    val dest = newTableDir("dest-race")
    def pendingAppend(path: String) = {
      DeltaLog.clearCache()
      val log = DeltaLog.forTable(spark, path)
      val txn = log.startTransaction()
      val file = txn.snapshot.allFiles.head()
      (txn, file.copy(path = "raced-" + file.path.split('/').last))
    }
    val (srcTxn, srcFile) = pendingAppend(src)
    sql(s"ALTER TABLE delta.`$src` SET REDIRECT TO '$dest'")
    intercept[Exception](srcTxn.commit(
      Seq(srcFile),
      org.apache.spark.sql.delta.DeltaOperations.ManualUpdate
    ))
    assert(!TableLog.forPath(
      hadoopConf,
      src
    ).latestSnapshot().activeFiles.exists(_.path.startsWith("raced-")))

    val (destTxn, destFile) = pendingAppend(dest)
    sql(s"ALTER TABLE delta.`$src` UNSET REDIRECT")
    intercept[Exception](destTxn.commit(
      Seq(destFile),
      org.apache.spark.sql.delta.DeltaOperations.ManualUpdate
    ))
    assert(!TableLog.forPath(
      hadoopConf,
      dest
    ).latestSnapshot().activeFiles.exists(_.path.startsWith("raced-")))
    assert(idsOf(s"delta.`$src`") === (0 until 3))
  }

  test("delta-spark's preview spelling is read") {
    val c = RedirectConfig.parse(
      RedirectMode.ReaderWriter,
      """{"type":"PathBasedRedirect","state":"REDIRECT-READY",
        |"spec":"{\"sourcePath\":\"/a\",\"destPath\":\"/b\"}",
        |"noRedirectRules":[{"appName":"maintenance","allowedOperations":["VACUUM"]}]}"""
        .stripMargin,
      "test"
    )
    assert(c.state === RedirectState.Ready && c.spec === RedirectSpec.Location("/b"))
    assert(c.noRedirectRules === Seq(NoRedirectRule("maintenance", Seq("VACUUM"))))
    val rfc = RedirectConfig.parse(
      RedirectMode.WriterOnly,
      """{"Type":"Object Store","State":"READY","Spec":"{\"Location\":\"s3://bucket/t\"}",
        |"NoRedirectRules":[{"AppName":"x","AllowWrite":["DELETE"]}]}""".stripMargin,
      "test"
    )
    assert(rfc.spec === RedirectSpec.Location("s3://bucket/t") &&
      rfc.noRedirectRules.head.allows("delete"))
    assert(RedirectConfig.parse(RedirectMode.WriterOnly, rfc.toJson, "round trip") === rfc)
  }
}
