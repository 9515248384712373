package io.github.deltalifecycle.shims

import org.apache.spark.sql.catalyst.parser.ParserInterface
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan

/**
 * The ParserInterface methods that only some Spark lines have, for a parser that takes its own
 * statements and hands the rest to `delegate` (Spark 3.5: none beyond the common ones).
 */
abstract class ParserShim(delegate: ParserInterface) extends ParserInterface {
  protected def isOwn(sqlText: String): Boolean
  protected def parseOwn(sqlText: String): LogicalPlan
}
