package io.github.deltalifecycle.features.redirect

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

/** Where an access to a table goes, per the RFC's Query Redirection Flow. */
sealed trait Route {

  /** The location the access goes to instead of the table's own, if it is routed. */
  def destinationPath: Option[Path] = this match {
    case Route.Direct => None
    case Route.Destination(dest) => Some(dest)
    case Route.DestinationTable(_, dest) => Some(dest)
  }
}

object Route {

  /** The table itself, at its latest version (no redirect, or one that keeps this access here). */
  case object Direct extends Route

  /** The redirect destination at a location. */
  final case class Destination(path: Path) extends Route

  /**
   * The redirect destination registered in a catalog under `name`: a session catalog name, or one
   * with its catalog in front (a Unity Catalog table).
   */
  final case class DestinationTable(name: String, path: Path) extends Route
}

/** Reading, or writing with the named operations (INSERT, UPDATE, DELETE, WRITE, ...). */
sealed trait Access
object Access {
  case object Read extends Access
  final case class Write(operations: Set[String]) extends Access
}

/** A Unity Catalog table as a session's catalog finds it now: its current name and location. */
final case class FoundTable(name: Option[String], location: Path)

/** What Unity Catalog says of a table registered there. */
final case class UnityCatalogTableInfo(tableId: String, metastoreId: Option[String], location: Path)

/**
 * How the session reaches Unity Catalog: the catalogs it configures know the servers. Routing finds
 * a redirect's destination by the id its spec records; SET REDIRECT reads the id of the table it
 * registered.
 */
trait UnityCatalogAccess {

  /** Where the table `spec` names is now, if a catalog of the session serves it. */
  def find(spec: RedirectSpec.UnityCatalogTable): Option[FoundTable]

  /** The table registered under `name` (`catalog.schema.table`), if there is one. */
  def describe(name: String): Option[UnityCatalogTableInfo]
}

object UnityCatalogAccess {

  /** A session that reaches no Unity Catalog. */
  val none: UnityCatalogAccess = new UnityCatalogAccess {
    def find(spec: RedirectSpec.UnityCatalogTable): Option[FoundTable] = None
    def describe(name: String): Option[UnityCatalogTableInfo] = None
  }
}

/**
 * How routing and the redirect procedures open a location's storage: `conf(path)` is the Hadoop
 * configuration of the files at or under `path`. A table governed by a catalog opens with what the
 * catalog vends for it, and a location that is no table's (a destination) with what it vends for
 * that path; anywhere else one configuration serves every location.
 */
trait StorageAccess {
  def conf(path: Path): Configuration

  /**
   * What `conf(path)` adds to the session's configuration: the settings a Spark read of files at or
   * under `path` takes as its options.
   */
  def options(path: Path): Map[String, String]

  /** The configuration that qualifies a location's name; it opens no file there. */
  def names: Configuration
}

object StorageAccess {

  /** One configuration, the session's, for every location. */
  def uniform(hadoopConf: Configuration): StorageAccess = new StorageAccess {
    def conf(path: Path): Configuration = hadoopConf
    def options(path: Path): Map[String, String] = Map.empty
    def names: Configuration = hadoopConf
  }
}

/**
 * Session facts routing depends on: how to open each location's storage, the application name
 * (NoRedirectRules), the location prefixes a redirect may point to (empty: any) and the setting
 * they come from (for errors), how to find a session catalog table's location, and how to reach
 * Unity Catalog.
 */
final case class RoutingContext(
    storage: StorageAccess,
    appName: String,
    allowedPrefixes: Seq[String],
    allowedPrefixesSetting: String,
    catalogTableLocation: String => Option[Path],
    unityCatalog: UnityCatalogAccess = UnityCatalogAccess.none
) {

  /** The Hadoop configuration of the files at or under `path`. */
  def hadoopConf(path: Path): Configuration = storage.conf(path)
}

/**
 * A streaming write that waits: the table's redirect is `state` (ENABLE- or
 * DROP-REDIRECT-IN-PROGRESS), which takes no writes, and writes go to `next` once it ends.
 */
final case class Wait(state: RedirectState, next: Path)
