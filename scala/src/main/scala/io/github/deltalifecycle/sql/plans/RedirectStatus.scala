package io.github.deltalifecycle.sql.plans

import org.apache.spark.sql.catalyst.expressions.Attribute
import org.apache.spark.sql.types.StructType

/**
 * The one-row results of the redirect statements: [[schema]] for SET, UNSET and DESCRIBE REDIRECT
 * (the redirect after the statement and what it did), [[planSchema]] for SET and UNSET REDIRECT ...
 * DRY RUN (what the statement would do).
 */
object RedirectStatus extends StatementResult {
  val schema: StructType = LifecycleStatement.result(
    "table STRING NOT NULL, state STRING NOT NULL, mode STRING, type STRING",
    "destination STRING, destinationLocation STRING, noRedirectRules ARRAY<STRING> NOT NULL",
    "version BIGINT NOT NULL, filesCopied BIGINT NOT NULL, bytesCopied BIGINT NOT NULL",
    LifecycleStatement.commitVersionsColumn,
    LifecycleStatement.stepsColumn,
    "copyMode STRING, copyModeReason STRING, bytesThroughExecutors BIGINT NOT NULL"
  )

  /** `refusals`: each check that would refuse the statement, its error condition and message. */
  val planSchema: StructType = LifecycleStatement.result(
    "table STRING NOT NULL, state STRING NOT NULL, destination STRING, destinationLocation STRING",
    "version BIGINT NOT NULL, filesToCopy BIGINT NOT NULL, bytesToCopy BIGINT NOT NULL",
    "filesAlreadyThere BIGINT NOT NULL, bytesAlreadyThere BIGINT NOT NULL",
    "filesReferencedInPlace BIGINT NOT NULL, filesGone BIGINT NOT NULL",
    "logFilesToCopy BIGINT NOT NULL, logBytesToCopy BIGINT NOT NULL",
    "copyMode STRING, copyModeReason STRING, tasks INT NOT NULL",
    "refusals ARRAY<STRUCT<condition: STRING NOT NULL, message: STRING NOT NULL>> NOT NULL",
    LifecycleStatement.stepsColumn
  )

  def schemaOf(dryRun: Boolean): StructType = if (dryRun) planSchema else schema

  def planAttributes: Seq[Attribute] = LifecycleStatement.attributes(planSchema)
}
