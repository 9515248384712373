package io.github.deltalifecycle.shims

import org.apache.spark.sql.catalyst.parser.{ParameterContext, ParserInterface}
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.types.StructType

/**
 * The ParserInterface methods that only some Spark lines have, for a [[DelegatingParser]] that
 * takes its own statements (`isOwn`, `parseOwn`) and hands the rest to `delegate` (Spark 4.1 and
 * later: parameterized plans and routine parameters).
 */
trait ParserShim extends ParserInterface {
  protected def delegate: ParserInterface
  protected def isOwn(sqlText: String): Boolean
  protected def parseOwn(sqlText: String): LogicalPlan

  override def parsePlanWithParameters(sqlText: String, context: ParameterContext): LogicalPlan =
    if (isOwn(sqlText)) parseOwn(sqlText)
    else delegate.parsePlanWithParameters(sqlText, context)

  override def parseRoutineParam(sqlText: String): StructType = delegate.parseRoutineParam(sqlText)
}
