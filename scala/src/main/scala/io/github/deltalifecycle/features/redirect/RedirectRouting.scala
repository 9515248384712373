package io.github.deltalifecycle.features.redirect

import io.github.deltalifecycle.core.{LifecycleErrors, Locations}
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

/** Where an access to a table goes, per the RFC's Query Redirection Flow. */
sealed trait Route

object Route {

  /** The table itself, at its latest version (no redirect, or one that keeps this access here). */
  case object Direct extends Route

  /** The redirect destination at a location. */
  final case class Destination(path: Path) extends Route

  /** The redirect destination registered in the session catalog under `name`. */
  final case class DestinationTable(name: String, path: Path) extends Route
}

/** Reading, or writing with the named operations (INSERT, UPDATE, DELETE, WRITE, ...). */
sealed trait Access
object Access {
  case object Read extends Access
  final case class Write(operations: Set[String]) extends Access
}

/**
 * Session facts routing depends on: the application name (NoRedirectRules), the location prefixes a
 * redirect may point to (empty: any) and the setting they come from (for errors), and how to find a
 * catalog table's location.
 */
final case class RoutingContext(
    hadoopConf: Configuration,
    appName: String,
    allowedPrefixes: Seq[String],
    allowedPrefixesSetting: String,
    catalogTableLocation: String => Option[Path]
)

/** Decides the route of one access; never reads data, only logs (through [[RedirectLookup]]). */
object RedirectRouting {

  /** Longer chains are reported as chains before they are followed further. */
  private val MaxChainReport = 8

  def route(ctx: RoutingContext, path: Path, access: Access, what: String): Route =
    RedirectLookup.lookup(ctx.hadoopConf, path) match {
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
            throw LifecycleErrors.redirectDestinationReadOnly(what, c.spec.describe, "write to")
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
          return sourceRoute(c, LifecycleErrors.readerWriterSourceKeptByRules(table, ctx.appName))
        }
        (c.state, access) match {
          case (RedirectState.EnableInProgress, Access.Read) =>
            sourceRoute(c, LifecycleErrors.readerWriterSourceBeingEnabled(table))
          case (RedirectState.Ready, _) | (RedirectState.DropInProgress, Access.Read) =>
            destination(ctx, info, c)
          case (state, Access.Write(ops)) =>
            throw LifecycleErrors.redirectWriteRefused(what, state.name, describe(ops))
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
    val destPath = checkedDestinationPath(ctx, info.path, c)
    c.spec match {
      case RedirectSpec.Table(name, _) => Route.DestinationTable(name, destPath)
      case _: RedirectSpec.Location => Route.Destination(destPath)
    }
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
  def destinationPath(ctx: RoutingContext, where: String, spec: RedirectSpec): Path = spec match {
    case RedirectSpec.Location(uri) =>
      Locations.parse(uri)(LifecycleErrors.redirectLocationInvalid(where, uri, _))
    case RedirectSpec.Table(name, recorded) =>
      ctx.catalogTableLocation(name).orElse(recorded.map(new Path(_))).getOrElse(
        throw LifecycleErrors.redirectDestinationTableMissing(where, name)
      )
  }

  def checkAllowed(ctx: RoutingContext, location: String): Unit = {
    // Compared by path component: the prefix /data/team allows /data/team/t, not /data/team-2.
    def within(prefix: String): Boolean = {
      val (l, p) = (qualified(ctx, location), qualified(ctx, prefix))
      l == p || l.startsWith(p + "/")
    }
    if (ctx.allowedPrefixes.nonEmpty && !ctx.allowedPrefixes.exists(within)) {
      throw LifecycleErrors.redirectLocationNotAllowed(
        location,
        ctx.allowedPrefixes,
        ctx.allowedPrefixesSetting
      )
    }
  }

  private def normalize(ctx: RoutingContext, location: String): String =
    scala.util.Try(Locations.qualify(
      location,
      ctx.hadoopConf
    )(LifecycleErrors.unusableRedirectTarget(location, _)).toString).getOrElse(location)

  /**
   * A destination must not be redirected itself, except as the marked destination of this very
   * source while the redirect is dropped. Anything else is a chain (A -> B -> C) or a cycle (A -> B
   * -> A), reported with the hops found.
   */
  private def checkNotChained(ctx: RoutingContext, source: Path, dest: Path): Unit = {
    val destInfo = RedirectLookup.lookup(ctx.hadoopConf, dest)
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
              current = scala.util.Try(RedirectLookup.lookup(ctx.hadoopConf, next)).toOption.flatten
            case None => done = true
          }
        }
        throw LifecycleErrors.redirectChain(hops.result())
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
