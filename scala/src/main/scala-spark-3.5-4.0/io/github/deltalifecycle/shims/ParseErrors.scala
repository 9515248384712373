package io.github.deltalifecycle.shims

import org.apache.spark.sql.catalyst.parser.ParseException
import org.apache.spark.sql.catalyst.trees.Origin

/** Builds parse errors (Spark 3.5 and 4.0: the exception takes a start and a stop origin). */
object ParseErrors {
  def at(
      command: Option[String],
      origin: Origin,
      errorClass: String,
      messageParameters: Map[String, String]
  ): ParseException =
    new ParseException(command, origin, origin, errorClass, messageParameters)
}
