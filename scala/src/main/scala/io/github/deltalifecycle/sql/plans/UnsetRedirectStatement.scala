package io.github.deltalifecycle.sql.plans

import org.apache.spark.sql.types.StructType

/** `ALTER TABLE <table> UNSET REDIRECT`. */
case class UnsetRedirectStatement(table: Seq[String]) extends LifecycleStatement {
  override protected def resultSchema: StructType = RedirectStatus.schema
}
