package io.github.deltalifecycle.features.redirect

/**
 * Where SET REDIRECT points: a location, or a table in the session catalog or in Unity Catalog
 * (registered by the command).
 */
sealed trait RedirectTarget
object RedirectTarget {
  final case class ToLocation(uri: String) extends RedirectTarget

  /**
   * `qualifiedName` is db.table as SQL text, a part quoted when it must be (`` `my.db`.t ``), or
   * catalog.schema.table for a table of Unity Catalog (`unityCatalog`); `location` is where the new
   * catalog table's files go; `exists` says the name is taken already (by another table).
   */
  final case class ToTable(
      qualifiedName: String,
      location: String,
      exists: Boolean,
      unityCatalog: Boolean = false
  ) extends RedirectTarget
}
