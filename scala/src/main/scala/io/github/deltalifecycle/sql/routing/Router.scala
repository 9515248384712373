package io.github.deltalifecycle.sql.routing

import java.util.concurrent.ConcurrentHashMap

import scala.collection.mutable
import scala.util.Try
import scala.util.control.NonFatal

import io.github.deltalifecycle.core.DeltaLifecycleException
import io.github.deltalifecycle.core.ErrorConditions.{InvalidArgument, InvalidRedirect}
import io.github.deltalifecycle.core.ErrorConditions.{RedirectState => StateErrors}
import io.github.deltalifecycle.core.ErrorConditions.RedirectWriteRefused
import io.github.deltalifecycle.core.{Locations, LogErrors, TableLog, TableName}
import io.github.deltalifecycle.features.redirect._
import io.github.deltalifecycle.sql.resolution.{LifecycleTableRef, TableStorage}
import org.apache.hadoop.fs.Path
import org.apache.spark.internal.Logging
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.catalog.CatalogTable
import org.apache.spark.sql.connector.catalog.{CatalogPlugin, Identifier, TableCatalog}
import org.apache.spark.sql.delta.{DeltaLog, Snapshot}
import org.apache.spark.sql.delta.actions.{Metadata, Protocol}
import org.apache.spark.sql.delta.catalog.DeltaTableV2
import org.apache.spark.sql.delta.sources.{DeltaSQLConf, DeltaSourceUtils}
import org.apache.spark.sql.deltalifecycle.SparkInternals

/**
 * The one router: whether an access to a table goes to the table itself (Direct), to its redirect's
 * destination (Destination), waits for an IN-PROGRESS state to end (a streaming write) or is
 * refused (a typed error). Every entry point asks here; the RFC's states and NoRedirectRules, the
 * fast path, where a redirect points, location equality, which catalog a name is in and the error
 * policy live only here. The policy: this project's typed errors are the answer to the access and
 * propagate; any other failure to read the table's log leaves the table to delta-spark, unrouted,
 * with a warning once per location rather than once per query.
 */
object Router extends Logging {

  // ---- the decision, on a table's redirect facts ---------------------------------------------

  def route(ctx: RoutingContext, info: RedirectInfo, access: Access, what: String): Route =
    info.config match {
      case None => Route.Direct
      case Some(c) if c.isDestinationMarker =>
        // A destination whose redirect is being (or was) dropped: its own rows, read-only.
        if (access == Access.Read) Route.Direct
        else throw RedirectWriteRefused
          .destinationReadOnly(table = what, source = c.spec.describe, operation = "write to")
      case Some(c) =>
        val table = info.path.toString
        if (keptOnSource(c, ctx.appName, access)) {
          sourceRoute(c, StateErrors.rulesOnReaderWriterSource(table = table, app = ctx.appName))
        } else (c.state, access) match {
          case (RedirectState.EnableInProgress, Access.Read) =>
            sourceRoute(c, StateErrors.enablingReaderWriterSource(table))
          case (_, Access.Read) | (RedirectState.Ready, _) => destination(ctx, info.path, c.spec)
          case (state, Access.Write(ops)) =>
            throw RedirectErrors.redirectWriteRefused(what, state.name, ops)
        }
    }

  /**
   * Whether `c` keeps `app`'s `access` on the source: NoRedirectRules keep an application there,
   * but the IN-PROGRESS states block every write, a rule's included (the RFC).
   */
  private def keptOnSource(c: RedirectConfig, app: String, access: Access): Boolean =
    (c.ruleFor(app), access) match {
      case (Some(_), Access.Read) => true
      case (Some(r), Access.Write(ops)) => !writesWait(c) && ops.nonEmpty && ops.forall(r.allows)
      case _ => false
    }

  /** Whether writes to a table redirected by `c` wait: its redirect is IN-PROGRESS. */
  private def writesWait(c: RedirectConfig): Boolean =
    !c.isDestinationMarker && c.state != RedirectState.Ready

  /** Whether a read of a table redirected by `c` goes elsewhere (no I/O: for a check). */
  def readsElsewhere(spark: SparkSession, c: RedirectConfig): Boolean =
    !c.isDestinationMarker && c.state != RedirectState.EnableInProgress &&
      !keptOnSource(c, RedirectSession.appName(spark), Access.Read)

  /**
   * The source itself. A writer-only source is what delta-spark reads; a source whose protocol
   * names redirectReaderWriter it cannot read or write at all, so the access is refused with
   * `refused` (which says why it stays on the source) rather than sent into delta-spark's error.
   */
  private def sourceRoute(c: RedirectConfig, refused: => Throwable): Route =
    if (!c.mode.readerWriter) Route.Direct else throw refused

  // ---- the entry points' questions -----------------------------------------------------------

  /** The route of `access` to the table at `path`, whose storage opens as the session's. */
  def route(spark: SparkSession, path: Path, access: Access, what: String): Route =
    lookedUp(RedirectSession.context(spark), path, access, what)

  /** The route of `access` to `table`, a statement's, whose storage opens as its catalog's. */
  def route(spark: SparkSession, table: LifecycleTableRef, access: Access): Route =
    lookedUp(RedirectSession.context(spark, table, access), table.path, access, table.displayName)

  /**
   * The route of `access` to `table`, which delta-spark opened at `path` for a statement: from the
   * snapshot it loaded anyway ([[notRedirected]]) unless that is time travel, else the lookup's.
   */
  def route(spark: SparkSession, table: DeltaTableV2, path: Path, access: Access, what: String)
      : Route =
    if (
      table.timeTravelOpt.isEmpty &&
      notRedirected(spark, table.deltaLog, facts(table.initialSnapshot), path)
    ) Route.Direct
    else table.catalogTable match {
      case Some(entry) =>
        val name = TableName.sql(entry.identifier.nameParts)
        route(spark, LifecycleTableRef(path, name, Some(entry), entry.identifier.catalog), access)
      case None => route(spark, path, access, what)
    }

  /** [[route]] for a table delta-spark opened some other way: `deltaLog` as `opened` gives it. */
  def routeOpened(
      spark: SparkSession,
      deltaLog: => DeltaLog,
      opened: => (Long, Protocol, Metadata),
      path: Path,
      access: Access,
      what: String
  ): Route =
    if (notRedirected(spark, deltaLog, opened, path)) Route.Direct
    else route(spark, path, access, what)

  /**
   * Where a streaming write to the table at `path` (`what`, with the catalog entry `entry`) goes,
   * or the IN-PROGRESS state it waits for. A table whose latest version, as delta-spark's sink
   * reads it before each batch, names no redirect is written in place, with no request of ours.
   */
  def streamWrite(spark: SparkSession, path: Path, what: String, entry: Option[CatalogTable])
      : Either[Wait, Route] = {
    lazy val log = DeltaLog.forTable(spark, path, TableStorage.storageOptions(entry))
    if (notRedirected(spark, log, facts(log.update()), path)) Right(Route.Direct)
    else {
      val (ctx, info) = (RedirectSession.context(spark), read(spark, path, entry))
      info.flatMap(_.config) match {
        case Some(c) if writesWait(c) =>
          val enabling = c.state == RedirectState.EnableInProgress
          Left(Wait(c.state, if (enabling) destinationPath(ctx, what, c.spec) else path))
        case _ => Right(underPolicy[Route](path.toString, Route.Direct) {
            info.fold[Route](Route.Direct)(route(ctx, _, StreamingWrite, what))
          })
      }
    }
  }

  /** The operation a streaming write is, as delta-spark records it and NoRedirectRules name it. */
  private val StreamingWrite = Access.Write(Set("STREAMING UPDATE"))

  /** The Delta table `parts` names in its catalog, or None; any other failure is the policy's. */
  def tableNamed(spark: SparkSession, parts: Seq[String]): Option[LifecycleTableRef] =
    underPolicy(TableName.sql(parts), Option.empty[LifecycleTableRef]) {
      try Some(LifecycleTableRef.resolve(spark, parts))
      catch { case e: DeltaLifecycleException if NamesNoTable(e.condition) => None }
    }

  private val NamesNoTable = // or a path that is none, an invalid argument
    Set(
      "DELTA_LIFECYCLE_TABLE_NOT_FOUND",
      "DELTA_LIFECYCLE_NOT_DELTA_PROVIDER",
      InvalidArgument.Condition
    )

  /** The redirect facts of the table at `path` (catalog entry `entry`) now, under the policy. */
  def read(spark: SparkSession, path: Path, entry: Option[CatalogTable]): Option[RedirectInfo] =
    underPolicy(path.toString, Option.empty[RedirectInfo]) {
      RedirectLookup.read(TableStorage.hadoopConf(spark, entry), path)
    }

  private def lookedUp(ctx: RoutingContext, path: Path, access: Access, what: String): Route =
    underPolicy[Route](path.toString, Route.Direct) {
      RedirectLookup.lookup(ctx.hadoopConf(path), path).map(route(ctx, _, access, what))
        .getOrElse(Route.Direct)
    }

  /** What routing reads of a snapshot delta-spark loaded. */
  def facts(snapshot: Snapshot): (Long, Protocol, Metadata) =
    (snapshot.version, snapshot.protocol, snapshot.metadata)

  /**
   * Whether delta-spark's view of the table at `path` (`deltaLog` as `opened` gives it) shows no
   * redirect, so routing sends no request of its own. Else the lookup answers: a redirect, a table
   * delta-spark cannot open or finds elsewhere, a stale view, a table last found redirected.
   */
  def notRedirected(
      spark: SparkSession,
      deltaLog: => DeltaLog,
      opened: => (Long, Protocol, Metadata),
      path: Path
  ): Boolean =
    try {
      // Qualifies `path` and looks it up in memory: no file is opened.
      lazy val hadoopConf = deltaLog.newDeltaHadoopConf()
      val stalenessLimit =
        SparkInternals.sqlConf(spark).getConf(DeltaSQLConf.DELTA_ASYNC_UPDATE_STALENESS_TIME_LIMIT)
      stalenessLimit == 0 && !RedirectLookup.rememberedRedirected(hadoopConf, path) && {
        val (version, protocol, metadata) = opened
        version >= 0 && deltaLog.dataPath == TableLog.forPath(hadoopConf, path).tablePath &&
        RedirectConfig.absent(protocol, metadata)
      }
    } catch { case NonFatal(_) => false }

  // ---- where a route goes --------------------------------------------------------------------

  /**
   * The table a route sends an access to, when it is not the table itself: a location, or a catalog
   * table as its catalog registers it. A location that `from`, a table of a catalog, is redirected
   * to opens with what that catalog vends for the location, for `access`.
   */
  def destinationTable(
      spark: SparkSession,
      route: Route,
      from: Option[(LifecycleTableRef, Access)] = None
  ): Option[LifecycleTableRef] = route match {
    case Route.Direct => None
    case Route.Destination(dest) =>
      val moved = from.flatMap { case (table, access) =>
        table.catalogTable
          .flatMap(TableStorage.governedAt(spark, _, dest, write = access != Access.Read))
      }
      Some(LifecycleTableRef(dest, TableName.ofPath(dest.toString), moved))
    case Route.DestinationTable(name, _) =>
      Some(LifecycleTableRef.resolve(spark, TableName.parts(name)))
  }

  /**
   * The catalog and identifier a route's destination has: a destination table's own, or a location
   * in the session catalog, which resolves Delta paths (``delta.`<path>` ``).
   */
  def destinationIdentifier(spark: SparkSession, route: Route): Option[(TableCatalog, Identifier)] =
    route match {
      case Route.Direct => None
      case Route.Destination(dest) => Some((
          SparkInternals.sessionTableCatalog(spark),
          Identifier.of(Array(DeltaSourceUtils.ALT_NAME), dest.toString)
        ))
      case Route.DestinationTable(name, _) =>
        val (catalog, ident) = catalogAndIdentifier(spark, TableName.parts(name))
        Some((catalog.asInstanceOf[TableCatalog], ident))
    }

  /**
   * The catalog the table `parts` names is in, as Spark resolves a name: the first part when more
   * parts follow and a catalog of that name is configured, else the current catalog (and then the
   * current namespace when the name has none).
   */
  def catalogAndIdentifier(spark: SparkSession, parts: Seq[String])
      : (CatalogPlugin, Identifier) = {
    val (catalogName, rest) =
      if (parts.size > 1 && SparkInternals.isCatalogRegistered(spark, parts.head))
        (parts.head, parts.tail)
      else (SparkInternals.currentCatalogName(spark), parts)
    val namespace = if (rest.size > 1) rest.init.toArray else SparkInternals.currentNamespace(spark)
    (SparkInternals.catalog(spark, catalogName), Identifier.of(namespace, rest.last))
  }

  // ---- where a redirect points ---------------------------------------------------------------

  /** Where `source`'s redirect `spec` points, after checking it is allowed and not redirected. */
  def destination(ctx: RoutingContext, source: Path, spec: RedirectSpec): Route = {
    val route = destinationOf(ctx, source.toString, spec)
    val dest = route.destinationPath.get
    checkAllowed(ctx, dest.toString)
    checkNotChained(ctx, source, dest)
    route
  }

  /**
   * Where `spec` points: its location, or the catalog table's current location (else the one
   * recorded when the redirect was set). `where` names the redirected table in errors.
   */
  def destinationPath(ctx: RoutingContext, where: String, spec: RedirectSpec): Path =
    destinationOf(ctx, where, spec).destinationPath.get

  /**
   * The route to where `spec` points, unchecked: a location, or a catalog table by the name it has
   * now (a Unity Catalog table found by its id; at the location recorded when the redirect was set
   * if no catalog of the session serves it).
   */
  def destinationOf(ctx: RoutingContext, where: String, spec: RedirectSpec): Route = spec match {
    case RedirectSpec.Location(uri) =>
      Route.Destination(
        Locations.parse(uri)(reason =>
          InvalidRedirect.invalidLocation(table = where, location = uri, reason = reason)
        )
      )
    case RedirectSpec.Table(name, recorded) =>
      val path = ctx.catalogTableLocation(name).orElse(recorded.map(new Path(_)))
        .getOrElse(throw InvalidRedirect.destinationTableMissing(table = where, destination = name))
      Route.DestinationTable(name, path)
    case u: RedirectSpec.UnityCatalogTable =>
      (if (u.tableId.isDefined) ctx.unityCatalog.find(u) else None) match {
        case Some(FoundTable(Some(name), location)) => Route.DestinationTable(name, location)
        case Some(FoundTable(None, location)) => Route.Destination(location)
        case None => Route.Destination(u.location.map(new Path(_)).getOrElse(
            throw InvalidRedirect.destinationTableMissing(table = where, destination = u.describe)
          ))
      }
  }

  /** Refuses a destination outside the administrator's allow-list. */
  def checkAllowed(ctx: RoutingContext, location: String): Unit = {
    // Compared by path component: the prefix /data/team allows /data/team/t, not /data/team-2.
    def within(prefix: String): Boolean = {
      val (l, p) = (qualified(ctx, location), qualified(ctx, prefix))
      l == p || l.startsWith(p + "/")
    }
    if (ctx.allowedPrefixes.nonEmpty && !ctx.allowedPrefixes.exists(within)) {
      throw RedirectErrors
        .redirectLocationNotAllowed(location, ctx.allowedPrefixes, ctx.allowedPrefixesSetting)
    }
  }

  /**
   * A destination must not be redirected itself, except as the marked destination of this very
   * source while the redirect is dropped. Anything else is a chain (A -> B -> C) or a cycle (A -> B
   * -> A), reported with the hops found, in qualified form (a cycle spelled once with `file:` and
   * once without is still a cycle). The report is best effort: a hop that cannot be read ends it.
   */
  private def checkNotChained(ctx: RoutingContext, source: Path, dest: Path): Unit = {
    def lookup(p: Path) = RedirectLookup.lookup(ctx.hadoopConf(p), p)
    val destInfo = lookup(dest)
    destInfo.flatMap(_.config) match {
      case None =>
      case Some(d) if marksDestinationOf(ctx, d, dest, source) =>
      case Some(_) =>
        val (hops, seen) = (Vector.newBuilder[String], mutable.Set.empty[String])
        def visitedAgain(location: Path): Boolean = {
          val q = qualified(ctx, location.toString)
          hops += q
          !seen.add(q)
        }
        def nextHop(info: RedirectInfo): Option[Path] = info.config
          .flatMap(c => Try(destinationPath(ctx, info.path.toString, c.spec)).toOption)
        Seq(source, dest).foreach(visitedAgain)
        var (current, done, n) = (destInfo, false, 0)
        while (!done && n < 8) { // longer chains are reported before they are followed further
          n += 1
          current.flatMap(nextHop) match {
            case Some(next) =>
              done = visitedAgain(next)
              current = Try(lookup(next)).toOption.flatten
            case None => done = true
          }
        }
        throw RedirectErrors.redirectChain(hops.result())
    }
  }

  /**
   * Whether `c`, the redirect of the table at `dest`, is the marker `dest` carries while the
   * redirect from `source` to it is dropped.
   */
  def marksDestinationOf(ctx: RoutingContext, c: RedirectConfig, dest: Path, source: Path)
      : Boolean = c.isDestinationMarker &&
    sameLocation(ctx, destinationPath(ctx, dest.toString, c.spec).toString, source.toString)

  def sameLocation(ctx: RoutingContext, a: String, b: String): Boolean =
    qualified(ctx, a) == qualified(ctx, b)

  def sameLocation(spark: SparkSession, a: Path, b: Path): Boolean =
    sameLocation(RedirectSession.context(spark), a.toString, b.toString)

  private def qualified(ctx: RoutingContext, location: String): String =
    Try(Locations.qualify(location, ctx.storage.names)(reason =>
      InvalidArgument.unusableRedirectTarget(location = location, reason = reason)
    ).toString).getOrElse(location).stripSuffix("/")

  // ---- the error policy ----------------------------------------------------------------------

  /**
   * `body` under the policy above, `fallback` where it does not answer. A storage that refused our
   * read is not an answer: delta-spark may hold credentials the lookup did not get (a stream's).
   */
  def underPolicy[T](location: String, fallback: T)(body: => T): T =
    try body
    catch {
      case e: DeltaLifecycleException if e.condition != LogErrors.StorageAccessDenied => throw e
      case NonFatal(e) =>
        warnOnce(location, e)
        fallback
    }

  private val MaxWarnedLocations = 1000
  private val warnedLocations = ConcurrentHashMap.newKeySet[String]()

  private def warnOnce(location: String, e: Throwable): Unit = {
    if (warnedLocations.size > MaxWarnedLocations) warnedLocations.clear()
    if (warnedLocations.add(location)) {
      logWarning(
        s"Cannot read the redirect of $location (${e.getMessage}); it is not routed, and " +
          "delta-spark opens it as it is",
        e
      )
    }
  }
}
