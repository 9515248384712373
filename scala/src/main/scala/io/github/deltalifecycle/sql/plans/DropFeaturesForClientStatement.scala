package io.github.deltalifecycle.sql.plans

import org.apache.spark.sql.types.StructType

/**
 * `ALTER TABLE <table> DROP FEATURES FOR CLIENT '<client>' [FOR WRITES] [TRUNCATE HISTORY] [DRY
 * RUN]` as parsed. One result row per feature, as DROP FEATURE's.
 */
case class DropFeaturesForClientStatement(
    table: Seq[String],
    client: String,
    forWrites: Boolean,
    truncateHistory: Boolean,
    dryRun: Boolean
) extends LifecycleStatement {
  override protected def resultSchema: StructType = DropFeatureStatement.schema
}
