package io.github.deltalifecycle.shims

import org.apache.spark.sql.catalyst.analysis.NoSuchViewException
import org.apache.spark.sql.connector.catalog.{
  Changelog,
  ChangelogContext,
  Identifier,
  Relation,
  RelationCatalog,
  StagedTable,
  StagingTableCatalog,
  Table,
  TableCatalog,
  TableInfo,
  TableSummary,
  View,
  ViewCatalog
}
import org.apache.spark.sql.util.CaseInsensitiveStringMap

/**
 * What a catalog wrapping another forwards beyond the interfaces every Spark line shares. Spark 4.2
 * loads the relations of a [[RelationCatalog]] (Unity Catalog's connector is one) through
 * `loadRelation`, tables and views alike: a table is routed, a view is the delegate's. A delegate
 * without views has none here either.
 */
trait CatalogForwarding extends StagingTableCatalog with RelationCatalog {

  /** The catalog wrapped. */
  def delegate: TableCatalog

  /** `table`, which the delegate loaded under `ident`, where its redirect sends a read. */
  protected def routed(ident: Identifier, table: Table): Table

  /** The delegate, to stage a creation or replacement (refused when it cannot). */
  protected def staging: StagingTableCatalog

  private def views: Option[ViewCatalog] = delegate match {
    case v: ViewCatalog => Some(v)
    case _ => None
  }

  override def loadRelation(ident: Identifier): Relation = delegate match {
    case r: RelationCatalog => r.loadRelation(ident) match {
        case t: Table => routed(ident, t)
        case other => other
      }
    case _ => loadTable(ident)
  }

  override def listRelationSummaries(namespace: Array[String]): Array[TableSummary] =
    delegate match {
      case r: RelationCatalog => r.listRelationSummaries(namespace)
      case _ => delegate.listTableSummaries(namespace)
    }

  override def listTableSummaries(namespace: Array[String]): Array[TableSummary] =
    delegate.listTableSummaries(namespace)

  override def tableExists(ident: Identifier): Boolean = delegate.tableExists(ident)

  override def loadChangelog(
      ident: Identifier,
      context: ChangelogContext,
      options: CaseInsensitiveStringMap
  ): Changelog = delegate.loadChangelog(ident, context, options)

  override def createTableLike(ident: Identifier, info: TableInfo, source: Table): Table =
    delegate.createTableLike(ident, info, source)

  // Spark 4.2 creates and stages tables with a TableInfo; a delegate may implement only these.
  override def createTable(ident: Identifier, info: TableInfo): Table =
    delegate.createTable(ident, info)

  override def stageCreate(ident: Identifier, info: TableInfo): StagedTable =
    staging.stageCreate(ident, info)

  override def stageReplace(ident: Identifier, info: TableInfo): StagedTable =
    staging.stageReplace(ident, info)

  override def stageCreateOrReplace(ident: Identifier, info: TableInfo): StagedTable =
    staging.stageCreateOrReplace(ident, info)

  override def listViews(namespace: Array[String]): Array[Identifier] =
    views.map(_.listViews(namespace)).getOrElse(Array.empty)

  override def loadView(ident: Identifier): View =
    views.map(_.loadView(ident)).getOrElse(throw new NoSuchViewException(ident))

  override def viewExists(ident: Identifier): Boolean = views.exists(_.viewExists(ident))

  override def invalidateView(ident: Identifier): Unit = views.foreach(_.invalidateView(ident))

  override def createView(ident: Identifier, view: View): View =
    viewsOrRefuse.createView(ident, view)

  override def replaceView(ident: Identifier, view: View): View =
    viewsOrRefuse.replaceView(ident, view)

  override def createOrReplaceView(ident: Identifier, view: View): View =
    viewsOrRefuse.createOrReplaceView(ident, view)

  override def dropView(ident: Identifier): Boolean = views.exists(_.dropView(ident))

  override def renameView(oldIdent: Identifier, newIdent: Identifier): Unit =
    viewsOrRefuse.renameView(oldIdent, newIdent)

  private def viewsOrRefuse: ViewCatalog = views.getOrElse(
    throw new UnsupportedOperationException(
      s"Catalog ${name()} (${delegate.getClass.getName}) has no views"
    )
  )

}
