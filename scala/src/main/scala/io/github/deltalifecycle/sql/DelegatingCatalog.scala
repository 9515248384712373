package io.github.deltalifecycle.sql

import java.util

import scala.annotation.nowarn

import io.github.deltalifecycle.shims.CatalogForwarding
import org.apache.spark.sql.connector.catalog._
import org.apache.spark.sql.connector.expressions.Transform
import org.apache.spark.sql.types.StructType

/**
 * A catalog that forwards everything to the catalog it wraps, its delegate, as it is: namespaces,
 * views, creating, staging, dropping and renaming tables. [[RoutingCatalog]] is one, which routes
 * the tables it loads.
 */
@nowarn("cat=deprecation") // it forwards every overload a delegate may implement
abstract class DelegatingCatalog
    extends StagingTableCatalog
    with SupportsNamespaces
    with CatalogForwarding {

  override def defaultNamespace(): Array[String] = delegate.defaultNamespace()

  override def tableExists(ident: Identifier): Boolean = delegate.tableExists(ident)
  override def invalidateTable(ident: Identifier): Unit = delegate.invalidateTable(ident)
  override def listTables(namespace: Array[String]): Array[Identifier] =
    delegate.listTables(namespace)
  override def capabilities(): util.Set[TableCatalogCapability] = delegate.capabilities()
  override def useNullableQuerySchema(): Boolean = delegate.useNullableQuerySchema()

  override def createTable(
      ident: Identifier,
      columns: Array[Column],
      partitions: Array[Transform],
      properties: util.Map[String, String]
  ): Table = delegate.createTable(ident, columns, partitions, properties)

  override def createTable(
      ident: Identifier,
      schema: StructType,
      partitions: Array[Transform],
      properties: util.Map[String, String]
  ): Table = delegate.createTable(ident, schema, partitions, properties)

  override def dropTable(ident: Identifier): Boolean = delegate.dropTable(ident)
  override def purgeTable(ident: Identifier): Boolean = delegate.purgeTable(ident)
  override def renameTable(oldIdent: Identifier, newIdent: Identifier): Unit =
    delegate.renameTable(oldIdent, newIdent)

  // ---- staged creation and replacement (CTAS, REPLACE TABLE): the delegate's ------------------

  override protected def staging: StagingTableCatalog = delegate match {
    case s: StagingTableCatalog => s
    case _ => throw new UnsupportedOperationException(
        s"Catalog ${name()} (${delegate.getClass.getName}) does not stage table creation"
      )
  }

  override def stageCreate(
      ident: Identifier,
      columns: Array[Column],
      partitions: Array[Transform],
      properties: util.Map[String, String]
  ): StagedTable = staging.stageCreate(ident, columns, partitions, properties)

  override def stageCreate(
      ident: Identifier,
      schema: StructType,
      partitions: Array[Transform],
      properties: util.Map[String, String]
  ): StagedTable = staging.stageCreate(ident, schema, partitions, properties)

  override def stageReplace(
      ident: Identifier,
      columns: Array[Column],
      partitions: Array[Transform],
      properties: util.Map[String, String]
  ): StagedTable = staging.stageReplace(ident, columns, partitions, properties)

  override def stageReplace(
      ident: Identifier,
      schema: StructType,
      partitions: Array[Transform],
      properties: util.Map[String, String]
  ): StagedTable = staging.stageReplace(ident, schema, partitions, properties)

  override def stageCreateOrReplace(
      ident: Identifier,
      columns: Array[Column],
      partitions: Array[Transform],
      properties: util.Map[String, String]
  ): StagedTable = staging.stageCreateOrReplace(ident, columns, partitions, properties)

  override def stageCreateOrReplace(
      ident: Identifier,
      schema: StructType,
      partitions: Array[Transform],
      properties: util.Map[String, String]
  ): StagedTable = staging.stageCreateOrReplace(ident, schema, partitions, properties)

  // ---- namespaces: the delegate's -------------------------------------------------------------

  private def namespaces: SupportsNamespaces = delegate match {
    case n: SupportsNamespaces => n
    case _ => throw new UnsupportedOperationException(
        s"Catalog ${name()} (${delegate.getClass.getName}) has no namespaces"
      )
  }

  override def listNamespaces(): Array[Array[String]] = namespaces.listNamespaces()
  override def listNamespaces(namespace: Array[String]): Array[Array[String]] =
    namespaces.listNamespaces(namespace)
  override def namespaceExists(namespace: Array[String]): Boolean =
    namespaces.namespaceExists(namespace)
  override def loadNamespaceMetadata(namespace: Array[String]): util.Map[String, String] =
    namespaces.loadNamespaceMetadata(namespace)
  override def createNamespace(namespace: Array[String], metadata: util.Map[String, String]): Unit =
    namespaces.createNamespace(namespace, metadata)
  override def alterNamespace(namespace: Array[String], changes: NamespaceChange*): Unit =
    namespaces.alterNamespace(namespace, changes: _*)
  override def dropNamespace(namespace: Array[String], cascade: Boolean): Boolean =
    namespaces.dropNamespace(namespace, cascade)
}
