package io.github.deltalifecycle.shims

import org.apache.spark.sql.catalyst.parser.ParserInterface
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.types.StructType

/**
 * The ParserInterface methods that only some Spark lines have, for a [[DelegatingParser]] that
 * takes its own statements (`isOwn`, `parseOwn`) and hands the rest to `delegate` (Spark 4.0:
 * routine parameters; no parameterized plans, which go through parsePlan).
 */
trait ParserShim extends ParserInterface {
  protected def delegate: ParserInterface
  protected def isOwn(sqlText: String): Boolean
  protected def parseOwn(sqlText: String): LogicalPlan

  override def parseRoutineParam(sqlText: String): StructType = delegate.parseRoutineParam(sqlText)
}
