package io.github.deltalifecycle.shims

import org.apache.spark.sql.catalyst.parser.{ParameterContext, ParserInterface}
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.types.StructType

/**
 * The ParserInterface methods that only some Spark lines have, for a [[DelegatingParser]], which
 * decides the plan of a statement from the plan its `delegate` gives (`planOf`) and hands every
 * other method to the delegate (Spark 4.1 and later: parameterized plans and routine parameters).
 */
trait ParserShim extends ParserInterface {
  protected def delegate: ParserInterface

  /** The plan of `sqlText`, where `delegated` is the plan the wrapped parser gives it. */
  protected def planOf(sqlText: String, delegated: => LogicalPlan): LogicalPlan

  override def parsePlanWithParameters(sqlText: String, context: ParameterContext): LogicalPlan =
    planOf(sqlText, delegate.parsePlanWithParameters(sqlText, context))

  override def parseRoutineParam(sqlText: String): StructType = delegate.parseRoutineParam(sqlText)
}
