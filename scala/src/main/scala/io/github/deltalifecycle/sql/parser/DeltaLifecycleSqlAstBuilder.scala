package io.github.deltalifecycle.sql.parser

import scala.jdk.CollectionConverters._

import io.github.deltalifecycle.features.redirect.{NoRedirectRule, RedirectMode}
import io.github.deltalifecycle.shims.ParseErrors
import io.github.deltalifecycle.sql.plans._
import org.antlr.v4.runtime.Token
import org.apache.spark.sql.catalyst.trees.Origin
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan

import DeltaLifecycleSqlBaseParser._

/** Turns parse trees of this project's grammar into its logical plans. */
class DeltaLifecycleSqlAstBuilder extends DeltaLifecycleSqlBaseBaseVisitor[AnyRef] {

  override def visitSingleStatement(ctx: SingleStatementContext): LogicalPlan =
    visit(ctx.statement()).asInstanceOf[LogicalPlan]

  override def visitDescribeProtocolHistory(ctx: DescribeProtocolHistoryContext): LogicalPlan =
    DescribeProtocolHistoryStatement(tableName(ctx.table))

  override def visitDescribeCompatibility(ctx: DescribeCompatibilityContext): LogicalPlan =
    DescribeCompatibilityStatement(
      tableName(ctx.table),
      Option(ctx.version).map(number),
      Option(ctx.client).map(string)
    )

  override def visitDropFeaturesForClient(ctx: DropFeaturesForClientContext): LogicalPlan =
    DropFeaturesForClientStatement(
      tableName(ctx.table),
      string(ctx.client),
      forWrites = ctx.WRITES() != null,
      truncateHistory = ctx.TRUNCATE() != null,
      dryRun = ctx.DRY() != null
    )

  override def visitCompactLog(ctx: CompactLogContext): LogicalPlan = {
    val range = Option(ctx.fromVersion).map(from => (number(from), number(ctx.toVersion)))
    CompactLogStatement(tableName(ctx.table), range)
  }

  override def visitCheckpoint(ctx: CheckpointContext): LogicalPlan =
    CheckpointStatement(tableName(ctx.table), dryRun = ctx.DRY() != null)

  override def visitCleanLog(ctx: CleanLogContext): LogicalPlan =
    CleanLogStatement(
      tableName(ctx.table),
      Option(ctx.retainHours).map(number),
      dryRun = ctx.DRY() != null
    )

  override def visitDropFeature(ctx: DropFeatureContext): LogicalPlan =
    DropFeatureStatement(
      tableName(ctx.table),
      featureName(ctx.feature),
      truncateHistory = ctx.TRUNCATE() != null,
      dryRun = ctx.DRY() != null
    )

  override def visitSetRedirect(ctx: SetRedirectContext): LogicalPlan = {
    val mode = Option(ctx.kind).map(m =>
      if (m.READER() != null) RedirectMode.ReaderWriter else RedirectMode.WriterOnly
    )
      .getOrElse(RedirectMode.ReaderWriter)
    val rules = ctx.rules.asScala.map { r =>
      NoRedirectRule(string(r.app), r.operations.asScala.map(identifier(_).toUpperCase).toSeq)
    }.toSeq
    SetRedirectStatement(
      tableName(ctx.table),
      mode,
      Option(ctx.location).map(string),
      Option(ctx.target).map(tableName),
      rules,
      dryRun = ctx.DRY() != null,
      targetLocation = Option(ctx.targetLocation).map(string)
    )
  }

  override def visitUnsetRedirect(ctx: UnsetRedirectContext): LogicalPlan =
    UnsetRedirectStatement(tableName(ctx.table), dryRun = ctx.DRY() != null)

  override def visitDescribeRedirect(ctx: DescribeRedirectContext): LogicalPlan =
    DescribeRedirectStatement(tableName(ctx.table))

  override def visitDescribeLogFiles(ctx: DescribeLogFilesContext): LogicalPlan =
    DescribeLogFilesStatement(tableName(ctx.table))

  private def string(token: Token): String = {
    val quoted = token.getText
    quoted.substring(1, quoted.length - 1).replaceAll("""\\(.)""", "$1")
  }

  private def featureName(ctx: FeatureNameContext): String =
    if (ctx.STRING() != null) string(ctx.STRING().getSymbol)
    else ctx.identifier().asScala.map(identifier).mkString("-")

  /**
   * A non-negative integer literal; one that does not fit a long is a parse error, not an overflow.
   */
  private def number(token: Token): Long = token.getText.toLongOption.getOrElse {
    val origin =
      Origin(line = Some(token.getLine), startPosition = Some(token.getCharPositionInLine))
    throw ParseErrors.syntaxError(
      None,
      origin,
      Map("error" -> s"'${token.getText}'", "hint" -> ": the number is too large")
    )
  }

  private def tableName(ctx: TableNameContext): Seq[String] =
    ctx.parts.asScala.map(identifier).toSeq

  private def identifier(ctx: IdentifierContext): String = {
    val text = ctx.getText
    if (ctx.BACKQUOTED_IDENTIFIER() != null) text.substring(1, text.length - 1).replace("``", "`")
    else text
  }
}
