package io.github.deltalifecycle.sql.commands

import io.github.deltalifecycle.core.{LifecycleErrors, TableName}
import io.github.deltalifecycle.features.redirect.{
  NoRedirectRule,
  RedirectLookup,
  RedirectMode,
  RedirectTarget,
  SetRedirect
}
import io.github.deltalifecycle.sql.resolution.LifecycleTableRef
import io.github.deltalifecycle.sql.routing.RedirectSession
import org.apache.spark.sql.{Row, SparkSession}
import org.apache.spark.sql.catalyst.TableIdentifier
import org.apache.spark.sql.deltalifecycle.SparkInternals

/**
 * Redirects a table to a location or a new catalog table (the RFC's enable procedure), or (DRY RUN)
 * says what that would do.
 */
case class SetRedirectCommand(
    table: LifecycleTableRef,
    mode: RedirectMode,
    location: Option[String],
    targetTable: Option[Seq[String]],
    rules: Seq[NoRedirectRule],
    override val dryRun: Boolean = false
) extends RedirectCommand {

  override def run(spark: SparkSession): Seq[Row] = {
    val target = (location, targetTable) match {
      case (Some(uri), _) =>
        if (uri.trim.isEmpty)
          throw LifecycleErrors.emptyRedirectLocation(table.displayName)
        RedirectTarget.ToLocation(uri)
      case (_, Some(name)) => tableTarget(spark, name)
      case _ => throw new IllegalStateException("the parser requires a location or a table")
    }
    if (dryRun) {
      val ctx = RedirectSession.context(spark)
      planRow(new SetRedirect(spark, ctx, table.path, table.displayName).plan(target, mode, rules))
    } else changing(spark, table) { ctx =>
      new SetRedirect(spark, ctx, table.path, table.displayName).run(target, mode, rules)
    }
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
      case _ => throw LifecycleErrors.notSessionCatalogTable(TableName.sql(name))
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
