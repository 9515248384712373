package io.github.deltalifecycle.sql.parser

import scala.util.{Failure, Success, Try}

import io.github.deltalifecycle.features.redirect.{NoRedirectRule, RedirectMode}
import io.github.deltalifecycle.sql.plans._
import org.apache.spark.sql.catalyst.parser.{CatalystSqlParser, ParseException}
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.scalatest.funsuite.AnyFunSuite

/**
 * Every statement of the grammar, parsed without a SparkSession. The wrapped parser is Spark's own
 * [[CatalystSqlParser]]: what this parser does not own must come back exactly as Spark parses it.
 */
class DeltaLifecycleSqlParserSuite extends AnyFunSuite {
  private val parser = new DeltaLifecycleSqlParser(CatalystSqlParser)

  private def parse(sql: String): LogicalPlan = parser.parsePlan(sql)

  private def parseError(sql: String): ParseException = {
    val e = intercept[ParseException](parse(sql))
    assert(e.getCondition === "PARSE_SYNTAX_ERROR", e.getMessage)
    e
  }

  test("DESCRIBE PROTOCOL HISTORY, and DESC as its short form") {
    assert(parse("DESCRIBE PROTOCOL HISTORY t") === DescribeProtocolHistoryStatement(Seq("t")))
    assert(parse("DESC PROTOCOL HISTORY db.t") ===
      DescribeProtocolHistoryStatement(Seq("db", "t")))
  }

  test("COMPACT LOG, for the pending commits or a version range") {
    assert(parse("ALTER TABLE t COMPACT LOG") === CompactLogStatement(Seq("t"), None))
    assert(parse("ALTER TABLE t COMPACT LOG FROM VERSION 3 TO VERSION 17") ===
      CompactLogStatement(Seq("t"), Some((3L, 17L))))
  }

  test("CLEAN LOG with and without RETAIN n HOURS and DRY RUN") {
    assert(parse("ALTER TABLE t CLEAN LOG") === CleanLogStatement(Seq("t"), None, dryRun = false))
    assert(parse("ALTER TABLE t CLEAN LOG RETAIN 48 HOURS") ===
      CleanLogStatement(Seq("t"), Some(48L), dryRun = false))
    assert(parse("ALTER TABLE t CLEAN LOG DRY RUN") ===
      CleanLogStatement(Seq("t"), None, dryRun = true))
    assert(parse("ALTER TABLE t CLEAN LOG RETAIN 0 HOURS DRY RUN") ===
      CleanLogStatement(Seq("t"), Some(0L), dryRun = true))
  }

  test("DROP FEATURE with and without TRUNCATE HISTORY and DRY RUN") {
    def drop(feature: String, truncate: Boolean, dryRun: Boolean) =
      DropFeatureStatement(Seq("t"), feature, truncate, dryRun)
    assert(parse("ALTER TABLE t DROP FEATURE deletionVectors") ===
      drop("deletionVectors", truncate = false, dryRun = false))
    assert(parse("ALTER TABLE t DROP FEATURE v2Checkpoint TRUNCATE HISTORY") ===
      drop("v2Checkpoint", truncate = true, dryRun = false))
    assert(parse("ALTER TABLE t DROP FEATURE v2Checkpoint DRY RUN") ===
      drop("v2Checkpoint", truncate = false, dryRun = true))
    assert(parse("ALTER TABLE t DROP FEATURE v2Checkpoint TRUNCATE HISTORY DRY RUN") ===
      drop("v2Checkpoint", truncate = true, dryRun = true))
  }

  test("a feature name may contain '-' or be a string") {
    assert(parse("ALTER TABLE t DROP FEATURE typeWidening-preview")
      .asInstanceOf[DropFeatureStatement].feature === "typeWidening-preview")
    assert(parse("ALTER TABLE t DROP FEATURE 'typeWidening-preview'")
      .asInstanceOf[DropFeatureStatement].feature === "typeWidening-preview")
  }

  test("SET REDIRECT to a location, in each mode") {
    def set(mode: RedirectMode) = SetRedirectStatement(Seq("t"), mode, Some("/x"), None, Nil)
    assert(parse("ALTER TABLE t SET REDIRECT TO '/x'") === set(RedirectMode.ReaderWriter))
    assert(parse("ALTER TABLE t SET REDIRECT READER WRITER TO '/x'") ===
      set(RedirectMode.ReaderWriter))
    assert(parse("ALTER TABLE t SET REDIRECT WRITER ONLY TO \"/x\"") ===
      set(RedirectMode.WriterOnly))
  }

  test("SET REDIRECT TO TABLE, with NO REDIRECT RULES") {
    assert(parse("ALTER TABLE t SET REDIRECT TO TABLE `my.db`.target") ===
      SetRedirectStatement(
        Seq("t"),
        RedirectMode.ReaderWriter,
        None,
        Some(Seq("my.db", "target")),
        Nil
      ))
    val withRules = parse(
      "ALTER TABLE t SET REDIRECT WRITER ONLY TO 's3://b/t' " +
        "NO REDIRECT RULES ('nightly' ALLOW (vacuum, Optimize), 'reader' ALLOW ())"
    )
    assert(withRules === SetRedirectStatement(
      Seq("t"),
      RedirectMode.WriterOnly,
      Some("s3://b/t"),
      None,
      Seq(NoRedirectRule("nightly", Seq("VACUUM", "OPTIMIZE")), NoRedirectRule("reader", Nil))
    ))
  }

  test("SET and UNSET REDIRECT ... DRY RUN, whose rows are the plan's") {
    val plan = parse(
      "ALTER TABLE t SET REDIRECT TO 's3a://b/t' NO REDIRECT RULES ('app' ALLOW ()) DRY RUN"
    )
    assert(plan === SetRedirectStatement(
      Seq("t"),
      RedirectMode.ReaderWriter,
      Some("s3a://b/t"),
      None,
      Seq(NoRedirectRule("app", Nil)),
      dryRun = true
    ))
    assert(plan.schema === RedirectStatus.planSchema)
    assert(parse("ALTER TABLE t SET REDIRECT TO TABLE db.u dry run")
      .asInstanceOf[SetRedirectStatement].dryRun)
    val unset = parse("ALTER TABLE db.t UNSET REDIRECT DRY RUN")
    assert(unset === UnsetRedirectStatement(Seq("db", "t"), dryRun = true))
    assert(unset.schema === RedirectStatus.planSchema)
    assert(parse("ALTER TABLE t UNSET REDIRECT").schema === RedirectStatus.schema)
  }

  test("string literals unescape backslashes") {
    assert(parse("""ALTER TABLE t SET REDIRECT TO '/it\'s/a\\b'""")
      .asInstanceOf[SetRedirectStatement].location === Some("""/it's/a\b"""))
  }

  test("UNSET REDIRECT and DESCRIBE REDIRECT") {
    assert(parse("ALTER TABLE db.t UNSET REDIRECT") === UnsetRedirectStatement(Seq("db", "t")))
    assert(parse("DESCRIBE REDIRECT db.t") === DescribeRedirectStatement(Seq("db", "t")))
    assert(parse("DESC REDIRECT t") === DescribeRedirectStatement(Seq("t")))
  }

  test("DESCRIBE LOG FILES") {
    assert(parse("DESCRIBE LOG FILES db.t") === DescribeLogFilesStatement(Seq("db", "t")))
    assert(parse("desc log files delta.`/data/events`") ===
      DescribeLogFilesStatement(Seq("delta", "/data/events")))
    assert(parse("DESCRIBE LOG FILES log") === DescribeLogFilesStatement(Seq("log")))
  }

  test("CHECKPOINT with and without DRY RUN; a table named checkpoint") {
    assert(parse("ALTER TABLE db.t CHECKPOINT") === CheckpointStatement(Seq("db", "t"), false))
    assert(parse("alter table delta.`/data/events` checkpoint dry run") ===
      CheckpointStatement(Seq("delta", "/data/events"), true))
    assert(parse("ALTER TABLE checkpoint CHECKPOINT") ===
      CheckpointStatement(Seq("checkpoint"), false))
  }

  test("names: quoted parts keep their dots and backticks; a keyword is a name") {
    assert(parse("DESCRIBE PROTOCOL HISTORY `my.db`.`t`").asInstanceOf[LifecycleStatement].table ===
      Seq("my.db", "t"))
    assert(parse("DESCRIBE PROTOCOL HISTORY `a``b`").asInstanceOf[LifecycleStatement].table ===
      Seq("a`b"))
    assert(parse("ALTER TABLE spark_catalog.db.t COMPACT LOG") ===
      CompactLogStatement(Seq("spark_catalog", "db", "t"), None))
    assert(parse("ALTER TABLE log.history CLEAN LOG") ===
      CleanLogStatement(Seq("log", "history"), None, dryRun = false))
    assert(parse("DESCRIBE REDIRECT redirect") === DescribeRedirectStatement(Seq("redirect")))
  }

  test("path tables: delta.`<path>`") {
    assert(parse("ALTER TABLE delta.`/data/events` COMPACT LOG") ===
      CompactLogStatement(Seq("delta", "/data/events"), None))
    assert(parse("DESCRIBE REDIRECT delta.`s3://bucket/a.b/t`") ===
      DescribeRedirectStatement(Seq("delta", "s3://bucket/a.b/t")))
  }

  test("keywords are case-insensitive; names keep their case") {
    assert(parse("alter table Db.T clean log retain 2 hours dry run") ===
      CleanLogStatement(Seq("Db", "T"), Some(2L), dryRun = true))
    assert(parse("Describe Protocol History T") === DescribeProtocolHistoryStatement(Seq("T")))
    assert(parse("alter table t set redirect writer only to '/x'") ===
      SetRedirectStatement(Seq("t"), RedirectMode.WriterOnly, Some("/x"), None, Nil))
  }

  test("comments, whitespace and trailing semicolons are accepted") {
    assert(parse("-- why\nALTER TABLE /* which */ t\n  COMPACT LOG;") ===
      CompactLogStatement(Seq("t"), None))
  }

  // Spark 3.5's DESCRIBE plans carry output attributes with fresh expression ids on every
  // parse, so two parses of one statement are compared without the ids.
  private def withoutIds(plan: LogicalPlan): String = plan.treeString.replaceAll("#\\d+", "#")

  /** `sql` is handed to the wrapped parser: the same plan, or the same error, as it gives. */
  private def assertDelegated(sql: String): Unit = {
    val ours = Try(parse(sql))
    Try(CatalystSqlParser.parsePlan(sql)) match {
      case Success(plan) => assert(ours.map(withoutIds) === Success(withoutIds(plan)), sql)
      case Failure(e) => assert(ours.failed.map(_.getMessage) === Success(e.getMessage), sql)
    }
  }

  test("every other statement goes to the wrapped parser unchanged") {
    assertDelegated("SELECT * FROM t WHERE id > 1")
    assertDelegated("DESCRIBE t")
    assertDelegated("DESCRIBE redirect") // a table named redirect
    assertDelegated("DESCRIBE PROTOCOL") // a table named protocol
    assertDelegated("DESCRIBE log files") // the column files of a table named log
    assertDelegated("DESCRIBE log files.size") // its nested column files.size
    assertDelegated("DESCRIBE redirect.events") // the table events of a database named redirect
    assertDelegated("ALTER TABLE t SET TBLPROPERTIES ('delta.appendOnly' = 'true')")
    assertDelegated("ALTER TABLE t DROP COLUMN c")
    assertDelegated("ALTER TABLE log SET TBLPROPERTIES ('a' = 'b')")
    assertDelegated("ALTER TABLE t SET LOCATION '/x'")
    assertDelegated("INSERT INTO delta.`/x` SELECT * FROM s")
    assertDelegated("SELECT (") // the delegate's syntax error, not this parser's
    assert(parser.parseExpression("a + 1") === CatalystSqlParser.parseExpression("a + 1"))
    assert(parser.parseMultipartIdentifier("`my.db`.t") === Seq("my.db", "t"))
    assert(parser.parseTableIdentifier("db.t") === CatalystSqlParser.parseTableIdentifier("db.t"))
  }

  test("an error after this project's leading keywords is this project's ParseException") {
    parseError("DESCRIBE PROTOCOL HISTORY")
    parseError("ALTER TABLE t COMPACT LOG FROM VERSION 1")
    parseError("ALTER TABLE t COMPACT LOG FROM VERSION -1 TO VERSION 2")
    parseError("ALTER TABLE t CLEAN LOG RETAIN 5")
    parseError("ALTER TABLE t DROP FEATURE")
    parseError("ALTER TABLE t SET REDIRECT TO")
    parseError("ALTER TABLE t SET REDIRECT READER ONLY TO '/x'")
    parseError("ALTER TABLE t SET REDIRECT TO '/x' NO REDIRECT RULES ()")
    parseError("ALTER TABLE t UNSET REDIRECT now")
    parseError("DESCRIBE REDIRECT db.")
  }

  test("a number too large for a long is a parse error, not an overflow") {
    val e = parseError("ALTER TABLE t CLEAN LOG RETAIN 99999999999999999999 HOURS")
    assert(e.getMessage.contains("too large"))
  }
}
