package io.github.deltalifecycle.sql.commands

import scala.util.Try

import io.github.deltalifecycle.core.{DeltaLifecycleException, ErrorConditions, TableName}
import io.github.deltalifecycle.features.redirect.{
  NoRedirectRule,
  RedirectLookup,
  RedirectMode,
  RedirectRefusal,
  RedirectTarget,
  SetRedirect
}
import io.github.deltalifecycle.sql.resolution.{LifecycleTableRef, TableStorage}
import io.github.deltalifecycle.sql.routing.{CatalogTables, RedirectSession}
import io.github.deltalifecycle.sql.unitycatalog.{PathOperation, UnityCatalogs}
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
    override val dryRun: Boolean = false,
    targetLocation: Option[String] = None
) extends RedirectCommand {

  override def run(spark: SparkSession): Seq[Row] = {
    val target = (location, targetTable) match {
      case (Some(uri), _) =>
        if (uri.trim.isEmpty)
          throw ErrorConditions.InvalidArgument.emptyRedirectLocation(table.displayName)
        RedirectTarget.ToLocation(uri)
      case (_, Some(name)) => tableTarget(spark, name)
      case _ => throw new IllegalStateException("the parser requires a location or a table")
    }
    // The destination is opened for what the run does there: a new Unity Catalog table's location
    // with the credentials to create a table at it, any other with those to write.
    val elsewhere = target match {
      case t: RedirectTarget.ToTable if t.unityCatalog => PathOperation.CreateTable
      case _ => PathOperation.ReadWrite
    }
    if (dryRun) {
      val ctx = RedirectSession.context(spark, table, elsewhere, Operation)
      val plan =
        new SetRedirect(spark, ctx, table.path, table.displayName).plan(target, mode, rules)
      val refused = Seq(
        Try(CatalogTables.requireRouted(spark, table, Operation)),
        Try(TableStorage.forWriting(spark, table, Operation)),
        Try(requireCreatable(spark, target))
      ).flatMap(_.failed.toOption).collect { case e: DeltaLifecycleException =>
        RedirectRefusal.of(e)
      }
      planRow(plan.copy(refusals = refused ++ plan.refusals))
    } else {
      requireCreatable(spark, target)
      changing(spark, table, Operation, elsewhere) { ctx =>
        CatalogTables.requireRouted(spark, table, Operation)
        new SetRedirect(spark, ctx, table.path, table.displayName).run(target, mode, rules)
      }
    }
  }

  /**
   * Refuses a Unity Catalog table target that this principal may not create, as far as the catalog
   * lists its grants, before anything is written (registering it is the run's last step).
   */
  private def requireCreatable(spark: SparkSession, target: RedirectTarget): Unit = target match {
    case RedirectTarget.ToTable(name, _, false, true) =>
      val Seq(catalog, schema, _) = TableName.parts(name)
      UnityCatalogs.client(spark, catalog).filter(_.mayCreateTableIn(schema).contains(false))
        .foreach { uc =>
          throw ErrorConditions.CatalogPermissionDenied.schemaPrivilege(
            operation = Operation,
            table = table.displayName,
            target = name,
            schema = TableName.sql(Seq(catalog, schema)),
            catalog = uc.catalogName,
            privilege = "CREATE TABLE"
          )
        }
    case _ =>
  }

  private val Operation = "redirect"

  /**
   * A catalog table: where its files go (LOCATION, else where its catalog puts a new table), and
   * whether the name is taken already (then it must be ours, from a resumed run). A table of the
   * session catalog, or of a Unity Catalog catalog of the session (catalog.schema.table).
   */
  private def tableTarget(spark: SparkSession, name: Seq[String]): RedirectTarget.ToTable =
    name match {
      case Seq(catalog, schema, t)
          if !catalog.equalsIgnoreCase(SparkInternals.SessionCatalogName) =>
        val uc = UnityCatalogs.client(spark, catalog).getOrElse(
          throw ErrorConditions.InvalidArgument.notASessionCatalogTable(TableName.sql(name))
        )
        val qualified = TableName.sql(name)
        val registered = uc.table(name.mkString("."))
        val location = targetLocation
          .orElse(registered.flatMap(r => Option(r.get("storage_location")).map(_.asText)))
          .orElse(uc.storageRoot(catalog, schema).map(_.stripSuffix("/") + "/" + t))
          .getOrElse(throw ErrorConditions.InvalidArgument.redirectTargetNeedsLocation(qualified))
        target(spark, qualified, location, registered.isDefined, unityCatalog = true)
      case _ =>
        val ident = name match {
          case Seq(t) =>
            TableIdentifier(t, Some(SparkInternals.currentNamespace(spark).mkString(".")))
          case Seq(db, t) => TableIdentifier(t, Some(db))
          case Seq(_, db, t) => TableIdentifier(t, Some(db))
          case _ =>
            throw ErrorConditions.InvalidArgument.notASessionCatalogTable(TableName.sql(name))
        }
        val qualified = TableName.sql(ident.database.toSeq :+ ident.table)
        val catalog = SparkInternals.sessionCatalog(spark)
        val exists = catalog.tableExists(ident)
        val location = targetLocation.getOrElse(
          if (exists) catalog.getTableMetadata(ident).location.toString
          else catalog.defaultTablePath(ident).toString
        )
        target(spark, qualified, location, exists, unityCatalog = false)
    }

  /**
   * Re-running after a crash finds the table this command registered: it is the redirect target
   * already, so it does not count as taken.
   */
  private def target(
      spark: SparkSession,
      qualified: String,
      location: String,
      exists: Boolean,
      unityCatalog: Boolean
  ): RedirectTarget.ToTable = {
    val ours = exists && RedirectLookup.read(TableStorage.hadoopConf(spark, table), table.path)
      .flatMap(_.config).exists(_.spec.describe.equalsIgnoreCase(qualified))
    RedirectTarget.ToTable(qualified, location, exists && !ours, unityCatalog)
  }
}
