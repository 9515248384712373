package io.github.deltalifecycle.shims

import org.apache.spark.sql.catalyst.{FunctionIdentifier, TableIdentifier}
import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.catalyst.parser.ParserInterface
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.types.{DataType, StructType}

/**
 * A parser that wraps the session's and hands it every `ParserInterface` method, except that each
 * subclass decides the plan of a statement (`planOf`), from the plans of `parsePlan` and, on the
 * lines that have it, of parameterized SQL ([[ParserShim]]). It is the one place the methods are
 * delegated, for this project's statement parser and for the parser that rewrites plans before they
 * are analyzed ([[io.github.deltalifecycle.sql.parser.RewritingParser]]).
 */
abstract class DelegatingParser(protected val delegate: ParserInterface) extends ParserShim {
  override def parsePlan(sqlText: String): LogicalPlan =
    planOf(sqlText, delegate.parsePlan(sqlText))
  override def parseExpression(sqlText: String): Expression = delegate.parseExpression(sqlText)
  override def parseTableIdentifier(sqlText: String): TableIdentifier =
    delegate.parseTableIdentifier(sqlText)
  override def parseFunctionIdentifier(sqlText: String): FunctionIdentifier =
    delegate.parseFunctionIdentifier(sqlText)
  override def parseMultipartIdentifier(sqlText: String): Seq[String] =
    delegate.parseMultipartIdentifier(sqlText)
  override def parseQuery(sqlText: String): LogicalPlan = delegate.parseQuery(sqlText)
  override def parseTableSchema(sqlText: String): StructType = delegate.parseTableSchema(sqlText)
  override def parseDataType(sqlText: String): DataType = delegate.parseDataType(sqlText)
}
