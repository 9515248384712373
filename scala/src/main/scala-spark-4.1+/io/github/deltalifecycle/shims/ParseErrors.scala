package io.github.deltalifecycle.shims

import org.apache.spark.sql.catalyst.parser.ParseException
import org.apache.spark.sql.catalyst.trees.Origin

/**
 * Spark's PARSE_SYNTAX_ERROR at `at` in `sql` (Spark 4.1 and later: the exception takes one
 * origin).
 */
object ParseErrors {
  def syntaxError(sql: Option[String], at: Origin, params: Map[String, String]): ParseException =
    new ParseException(sql, at, "PARSE_SYNTAX_ERROR", params)
}
