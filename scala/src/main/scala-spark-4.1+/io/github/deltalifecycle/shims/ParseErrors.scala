package io.github.deltalifecycle.shims

import org.apache.spark.sql.catalyst.parser.ParseException
import org.apache.spark.sql.catalyst.trees.Origin

/** Builds parse errors (Spark 4.1 and later: the exception takes one origin). */
object ParseErrors {
  def at(
      command: Option[String],
      origin: Origin,
      errorClass: String,
      messageParameters: Map[String, String]
  ): ParseException =
    new ParseException(command, origin, errorClass, messageParameters)
}
