package io.github.deltalifecycle.sql.routing

import java.util.concurrent.ConcurrentHashMap

import scala.util.control.NonFatal

import io.github.deltalifecycle.core.DeltaLifecycleException
import io.github.deltalifecycle.features.redirect.{Access, RedirectRouting, Route}
import org.apache.hadoop.fs.Path
import org.apache.spark.internal.Logging
import org.apache.spark.sql.SparkSession

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
