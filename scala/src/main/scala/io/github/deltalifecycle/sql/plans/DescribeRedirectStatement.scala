package io.github.deltalifecycle.sql.plans

import org.apache.spark.sql.types.StructType

/** `DESCRIBE REDIRECT <table>`. */
case class DescribeRedirectStatement(table: Seq[String]) extends LifecycleStatement {
  override protected def resultSchema: StructType = RedirectStatus.schema
}
