package io.github.deltalifecycle.sql.plans

import io.github.deltalifecycle.features.redirect.RedirectMode
import io.github.deltalifecycle.sql.commands.DropFeatureCommand
import io.github.deltalifecycle.sql.plans.LifecycleStatement.Target
import io.github.deltalifecycle.sql.resolution.LifecycleTableRef
import org.apache.spark.sql.execution.command.LeafRunnableCommand
import org.apache.spark.sql.types.StructType

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
    "feature STRING NOT NULL, mode STRING NOT NULL, status STRING NOT NULL",
    "filesRewritten BIGINT NOT NULL, bytesRewritten BIGINT NOT NULL",
    LifecycleStatement.commitVersionsColumn,
    "checkpointVersions ARRAY<BIGINT> NOT NULL",
    "protectedBefore BIGINT, readableWithoutFeatureFrom BIGINT, historyTruncatedBefore BIGINT",
    LifecycleStatement.stepsColumn,
    // docs/compatibility.md: which known clients gain access, per way of dropping, and which
    // the fast drop's checkpointProtection keeps from writing.
    "clientsGainingAccess ARRAY<STRING> NOT NULL, clientsBlockedByProtection ARRAY<STRING> NOT NULL"
  )
}
