package io.github.deltalifecycle.sql.parser

import scala.jdk.CollectionConverters._

import io.github.deltalifecycle.sql.plans.DescribeProtocolHistory
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan

import DeltaLifecycleSqlBaseParser._

/** Turns parse trees of this project's grammar into its logical plans. */
class DeltaLifecycleSqlAstBuilder extends DeltaLifecycleSqlBaseBaseVisitor[AnyRef] {

  override def visitSingleStatement(ctx: SingleStatementContext): LogicalPlan =
    visit(ctx.statement()).asInstanceOf[LogicalPlan]

  override def visitDescribeProtocolHistory(ctx: DescribeProtocolHistoryContext): LogicalPlan =
    DescribeProtocolHistory(tableName(ctx.table))

  private def tableName(ctx: TableNameContext): Seq[String] = ctx.parts.asScala.map(identifier).toSeq

  private def identifier(ctx: IdentifierContext): String = {
    val text = ctx.getText
    if (ctx.BACKQUOTED_IDENTIFIER() != null) text.substring(1, text.length - 1).replace("``", "`") else text
  }
}
