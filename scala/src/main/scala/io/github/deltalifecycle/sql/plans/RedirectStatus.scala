package io.github.deltalifecycle.sql.plans

import org.apache.spark.sql.catalyst.expressions.Attribute
import org.apache.spark.sql.types._

/**
 * The one-row results of the redirect statements: [[schema]] for SET, UNSET and DESCRIBE REDIRECT
 * (the redirect after the statement and what it did), [[planSchema]] for SET and UNSET REDIRECT ...
 * DRY RUN (what the statement would do).
 */
object RedirectStatus extends StatementResult {
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
    LifecycleStatement.commitVersionsColumn,
    LifecycleStatement.stepsColumn,
    StructField("copyMode", StringType),
    StructField("copyModeReason", StringType),
    StructField("bytesThroughExecutors", LongType, nullable = false)
  ))

  /** A check that would refuse the statement: its error condition and message. */
  private val refusal = StructType(Seq(
    StructField("condition", StringType, nullable = false),
    StructField("message", StringType, nullable = false)
  ))

  val planSchema: StructType = StructType(Seq(
    StructField("table", StringType, nullable = false),
    StructField("state", StringType, nullable = false),
    StructField("destination", StringType),
    StructField("destinationLocation", StringType),
    StructField("version", LongType, nullable = false),
    StructField("filesToCopy", LongType, nullable = false),
    StructField("bytesToCopy", LongType, nullable = false),
    StructField("filesAlreadyThere", LongType, nullable = false),
    StructField("bytesAlreadyThere", LongType, nullable = false),
    StructField("filesReferencedInPlace", LongType, nullable = false),
    StructField("filesGone", LongType, nullable = false),
    StructField("logFilesToCopy", LongType, nullable = false),
    StructField("logBytesToCopy", LongType, nullable = false),
    StructField("copyMode", StringType),
    StructField("copyModeReason", StringType),
    StructField("tasks", IntegerType, nullable = false),
    StructField("refusals", ArrayType(refusal, containsNull = false), nullable = false),
    LifecycleStatement.stepsColumn
  ))

  def schemaOf(dryRun: Boolean): StructType = if (dryRun) planSchema else schema

  def planAttributes: Seq[Attribute] = LifecycleStatement.attributes(planSchema)
}
