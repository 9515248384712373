package io.github.deltalifecycle.shims

import org.apache.spark.sql.catalyst.parser.ParserInterface
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.types.StructType

/**
 * The ParserInterface methods that only some Spark lines have, for a [[DelegatingParser]], which
 * decides the plan of a statement from the plan its `delegate` gives (`planOf`) and hands every
 * other method to the delegate (Spark 4.0: routine parameters; no parameterized plans, which go
 * through parsePlan).
 */
trait ParserShim extends ParserInterface {
  protected def delegate: ParserInterface

  /** The plan of `sqlText`, where `delegated` is the plan the wrapped parser gives it. */
  protected def planOf(sqlText: String, delegated: => LogicalPlan): LogicalPlan

  override def parseRoutineParam(sqlText: String): StructType = delegate.parseRoutineParam(sqlText)
}
