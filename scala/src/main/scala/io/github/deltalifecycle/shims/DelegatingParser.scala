package io.github.deltalifecycle.shims

import org.apache.spark.sql.catalyst.{FunctionIdentifier, TableIdentifier}
import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.catalyst.parser.ParserInterface
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.types.{DataType, StructType}

/**
 * A parser that wraps the session's and hands it every `ParserInterface` method that all Spark
 * lines share, except `parsePlan`, which each subclass decides. The members only some lines have
 * are in [[ParserShim]], mixed in by the parsers that need them; this class is the one place the
 * shared methods are delegated, for this project's statement parser and for the plan-rewriting
 * parser that Spark 3.5's analyzer hooks use (docs/spark-lines.md).
 */
abstract class DelegatingParser(protected val delegate: ParserInterface) extends ParserInterface {
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
