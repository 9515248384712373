package io.github.deltalifecycle.sql.parser

import io.github.deltalifecycle.shims.{DelegatingParser, ParseErrors}
import org.antlr.v4.runtime._
import org.antlr.v4.runtime.atn.PredictionMode
import org.apache.spark.sql.catalyst.parser.ParserInterface
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.catalyst.trees.Origin

/**
 * Parses this project's statements and hands every other statement, untouched, to the parser it
 * wraps. A statement is ours when its leading keywords are one of
 * [[DeltaLifecycleSqlParser.OwnStatementPrefixes]], or when it is `ALTER TABLE <name>` followed by
 * one of [[DeltaLifecycleSqlParser.OwnAlterTableActions]]; from then on a syntax error is reported
 * as ours rather than passed on, so `DESCRIBE PROTOCOL HISTORY` without a table fails with a parse
 * error instead of being read by Spark as some other DESCRIBE. The methods every Spark line has are
 * delegated in [[DelegatingParser]].
 */
class DeltaLifecycleSqlParser(session: ParserInterface) extends DelegatingParser(session) {
  import DeltaLifecycleSqlParser._

  private val astBuilder = new DeltaLifecycleSqlAstBuilder

  override protected def planOf(sqlText: String, delegated: => LogicalPlan): LogicalPlan =
    if (isOwnStatement(sqlText)) parseOwn(sqlText) else delegated

  private def parseOwn(sqlText: String): LogicalPlan = {
    val lexer = new DeltaLifecycleSqlBaseLexer(new UpperCaseCharStream(sqlText))
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
    Seq(DESCRIBE, PROTOCOL, HISTORY)
  )

  /**
   * Leading keywords that make a statement this project's only when a table name follows them:
   * `DESCRIBE redirect` alone is Spark's DESCRIBE of a table named redirect, and `DESCRIBE log
   * files.size` Spark's DESCRIBE of the nested column `files.size` of a table named log.
   */
  val OwnStatementPrefixesWithOperand: Seq[Seq[Int]] = Seq(
    Seq(DESCRIBE, REDIRECT),
    Seq(DESCRIBE, COMPATIBILITY),
    Seq(DESCRIBE, LOG, FILES)
  )

  /** The keywords after `ALTER TABLE <name>` that make an ALTER TABLE statement this project's. */
  val OwnAlterTableActions: Seq[Seq[Int]] = Seq(
    Seq(COMPACT, LOG),
    Seq(CLEAN, LOG),
    Seq(DROP, FEATURE),
    Seq(DROP, FEATURES, FOR, CLIENT),
    Seq(SET, REDIRECT),
    Seq(UNSET, REDIRECT),
    Seq(CHECKPOINT)
  )

  private val lookahead = 64

  def isOwnStatement(sqlText: String): Boolean = {
    val lexer = new DeltaLifecycleSqlBaseLexer(new UpperCaseCharStream(sqlText))
    lexer.removeErrorListeners()
    val leading = Iterator.continually(lexer.nextToken())
      .takeWhile(_.getType != Token.EOF)
      .filter(_.getChannel == Token.DEFAULT_CHANNEL)
      .take(lookahead).map(_.getType).toVector
    OwnStatementPrefixes.exists(prefix => leading.startsWith(prefix)) ||
    OwnStatementPrefixesWithOperand.exists(prefix =>
      leading.startsWith(prefix) && leading.length > prefix.length && leading(prefix.length) != DOT
    ) ||
    isOwnAlterTable(leading)
  }

  // ALTER TABLE, then a name of one or more dot-separated parts (any token may be a part:
  // keywords are valid names), then the action keywords.
  private def isOwnAlterTable(tokens: Vector[Int]): Boolean =
    tokens.startsWith(Seq(ALTER, TABLE)) && tokens.length > 2 && {
      var i = 3
      while (i + 1 < tokens.length && tokens(i) == DOT) i += 2
      val rest = tokens.drop(i)
      OwnAlterTableActions.exists(action => rest.startsWith(action))
    }

  private class ThrowingErrorListener(sqlText: String) extends BaseErrorListener {
    override def syntaxError(
        recognizer: Recognizer[_, _],
        offendingSymbol: Any,
        line: Int,
        charPositionInLine: Int,
        msg: String,
        e: RecognitionException
    ): Unit = {
      val origin =
        Origin(line = Some(line), startPosition = Some(charPositionInLine), sqlText = Some(sqlText))
      throw ParseErrors.syntaxError(
        Some(sqlText),
        origin,
        Map("error" -> describe(offendingSymbol), "hint" -> s": $msg")
      )
    }

    private def describe(symbol: Any): String = symbol match {
      case t: Token if t.getType == Token.EOF => "end of input"
      case t: Token => s"'${t.getText}'"
      case _ => "input"
    }
  }
}
