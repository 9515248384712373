package io.github.deltalifecycle.shims

import org.apache.spark.sql.catalyst.parser.ParserInterface
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan

/**
 * The ParserInterface methods that only some Spark lines have, for a [[DelegatingParser]], which
 * decides the plan of a statement from the plan its `delegate` gives (`planOf`) and hands every
 * other method to the delegate (Spark 3.5: none beyond the shared ones).
 */
trait ParserShim extends ParserInterface {
  protected def delegate: ParserInterface

  /** The plan of `sqlText`, where `delegated` is the plan the wrapped parser gives it. */
  protected def planOf(sqlText: String, delegated: => LogicalPlan): LogicalPlan
}
