package io.github.deltalifecycle.sql.routing

import io.github.deltalifecycle.features.redirect.{Access, RedirectMode}
import io.github.deltalifecycle.sql.resolution.LifecycleTableRef
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.delta.DeltaUnsupportedTableFeatureException

/**
 * Where a statement of this project acts. The Table Redirection RFC routes every query on a READY
 * (or DROP-REDIRECT-IN-PROGRESS) source to its destination, and this project's statements go with
 * them, by the rules batch access follows ([[SessionRouting]]): a read goes to the destination, a
 * write is refused while the redirect is IN-PROGRESS, and only the applications the source's
 * NoRedirectRules name stay on the source. The redirect's own statements act on the table named.
 */
object StatementRouting {

  def routed(spark: SparkSession, table: LifecycleTableRef, access: Access): LifecycleTableRef =
    SessionRouting.destinationTable(
      spark,
      SessionRouting.route(spark, table, access),
      Some((table, access))
    ).getOrElse(table)

  /**
   * Runs `body`, a statement that has delta-spark change `table`, turning delta-spark's refusal of
   * a redirect feature in the table's protocol into this project's typed error.
   */
  def refusalsTyped[T](statement: String, table: LifecycleTableRef)(body: => T): T =
    try body
    catch {
      case e: DeltaUnsupportedTableFeatureException
          if RedirectMode.featureNames.exists(f => String.valueOf(e.getMessage).contains(f)) =>
        val named = RedirectMode.featureNames.filter(f => e.getMessage.contains(f)).toSeq.sorted
        throw RouteErrors.redirectBlocksDeltaSpark(statement, table.displayName, named, e)
    }
}
