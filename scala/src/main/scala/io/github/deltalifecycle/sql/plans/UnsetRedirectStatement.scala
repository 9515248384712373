package io.github.deltalifecycle.sql.plans

import org.apache.spark.sql.types.StructType

/** `ALTER TABLE <table> UNSET REDIRECT [DRY RUN]`. */
case class UnsetRedirectStatement(table: Seq[String], dryRun: Boolean = false)
    extends LifecycleStatement {
  override protected def resultSchema: StructType = RedirectStatus.schemaOf(dryRun)
}
