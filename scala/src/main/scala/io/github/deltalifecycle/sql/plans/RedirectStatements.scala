package io.github.deltalifecycle.sql.plans

import io.github.deltalifecycle.features.redirect.{NoRedirectRule, RedirectMode}
import org.apache.spark.sql.catalyst.expressions.Attribute
import org.apache.spark.sql.types._

/**
 * `ALTER TABLE <table> SET REDIRECT [READER WRITER | WRITER ONLY]`
 * `TO '<location>' | TABLE <name> [NO REDIRECT RULES (...)]`.
 */
case class SetRedirectStatement(
    table: Seq[String],
    mode: RedirectMode,
    location: Option[String],
    targetTable: Option[Seq[String]],
    rules: Seq[NoRedirectRule]
) extends LifecycleStatement {
  override protected def resultSchema: StructType = RedirectStatus.schema
}

/** `ALTER TABLE <table> UNSET REDIRECT`. */
case class UnsetRedirectStatement(table: Seq[String]) extends LifecycleStatement {
  override protected def resultSchema: StructType = RedirectStatus.schema
}

/** `DESCRIBE REDIRECT <table>`. */
case class DescribeRedirectStatement(table: Seq[String]) extends LifecycleStatement {
  override protected def resultSchema: StructType = RedirectStatus.schema
}

/** The one-row result of the three redirect statements. */
object RedirectStatus {
  val schema: StructType = StructType(Seq(
    StructField("table", StringType, nullable = false),
    StructField("state", StringType, nullable = false),
    StructField("mode", StringType),
    StructField("type", StringType),
    StructField("destination", StringType),
    StructField("destinationLocation", StringType),
    StructField("noRedirectRules", ArrayType(StringType, containsNull = false), nullable = false),
    StructField("version", LongType, nullable = false),
    StructField("filesCopied", LongType, nullable = false),
    StructField("bytesCopied", LongType, nullable = false),
    StructField("commitVersions", ArrayType(LongType, containsNull = false), nullable = false),
    StructField("steps", ArrayType(StringType, containsNull = false), nullable = false)
  ))

  def outputAttributes: Seq[Attribute] = LifecycleStatement.attributes(schema)
}
