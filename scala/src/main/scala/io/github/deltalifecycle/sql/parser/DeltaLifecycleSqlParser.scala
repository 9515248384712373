package io.github.deltalifecycle.sql.parser

import scala.jdk.CollectionConverters._

import org.antlr.v4.runtime._
import org.antlr.v4.runtime.atn.PredictionMode
import org.apache.spark.sql.catalyst.{FunctionIdentifier, TableIdentifier}
import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.catalyst.parser.{ParameterContext, ParseException, ParserInterface}
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.catalyst.trees.Origin
import org.apache.spark.sql.types.{DataType, StructType}

/**
 * Parses this project's statements and hands every other statement, untouched, to the
 * parser it wraps. A statement is ours when its leading keywords are one of
 * [[DeltaLifecycleSqlParser.OwnStatementPrefixes]]; from then on a syntax error is reported
 * as ours rather than passed on, so `DESCRIBE PROTOCOL HISTORY` without a table fails with
 * a parse error instead of being read by Spark as some other DESCRIBE.
 */
class DeltaLifecycleSqlParser(delegate: ParserInterface) extends ParserInterface {
  import DeltaLifecycleSqlParser._

  private val astBuilder = new DeltaLifecycleSqlAstBuilder

  override def parsePlan(sqlText: String): LogicalPlan =
    if (isOwnStatement(sqlText)) parseOwn(sqlText) else delegate.parsePlan(sqlText)

  override def parsePlanWithParameters(sqlText: String, context: ParameterContext): LogicalPlan =
    if (isOwnStatement(sqlText)) parseOwn(sqlText) else delegate.parsePlanWithParameters(sqlText, context)

  override def parseExpression(sqlText: String): Expression = delegate.parseExpression(sqlText)
  override def parseTableIdentifier(sqlText: String): TableIdentifier = delegate.parseTableIdentifier(sqlText)
  override def parseFunctionIdentifier(sqlText: String): FunctionIdentifier =
    delegate.parseFunctionIdentifier(sqlText)
  override def parseMultipartIdentifier(sqlText: String): Seq[String] = delegate.parseMultipartIdentifier(sqlText)
  override def parseQuery(sqlText: String): LogicalPlan = delegate.parseQuery(sqlText)
  override def parseRoutineParam(sqlText: String): StructType = delegate.parseRoutineParam(sqlText)
  override def parseTableSchema(sqlText: String): StructType = delegate.parseTableSchema(sqlText)
  override def parseDataType(sqlText: String): DataType = delegate.parseDataType(sqlText)

  private def parseOwn(sqlText: String): LogicalPlan = {
    val lexer = new DeltaLifecycleSqlBaseLexer(CharStreams.fromString(sqlText))
    lexer.removeErrorListeners()
    val parser = new DeltaLifecycleSqlBaseParser(new CommonTokenStream(lexer))
    parser.removeErrorListeners()
    parser.addErrorListener(new ThrowingErrorListener(sqlText))
    parser.getInterpreter.setPredictionMode(PredictionMode.LL)
    astBuilder.visitSingleStatement(parser.singleStatement())
  }
}

object DeltaLifecycleSqlParser {
  import DeltaLifecycleSqlBaseLexer._

  /** Leading keywords that make a statement this project's. */
  val OwnStatementPrefixes: Seq[Seq[Int]] = Seq(
    Seq(DESCRIBE, PROTOCOL, HISTORY))

  private val longestPrefix = OwnStatementPrefixes.map(_.length).max

  def isOwnStatement(sqlText: String): Boolean = {
    val lexer = new DeltaLifecycleSqlBaseLexer(CharStreams.fromString(sqlText))
    lexer.removeErrorListeners()
    val leading = lexer.getAllTokens.asScala.iterator
      .filter(_.getChannel == Token.DEFAULT_CHANNEL)
      .take(longestPrefix).map(_.getType).toSeq
    OwnStatementPrefixes.exists(prefix => leading.startsWith(prefix))
  }

  private class ThrowingErrorListener(sqlText: String) extends BaseErrorListener {
    override def syntaxError(
        recognizer: Recognizer[_, _],
        offendingSymbol: Any,
        line: Int,
        charPositionInLine: Int,
        msg: String,
        e: RecognitionException): Unit = {
      val origin = Origin(line = Some(line), startPosition = Some(charPositionInLine), sqlText = Some(sqlText))
      throw new ParseException(Some(sqlText), origin, "PARSE_SYNTAX_ERROR",
        Map("error" -> describe(offendingSymbol), "hint" -> s": $msg"))
    }

    private def describe(symbol: Any): String = symbol match {
      case t: Token if t.getType == Token.EOF => "end of input"
      case t: Token => s"'${t.getText}'"
      case _ => "input"
    }
  }
}
