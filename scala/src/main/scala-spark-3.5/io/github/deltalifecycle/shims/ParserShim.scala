package io.github.deltalifecycle.shims

import org.apache.spark.sql.catalyst.parser.ParserInterface
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan

/**
 * The ParserInterface methods that only some Spark lines have, for a [[DelegatingParser]] that
 * takes its own statements (`isOwn`, `parseOwn`) and hands the rest to `delegate` (Spark 3.5: none
 * beyond the shared ones).
 */
trait ParserShim extends ParserInterface {
  protected def delegate: ParserInterface
  protected def isOwn(sqlText: String): Boolean
  protected def parseOwn(sqlText: String): LogicalPlan
}
