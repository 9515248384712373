package io.github.deltalifecycle.sql.commands

import io.github.deltalifecycle.core.LifecycleErrors
import io.github.deltalifecycle.features.redirect.{
  NoRedirectRule,
  RedirectLookup,
  RedirectMode,
  RedirectResult,
  RedirectTarget,
  SetRedirect,
  UnsetRedirect
}
import io.github.deltalifecycle.core.TableName
import io.github.deltalifecycle.sql.resolution.LifecycleTableRef
import io.github.deltalifecycle.sql.routing.RedirectSession
import io.github.deltalifecycle.sql.plans.RedirectStatus
import org.apache.spark.sql.{Row, SparkSession}
import org.apache.spark.sql.catalyst.TableIdentifier
import org.apache.spark.sql.catalyst.expressions.Attribute
import org.apache.spark.sql.deltalifecycle.SparkInternals
import org.apache.spark.sql.execution.command.LeafRunnableCommand

/** The shared output of the redirect commands. */
trait RedirectCommand extends LeafRunnableCommand {
  override val output: Seq[Attribute] = RedirectStatus.outputAttributes

  protected def row(r: RedirectResult): Seq[Row] = Seq(Row(
    r.table,
    r.state,
    r.mode.map(_.sqlName).orNull,
    r.redirectType.orNull,
    r.destination.orNull,
    r.destinationLocation.orNull,
    r.noRedirectRules.map(_.describe),
    r.version,
    r.filesCopied,
    r.bytesCopied,
    r.commitVersions,
    r.steps
  ))

  /**
   * Forgets the catalog's cached relation of the table. Not `spark.catalog.refreshTable`: it
   * re-resolves the table, which now routes to a destination that has no catalog entry.
   */
  protected def refresh(spark: SparkSession, table: LifecycleTableRef): Unit =
    table.catalogTable.foreach(t => SparkInternals.sessionCatalog(spark).refreshTable(t.identifier))
}

/** Redirects a table to a location or a new catalog table (the RFC's enable procedure). */
case class SetRedirectCommand(
    table: LifecycleTableRef,
    mode: RedirectMode,
    location: Option[String],
    targetTable: Option[Seq[String]],
    rules: Seq[NoRedirectRule]
) extends RedirectCommand {

  override def run(spark: SparkSession): Seq[Row] = {
    val target = (location, targetTable) match {
      case (Some(uri), _) =>
        if (uri.trim.isEmpty)
          throw LifecycleErrors.invalidArgument("SET REDIRECT needs a non-empty location.")
        RedirectTarget.ToLocation(uri)
      case (_, Some(name)) => tableTarget(spark, name)
      case _ => throw new IllegalStateException("the parser requires a location or a table")
    }
    val ctx = RedirectSession.context(spark)
    val result =
      new SetRedirect(spark, ctx, table.path, table.displayName)
        .run(target, mode, rules)
    refresh(spark, table)
    row(result)
  }

  /**
   * A session-catalog table: where its files go, and whether it already exists (then it must be
   * ours from a resumed run).
   */
  private def tableTarget(spark: SparkSession, name: Seq[String]): RedirectTarget.ToTable = {
    val ident = name match {
      case Seq(t) => TableIdentifier(t, Some(SparkInternals.currentNamespace(spark).mkString(".")))
      case Seq(db, t) => TableIdentifier(t, Some(db))
      case Seq(catalog, db, t) if catalog.equalsIgnoreCase("spark_catalog") =>
        TableIdentifier(t, Some(db))
      case _ => throw LifecycleErrors.invalidArgument(
          "SET REDIRECT TO TABLE needs a session catalog table name (db.t), " +
            s"not ${TableName.sql(name)}."
        )
    }
    val qualified = TableName.sql(ident.database.toSeq :+ ident.table)
    val catalog = SparkInternals.sessionCatalog(spark)
    val exists = catalog.tableExists(ident)
    val location =
      if (exists) catalog.getTableMetadata(ident).location.toString
      else catalog.defaultTablePath(ident).toString
    /* Re-running after a crash finds the table this command registered: it is the redirect target
     * already. */
    val ours = exists && RedirectLookup.read(RedirectSession.context(spark).hadoopConf, table.path)
      .flatMap(_.config).exists(_.spec.describe.equalsIgnoreCase(qualified))
    RedirectTarget.ToTable(qualified, location, exists && !ours)
  }
}

/**
 * Removes a table's redirect (the RFC's disable procedure), or cancels an unfinished SET REDIRECT.
 */
case class UnsetRedirectCommand(table: LifecycleTableRef) extends RedirectCommand {
  override def run(spark: SparkSession): Seq[Row] = {
    val result = new UnsetRedirect(
      spark,
      RedirectSession.context(spark),
      table.path,
      table.displayName
    ).run()
    refresh(spark, table)
    row(result)
  }
}

/** The redirect of a table as its log records it (state NORMAL when there is none). */
case class DescribeRedirectCommand(table: LifecycleTableRef) extends RedirectCommand {
  override def run(spark: SparkSession): Seq[Row] = {
    val ctx = RedirectSession.context(spark)
    val info = RedirectLookup.read(ctx.hadoopConf, table.path)
      .getOrElse(throw LifecycleErrors.notADeltaTable(table.path.toString, "there is no Delta log"))
    row(RedirectResult.describe(ctx, table.displayName, info))
  }
}

/**
 * A redirect property set or unset through ALTER TABLE ... TBLPROPERTIES, validated against the
 * RFC's transitions.
 */
case class ChangeRedirectPropertyCommand(
    table: LifecycleTableRef,
    key: String,
    value: Option[String]
) extends RedirectCommand {
  override def run(spark: SparkSession): Seq[Row] = {
    val result = new io.github.deltalifecycle.features.redirect.RedirectPropertyChange(
      spark,
      RedirectSession.context(spark),
      table.path,
      table.displayName
    ).run(key, value)
    refresh(spark, table)
    row(result)
  }
}
