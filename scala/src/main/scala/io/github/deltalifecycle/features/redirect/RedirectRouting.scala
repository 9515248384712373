package io.github.deltalifecycle.features.redirect

import io.github.deltalifecycle.core.Locations
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

/** Where an access to a table goes, per the RFC's Query Redirection Flow. */
sealed trait Route

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

/** Decides the route of one access; never reads data, only logs (through [[RedirectLookup]]). */
object RedirectRouting {

  /** Longer chains are reported as chains before they are followed further. */
  private val MaxChainReport = 8

  def route(ctx: RoutingContext, path: Path, access: Access, what: String): Route =
    RedirectLookup.lookup(ctx.hadoopConf(path), path) match {
      case None => Route.Direct
      case Some(info) => route(ctx, info, access, what)
    }

  def route(ctx: RoutingContext, info: RedirectInfo, access: Access, what: String): Route =
    info.config match {
      case None => Route.Direct
      case Some(c) if c.isDestinationMarker =>
        // A destination whose redirect is being (or was) dropped: its own rows, read-only.
        access match {
          case Access.Read => Route.Direct
          case Access.Write(_) =>
            throw RedirectErrors.redirectDestinationReadOnly(what, c.spec.describe, "write to")
        }
      case Some(c) =>
        // The Table Redirection RFC: NoRedirectRules keep an application on the source, but
        // the IN-PROGRESS states block every write, a rule's included.
        val keepOnSource = (c.ruleFor(ctx.appName), access) match {
          case (Some(_), Access.Read) => true
          case (Some(r), Access.Write(ops)) =>
            c.state == RedirectState.Ready && ops.nonEmpty && ops.forall(r.allows)
          case _ => false
        }
        val table = info.path.toString
        if (keepOnSource) {
          return sourceRoute(c, RedirectErrors.readerWriterSourceKeptByRules(table, ctx.appName))
        }
        (c.state, access) match {
          case (RedirectState.EnableInProgress, Access.Read) =>
            sourceRoute(c, RedirectErrors.readerWriterSourceBeingEnabled(table))
          case (RedirectState.Ready, _) | (RedirectState.DropInProgress, Access.Read) =>
            destination(ctx, info, c)
          case (state, Access.Write(ops)) =>
            throw RedirectErrors.redirectWriteRefused(what, state.name, describe(ops))
        }
    }

  /**
   * The source itself. A writer-only source is what delta-spark reads; a source whose protocol
   * names redirectReaderWriter it cannot read or write at all, so the access is refused with
   * `refused` (which says why it stays on the source) rather than sent into delta-spark's error.
   */
  private def sourceRoute(c: RedirectConfig, refused: => Throwable): Route =
    if (!c.mode.readerWriter) Route.Direct
    else throw refused

  /** The destination, after checking it is allowed and is not itself redirected elsewhere. */
  def destination(ctx: RoutingContext, info: RedirectInfo, c: RedirectConfig): Route = {
    val route = destinationOf(ctx, info.path.toString, c.spec)
    val destPath = SourceOrDestination.path(route)
    checkAllowed(ctx, destPath.toString)
    checkNotChained(ctx, info.path, destPath)
    route
  }

  /** Where `source`'s redirect `c` points, checked as [[destination]] checks it. */
  def checkedDestinationPath(ctx: RoutingContext, source: Path, c: RedirectConfig): Path = {
    val destPath = destinationPath(ctx, source.toString, c.spec)
    checkAllowed(ctx, destPath.toString)
    checkNotChained(ctx, source, destPath)
    destPath
  }

  /**
   * Where `spec` points: its location, or the catalog table's current location (else the one
   * recorded when the redirect was set). `where` names the redirected table in errors.
   */
  def destinationPath(ctx: RoutingContext, where: String, spec: RedirectSpec): Path =
    SourceOrDestination.path(destinationOf(ctx, where, spec))

  /**
   * The route to where `spec` points, unchecked: a location, or a catalog table by the name it has
   * now (a Unity Catalog table found by its id; at the location recorded when the redirect was set
   * if no catalog of the session serves it).
   */
  def destinationOf(ctx: RoutingContext, where: String, spec: RedirectSpec): Route =
    spec match {
      case RedirectSpec.Location(uri) =>
        Route.Destination(Locations.parse(uri)(RedirectConfigErrors.redirectLocationInvalid(
          where,
          uri,
          _
        )))
      case RedirectSpec.Table(name, recorded) =>
        val path = ctx.catalogTableLocation(name).orElse(recorded.map(new Path(_))).getOrElse(
          throw RedirectConfigErrors.redirectDestinationTableMissing(where, name)
        )
        Route.DestinationTable(name, path)
      case u: RedirectSpec.UnityCatalogTable =>
        val found = if (u.tableId.isDefined) ctx.unityCatalog.find(u) else None
        found match {
          case Some(FoundTable(Some(name), location)) => Route.DestinationTable(name, location)
          case Some(FoundTable(None, location)) => Route.Destination(location)
          case None => Route.Destination(u.location.map(new Path(_)).getOrElse(
              throw RedirectConfigErrors.redirectDestinationTableMissing(where, u.describe)
            ))
        }
    }

  private object SourceOrDestination {
    def path(route: Route): Path = route match {
      case Route.Destination(p) => p
      case Route.DestinationTable(_, p) => p
      case Route.Direct => throw new IllegalStateException("a destination is never the source")
    }
  }

  def checkAllowed(ctx: RoutingContext, location: String): Unit = {
    // Compared by path component: the prefix /data/team allows /data/team/t, not /data/team-2.
    def within(prefix: String): Boolean = {
      val (l, p) = (qualified(ctx, location), qualified(ctx, prefix))
      l == p || l.startsWith(p + "/")
    }
    if (ctx.allowedPrefixes.nonEmpty && !ctx.allowedPrefixes.exists(within)) {
      throw RedirectErrors.redirectLocationNotAllowed(
        location,
        ctx.allowedPrefixes,
        ctx.allowedPrefixesSetting
      )
    }
  }

  private def normalize(ctx: RoutingContext, location: String): String =
    scala.util.Try(Locations.qualify(
      location,
      ctx.storage.names
    )(RedirectConfigErrors.unusableRedirectTarget(location, _)).toString).getOrElse(location)

  /**
   * A destination must not be redirected itself, except as the marked destination of this very
   * source while the redirect is dropped. Anything else is a chain (A -> B -> C) or a cycle (A -> B
   * -> A), reported with the hops found.
   */
  private def checkNotChained(ctx: RoutingContext, source: Path, dest: Path): Unit = {
    val destInfo = RedirectLookup.lookup(ctx.hadoopConf(dest), dest)
    destInfo.flatMap(_.config) match {
      case None =>
      case Some(d) if marksDestinationOf(ctx, d, dest, source) =>
      case Some(_) =>
        /* Hops in qualified form, so a cycle spelled once with `file:` and once without is still a
         * cycle. */
        val hops = Vector.newBuilder[String]
        var seen = Set.empty[String]
        def visit(location: String): Boolean = {
          val q = qualified(ctx, location)
          hops += q
          val again = seen.contains(q)
          seen += q
          again
        }
        visit(source.toString)
        visit(dest.toString)
        // The report is best effort: a hop that cannot be resolved or read ends it.
        def nextHop(info: RedirectInfo): Option[Path] = info.config.flatMap(c =>
          scala.util.Try(destinationPath(ctx, info.path.toString, c.spec)).toOption
        )
        var current: Option[RedirectInfo] = destInfo
        var done = false
        var n = 0
        while (!done && n < MaxChainReport) {
          n += 1
          current.flatMap(nextHop) match {
            case Some(next) =>
              done = visit(next.toString)
              current =
                scala.util.Try(RedirectLookup.lookup(ctx.hadoopConf(next), next)).toOption.flatten
            case None => done = true
          }
        }
        throw RedirectErrors.redirectChain(hops.result())
    }
  }

  private def qualified(ctx: RoutingContext, location: String): String =
    normalize(ctx, location).stripSuffix("/")

  def sameLocation(ctx: RoutingContext, a: String, b: String): Boolean = qualified(ctx, a) ==
    qualified(ctx, b)

  /**
   * Whether `c`, the redirect of the table at `dest`, is the marker `dest` carries while the
   * redirect from `source` to it is dropped.
   */
  def marksDestinationOf(
      ctx: RoutingContext,
      c: RedirectConfig,
      dest: Path,
      source: Path
  ): Boolean =
    c.isDestinationMarker &&
      sameLocation(ctx, destinationPath(ctx, dest.toString, c.spec).toString, source.toString)

  private def describe(ops: Set[String]): String =
    if (ops.isEmpty) "write to" else ops.toSeq.sorted.mkString("/").toLowerCase + " on"
}
