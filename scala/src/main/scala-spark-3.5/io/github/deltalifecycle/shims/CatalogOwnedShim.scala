package io.github.deltalifecycle.shims

/** delta-spark 3.3 has no catalog-managed tables: nothing to register. */
object CatalogOwnedShim {
  def registerUnityCatalogCommits(catalog: String, ownOptions: Set[String]): Unit = ()
}
