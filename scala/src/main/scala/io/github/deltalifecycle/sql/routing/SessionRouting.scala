package io.github.deltalifecycle.sql.routing

import java.util.concurrent.ConcurrentHashMap

import scala.util.control.NonFatal

import io.github.deltalifecycle.core.{DeltaLifecycleException, LogErrors, TableLog, TableName}
import io.github.deltalifecycle.features.redirect.{
  Access,
  RedirectConfig,
  RedirectInfo,
  RedirectLookup,
  RedirectRouting,
  Route,
  RoutingContext
}
import io.github.deltalifecycle.sql.resolution.{LifecycleTableRef, TableStorage}
import io.github.deltalifecycle.sql.unitycatalog.PathOperation
import org.apache.hadoop.fs.Path
import org.apache.spark.internal.Logging
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.catalog.CatalogTable
import org.apache.spark.sql.delta.{DeltaLog, Snapshot}
import org.apache.spark.sql.delta.actions.{Metadata, Protocol}
import org.apache.spark.sql.delta.catalog.DeltaTableV2
import org.apache.spark.sql.delta.sources.DeltaSQLConf
import org.apache.spark.sql.deltalifecycle.SparkInternals

/**
 * The one entry point through which this extension routes an access to a table (the catalog for
 * names and ``delta.`path` ``, the analyzer rule for the DataFrame API's paths), so every entry
 * point follows one error policy:
 *   - this project's typed errors (a refused write, a chain, a malformed redirect value) are the
 *     answer to the access and propagate;
 *   - any other failure to read the table's log means this project's log core cannot read it. That
 *     table is delta-spark's to judge: the access is not routed, and a warning says why, once per
 *     table location rather than once per query.
 */
object SessionRouting extends Logging {

  def route(spark: SparkSession, path: Path, access: Access, what: String): Route =
    route(RedirectSession.context(spark), path, access, what)

  /** The route of `access` to `table`, a statement's, whose storage opens as its catalog's. */
  def route(spark: SparkSession, table: LifecycleTableRef, access: Access): Route = {
    val elsewhere = if (access == Access.Read) PathOperation.Read else PathOperation.ReadWrite
    val ctx = RedirectSession.context(spark, table, elsewhere, "route an access to")
    route(ctx, table.path, access, table.displayName)
  }

  private def route(ctx: RoutingContext, path: Path, access: Access, what: String): Route =
    underPolicy[Route](path, Route.Direct)(RedirectRouting.route(ctx, path, access, what))

  /**
   * The redirect facts of the table at `path` (the catalog entry `entry` describes it, if it has
   * one) as they are now (no per-query cache), under the same policy: None where there is no Delta
   * table, or none this project's core can read.
   */
  def read(spark: SparkSession, path: Path, entry: Option[CatalogTable]): Option[RedirectInfo] =
    underPolicy(path, Option.empty[RedirectInfo]) {
      RedirectLookup.read(TableStorage.hadoopConf(spark, entry), path)
    }

  /**
   * The error policy above: typed errors are the answer, any other failure leaves `fallback`. A
   * storage that refused this project's read is a failure to read, not an answer: delta-spark may
   * hold credentials for the table that this project's lookup did not get (a stream's options).
   */
  private def underPolicy[T](path: Path, fallback: T)(body: => T): T =
    try body
    catch {
      case e: DeltaLifecycleException if e.condition != LogErrors.StorageAccessDenied =>
        throw e
      case NonFatal(e) =>
        warnOnce(path, e)
        fallback
    }

  /**
   * Routes an access to `table`, which delta-spark opened for the statement at `path`. A statement
   * loads delta-spark's snapshot of the table's latest version anyway; when that snapshot names no
   * redirect (no property, no feature), the table is not redirected and routing sends no request of
   * its own. Everything else goes to the lookup of [[route]], as it would without the snapshot: a
   * redirect, a table delta-spark cannot open (a protocol naming redirectReaderWriter), time
   * travel, a path delta-spark resolves to another location, a snapshot delta-spark may serve stale
   * (a staleness limit set). A table the lookup last found redirected goes to it first, so
   * delta-spark does not open a redirected source on every access.
   */
  def route(
      spark: SparkSession,
      table: DeltaTableV2,
      path: Path,
      access: Access,
      what: String
  ): Route =
    if (
      openedWithoutRedirect(
        spark,
        table.deltaLog,
        facts(table.initialSnapshot),
        table.timeTravelOpt.isDefined,
        path
      )
    ) Route.Direct
    else route(RedirectSession.context(spark, table, path, access), path, access, what)

  /**
   * [[route]] for a table delta-spark opened some other way: `deltaLog` at the version, protocol
   * and metadata `opened` gives, time travel or not.
   */
  def routeOpened(
      spark: SparkSession,
      deltaLog: => DeltaLog,
      opened: => (Long, Protocol, Metadata),
      timeTravel: Boolean,
      path: Path,
      access: Access,
      what: String
  ): Route =
    if (openedWithoutRedirect(spark, deltaLog, opened, timeTravel, path)) Route.Direct
    else route(spark, path, access, what)

  /**
   * The fast path alone, for callers that hold delta-spark's view of the latest version of the
   * table at `path` (a stream's source or sink): whether that view shows the table is not
   * redirected, so that no request of this project's own is needed.
   */
  def openedNotRedirected(
      spark: SparkSession,
      deltaLog: => DeltaLog,
      snapshot: => Snapshot,
      path: Path
  ): Boolean = openedWithoutRedirect(spark, deltaLog, facts(snapshot), timeTravel = false, path)

  /** What routing reads of a snapshot delta-spark loaded. */
  def facts(snapshot: Snapshot): (Long, Protocol, Metadata) =
    (snapshot.version, snapshot.protocol, snapshot.metadata)

  /**
   * The table `route` sends an access to, when it is not the table itself: a location, or a catalog
   * table as its catalog registers it. A location that `from`, a table of a catalog, is redirected
   * to opens with what that catalog vends for the location, for `access` (its entry, moved there,
   * names no catalog: the location is no table of it).
   */
  def destinationTable(
      spark: SparkSession,
      route: Route,
      from: Option[(LifecycleTableRef, Access)] = None
  ): Option[LifecycleTableRef] =
    route match {
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

  private def openedWithoutRedirect(
      spark: SparkSession,
      deltaLog: => DeltaLog,
      opened: => (Long, Protocol, Metadata),
      timeTravel: Boolean,
      path: Path
  ): Boolean =
    try {
      // Qualifies `path` and looks it up in memory: no file is opened.
      lazy val hadoopConf = deltaLog.newDeltaHadoopConf()
      val stalenessLimit =
        SparkInternals.sqlConf(spark).getConf(DeltaSQLConf.DELTA_ASYNC_UPDATE_STALENESS_TIME_LIMIT)
      !timeTravel && stalenessLimit == 0 &&
      !RedirectLookup.rememberedRedirected(hadoopConf, path) && {
        val (version, protocol, metadata) = opened
        version >= 0 &&
        deltaLog.dataPath == TableLog.forPath(hadoopConf, path).tablePath &&
        RedirectConfig.absent(protocol, metadata)
      }
    } catch { case NonFatal(_) => false }

  /** The location an access goes to instead of the table's own, if it is routed. */
  def destinationPath(route: Route): Option[Path] = route match {
    case Route.Direct => None
    case Route.Destination(dest) => Some(dest)
    case Route.DestinationTable(_, dest) => Some(dest)
  }

  private val MaxWarnedLocations = 1000
  private val warnedLocations = ConcurrentHashMap.newKeySet[String]()

  private def warnOnce(path: Path, e: Throwable): Unit = {
    if (warnedLocations.size > MaxWarnedLocations) warnedLocations.clear()
    if (warnedLocations.add(path.toString)) {
      logWarning(
        s"Cannot read the redirect of $path (${e.getMessage}); it is not routed, and " +
          "delta-spark opens it as it is",
        e
      )
    }
  }
}
