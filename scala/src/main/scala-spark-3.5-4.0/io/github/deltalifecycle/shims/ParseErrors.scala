package io.github.deltalifecycle.shims

import org.apache.spark.sql.catalyst.parser.ParseException
import org.apache.spark.sql.catalyst.trees.Origin

/**
 * Spark's PARSE_SYNTAX_ERROR at `at` in `sql` (Spark 3.5 and 4.0: the exception takes a start and a
 * stop origin).
 */
object ParseErrors {
  def syntaxError(sql: Option[String], at: Origin, params: Map[String, String]): ParseException =
    new ParseException(sql, at, at, "PARSE_SYNTAX_ERROR", params)
}
