package io.github.deltalifecycle.sql.parser

import io.github.deltalifecycle.shims.DelegatingParser
import org.apache.spark.sql.catalyst.parser.ParserInterface
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.catalyst.rules.Rule

/**
 * The session's parser, with `rule` applied to every plan it parses: where this project sees an SQL
 * statement before the analyzer resolves its tables on every Spark line and in every kind of
 * session. (Spark 3.5 has no analyzer batch before table resolution to inject into, and Spark's
 * Hive session, `enableHiveSupport()`, drops the rules extensions inject there: SPARK-59081.)
 */
final class RewritingParser(session: ParserInterface, rule: Rule[LogicalPlan])
    extends DelegatingParser(session) {
  override protected def planOf(sqlText: String, delegated: => LogicalPlan): LogicalPlan =
    rule(delegated)
}
