package io.github.deltalifecycle.sql.routing

import java.util.concurrent.ConcurrentHashMap

import scala.util.control.NonFatal

import io.github.deltalifecycle.core.{DeltaLifecycleException, TableLog}
import io.github.deltalifecycle.features.redirect.{
  Access,
  RedirectConfig,
  RedirectLookup,
  RedirectRouting,
  Route
}
import org.apache.hadoop.fs.Path
import org.apache.spark.internal.Logging
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.delta.DeltaLog
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
    try RedirectRouting.route(RedirectSession.context(spark), path, access, what)
    catch {
      case e: DeltaLifecycleException => throw e
      case NonFatal(e) =>
        warnOnce(path, e)
        Route.Direct
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
    routeOpened(
      spark,
      table.deltaLog, {
        val snapshot = table.initialSnapshot
        (snapshot.version, snapshot.protocol, snapshot.metadata)
      },
      table.timeTravelOpt.isDefined,
      path,
      access,
      what
    )

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

  private def openedWithoutRedirect(
      spark: SparkSession,
      deltaLog: => DeltaLog,
      opened: => (Long, Protocol, Metadata),
      timeTravel: Boolean,
      path: Path
  ): Boolean =
    try {
      val hadoopConf = SparkInternals.newHadoopConf(spark)
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
