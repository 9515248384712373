package io.github.deltalifecycle.sql

import scala.jdk.CollectionConverters._

import io.github.deltalifecycle.features.redirect.Access
import io.github.deltalifecycle.sql.routing.CatalogTables
import org.apache.spark.sql.connector.catalog.{Identifier, Table, TableChange, TableWritePrivilege}
import org.apache.spark.sql.delta.catalog.DeltaCatalog

/**
 * Delta's session catalog, made redirect-aware: every table it loads, by name or as
 * ``delta.`path` ``, for reading or writing, goes where the table's redirect says (see
 * [[CatalogTables]]). This is where SQL reads and writes, time travel (delta-spark's catalog
 * applies it to the table `loadTable(ident)` gives), DESCRIBE DETAIL and `saveAsTable` find their
 * table. Set it with
 * `spark.sql.catalog.spark_catalog=io.github.deltalifecycle.sql.LifecycleCatalog`; every other
 * catalog is wrapped by [[RoutingCatalog]].
 */
class LifecycleCatalog extends DeltaCatalog {

  override def loadTable(ident: Identifier): Table =
    CatalogTables.routed(name(), ident, super.loadTable(ident), Access.Read)

  /* delta-spark's catalog does not distinguish writes; Spark passes the privileges of a write
   * target here. */
  override def loadTable(
      ident: Identifier,
      writePrivileges: java.util.Set[TableWritePrivilege]
  ): Table = CatalogTables.routed(
    name(),
    ident,
    super.loadTable(ident),
    Access.Write(writePrivileges.asScala.map(_.toString).toSet)
  )

  /**
   * delta-spark's alterTable loads the table it changes through [[loadTable]], before and after.
   */
  override def alterTable(ident: Identifier, changes: TableChange*): Table =
    CatalogTables.altering(super.alterTable(ident, changes: _*))
}
