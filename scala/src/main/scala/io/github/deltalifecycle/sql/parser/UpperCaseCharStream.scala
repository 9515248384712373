package io.github.deltalifecycle.sql.parser

import org.antlr.v4.runtime.{CharStream, CharStreams, IntStream}
import org.antlr.v4.runtime.misc.Interval

/**
 * The statement text as the lexer sees it: every character upper-cased for matching, the original
 * text for token values (names, strings). Keywords are case-insensitive this way on every Spark
 * line: the grammar option `caseInsensitive` needs ANTLR 4.10, and Spark 3.5 ships ANTLR 4.9.3.
 */
private[parser] final class UpperCaseCharStream(text: String) extends CharStream {
  private val wrapped = CharStreams.fromString(text)

  override def LA(i: Int): Int = wrapped.LA(i) match {
    case c if c == IntStream.EOF || c == 0 => c
    case c => Character.toUpperCase(c)
  }
  override def consume(): Unit = wrapped.consume()
  override def mark(): Int = wrapped.mark()
  override def release(marker: Int): Unit = wrapped.release(marker)
  override def index(): Int = wrapped.index()
  override def seek(index: Int): Unit = wrapped.seek(index)
  override def size(): Int = wrapped.size()
  override def getSourceName: String = wrapped.getSourceName
  override def getText(interval: Interval): String = wrapped.getText(interval)
}
