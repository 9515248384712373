package io.github.deltalifecycle.core

import org.apache.spark.sql.catalyst.parser.CatalystSqlParser
import org.apache.spark.sql.catalyst.util.QuotingUtils

/**
 * Table names as SQL text: dot-separated parts, a part quoted with backticks when it must be. A
 * name is never split on '.' by hand, because a quoted part may contain one (`` `my.db`.t `` is the
 * table t of the database my.db).
 */
object TableName {

  /** The parts of `name`, read the way Spark reads a multipart identifier. */
  def parts(name: String): Seq[String] = CatalystSqlParser.parseMultipartIdentifier(name)

  /** `parts` as SQL text that [[parts]] reads back; a part is quoted only when it needs to be. */
  def sql(parts: Seq[String]): String = parts.map(QuotingUtils.quoteIfNeeded).mkString(".")

  /** ``delta.`<location>` ``: the table at `location`, named by it, as SQL text. */
  def ofPath(location: String): String = sql(Seq("delta", location))
}
