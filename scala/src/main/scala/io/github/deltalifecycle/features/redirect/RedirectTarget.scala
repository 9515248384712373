package io.github.deltalifecycle.features.redirect

/**
 * Where SET REDIRECT points: a location, or a table in the session catalog (created by the
 * command).
 */
sealed trait RedirectTarget
object RedirectTarget {
  final case class ToLocation(uri: String) extends RedirectTarget

  /**
   * `qualifiedName` is db.table as SQL text, a part quoted when it must be (`` `my.db`.t ``);
   * `location` is where the new catalog table's files go.
   */
  final case class ToTable(qualifiedName: String, location: String, exists: Boolean)
      extends RedirectTarget
}
