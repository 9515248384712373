package io.github.deltalifecycle.sql.catalogmanaged

import io.github.deltalifecycle.shims.{CatalogManagedShim, StreamingShim}
import io.github.deltalifecycle.sql.RoutingCatalog
import io.github.deltalifecycle.sql.unitycatalog.UnityCatalogs
import org.apache.spark.internal.Logging
import org.apache.spark.sql.{SparkSession, SparkSessionExtensions}
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.deltalifecycle.SparkInternals

/**
 * A streaming read by name of a catalog-managed table of a Unity Catalog catalog that
 * [[RoutingCatalog]] wraps. delta-spark 4.x reads such a table's stream with its kernel-based
 * source: its resolution rule `ApplyV2Streaming` opens the table with a Unity Catalog client built
 * from the settings of the catalog that names the table, which it looks up in the active session's
 * settings, among the catalogs whose `spark.sql.catalog.<name>` is UC's connector class. A wrapped
 * catalog's setting is the wrapper's class, so the lookup finds nothing and the read fails, where
 * the same read through the connector alone succeeds.
 *
 * So that rule runs with a copy of the session as the active session, in which each wrapped Unity
 * Catalog catalog the plan streams from is set to the connector's class: delta-spark then reads the
 * catalog's own settings (`uri`, `auth.*`, `token`), the ones the connector was given. The copy has
 * the session's settings as they are when the query is analyzed (the table delta-spark builds keeps
 * it for its schema settings); the plan, its catalogs (the wrapper among them) and the rest of the
 * analysis are the session's.
 */
object WrappedCatalogStreams extends Logging {

  /** delta-spark's rule that gives a catalog-managed table's stream its kernel-based source. */
  private val StreamingRule = "ApplyV2Streaming"

  /**
   * Wraps delta-spark's streaming rule among the rules of the extensions listed before this
   * project's (delta-spark's own extension comes first; delta-spark 3.x has no such rule).
   */
  def install(extensions: SparkSessionExtensions): Unit = {
    val wrapped = SparkInternals.wrapResolutionRules(extensions) { (spark, rule) =>
      if (rule.getClass.getSimpleName == StreamingRule) new WithConnectorSettings(spark, rule)
      else rule
    }
    if (!wrapped) {
      logWarning("A streaming read by name of a catalog-managed table of a wrapped Unity Catalog " +
        "catalog fails on this Spark: it keeps its extensions' rules where they cannot be wrapped")
    }
  }

  private final class WithConnectorSettings(spark: SparkSession, rule: Rule[LogicalPlan])
      extends Rule[LogicalPlan] {
    override val ruleName: String = rule.ruleName

    override def apply(plan: LogicalPlan): LogicalPlan = {
      val catalogs = plan.collect {
        case s: StreamingShim.StreamingRelation =>
          s.dataSource.catalogTable.filter(CatalogManagedShim.isUnityCatalogManaged)
            .flatMap(_.identifier.catalog)
      }.flatten.distinct.filter(isWrappedUnityCatalog)
      if (catalogs.isEmpty) rule(plan) else withConnectorSettings(catalogs)(rule(plan))
    }

    private def isWrappedUnityCatalog(name: String): Boolean =
      SparkInternals.isCatalogRegistered(spark, name) &&
        (SparkInternals.catalog(spark, name) match {
          case routing: RoutingCatalog => UnityCatalogs.isConnector(routing.delegate)
          case _ => false
        })

    private def withConnectorSettings[T](catalogs: Seq[String])(body: => T): T = {
      val view = SparkInternals.cloneSession(spark)
      catalogs.foreach(c =>
        view.conf.set(s"spark.sql.catalog.$c", UnityCatalogs.ConnectorClass)
      )
      val active = SparkSession.getActiveSession
      SparkSession.setActiveSession(view)
      try body
      finally active match {
          case Some(session) => SparkSession.setActiveSession(session)
          case None => SparkSession.clearActiveSession()
        }
    }
  }
}
