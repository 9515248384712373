package io.github.deltalifecycle.sql.plans

import io.github.deltalifecycle.features.redirect.RedirectMode
import io.github.deltalifecycle.sql.commands.DropFeatureCommand
import io.github.deltalifecycle.sql.plans.LifecycleStatement.Target
import io.github.deltalifecycle.sql.resolution.LifecycleTableRef
import org.apache.spark.sql.execution.command.LeafRunnableCommand
import org.apache.spark.sql.types._

/** `ALTER TABLE <table> DROP FEATURE <feature> [TRUNCATE HISTORY] [DRY RUN]` as parsed. */
case class DropFeatureStatement(
    table: Seq[String],
    feature: String,
    truncateHistory: Boolean,
    dryRun: Boolean
) extends LifecycleStatement {
  override protected def resultSchema: StructType = DropFeatureStatement.schema

  // Dropping a redirect feature is about the table named, as the redirect's own statements are.
  override def target: Target =
    if (RedirectMode.featureNames.exists(_.equalsIgnoreCase(feature))) Target.Named
    else Target.writing("DROP FEATURE")

  override def toCommand(ref: LifecycleTableRef): LeafRunnableCommand =
    DropFeatureCommand(ref, feature, truncateHistory, dryRun)
}

object DropFeatureStatement extends StatementResult {
  val schema: StructType = LifecycleStatement.resultWithTable(
    StructField("feature", StringType, nullable = false),
    StructField("mode", StringType, nullable = false),
    StructField("status", StringType, nullable = false),
    StructField("filesRewritten", LongType, nullable = false),
    StructField("bytesRewritten", LongType, nullable = false),
    LifecycleStatement.commitVersionsColumn,
    StructField("checkpointVersions", ArrayType(LongType, containsNull = false), nullable = false),
    StructField("protectedBefore", LongType),
    StructField("readableWithoutFeatureFrom", LongType),
    StructField("historyTruncatedBefore", LongType),
    LifecycleStatement.stepsColumn,
    // docs/compatibility.md: which known clients gain access, per way of dropping, and which
    // the fast drop's checkpointProtection keeps from writing.
    StructField(
      "clientsGainingAccess",
      ArrayType(StringType, containsNull = false),
      nullable = false
    ),
    StructField(
      "clientsBlockedByProtection",
      ArrayType(StringType, containsNull = false),
      nullable = false
    )
  )
}
