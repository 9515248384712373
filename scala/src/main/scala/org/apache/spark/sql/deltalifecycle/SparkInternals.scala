package org.apache.spark.sql.deltalifecycle

import java.util.concurrent.TimeoutException

import scala.collection.mutable

import org.apache.hadoop.conf.Configuration
import org.apache.spark.{SparkContext, TaskContext}
import org.apache.spark.broadcast.Broadcast
import org.apache.spark.sql.{SparkSession, SparkSessionExtensions}
import org.apache.spark.sql.catalyst.analysis.Analyzer
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionEnd
import org.apache.spark.sql.catalyst.catalog.SessionCatalog
import org.apache.spark.sql.connector.catalog.{CatalogManager, CatalogPlugin, TableCatalog}
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.util.SerializableConfiguration

/**
 * The one place where delta-lifecycle reaches Spark members that are `private[sql]` (session state,
 * the catalog manager, the context's SparkConf). It lives in Spark's package for that reason only;
 * keep it small, and keep every such access here. What differs between Spark lines is in the
 * per-line [[SessionShim]] (docs/spark-lines.md).
 */
object SparkInternals {
  private def sessionState(spark: SparkSession) = SessionShim.sessionState(spark)

  def sessionCatalog(spark: SparkSession): SessionCatalog = sessionState(spark).catalog

  def isCatalogRegistered(spark: SparkSession, name: String): Boolean =
    sessionState(spark).catalogManager.isCatalogRegistered(name)

  def catalog(spark: SparkSession, name: String): CatalogPlugin =
    sessionState(spark).catalogManager.catalog(name)

  def currentCatalogName(spark: SparkSession): String =
    sessionState(spark).catalogManager.currentCatalog.name

  /** The session catalog's name, `spark_catalog`. */
  val SessionCatalogName: String = CatalogManager.SESSION_CATALOG_NAME

  /** Whether `catalog` is the session catalog. */
  def isSessionCatalog(catalog: CatalogPlugin): Boolean = catalog.name == SessionCatalogName

  /** The session catalog (`spark_catalog`), a table catalog in every session. */
  def sessionTableCatalog(spark: SparkSession): TableCatalog =
    sessionState(spark).catalogManager.v2SessionCatalog.asInstanceOf[TableCatalog]

  def currentNamespace(spark: SparkSession): Array[String] =
    sessionState(spark).catalogManager.currentNamespace

  /**
   * A copy of `spark`: its settings as they are now (a change to the copy's stays in the copy), the
   * same context and shared state. Its analyzer and catalogs are built only when a query uses them.
   */
  def cloneSession(spark: SparkSession): SparkSession = SessionShim.cloneSession(spark)

  /**
   * Has every resolution rule injected into `extensions` so far (by the extensions listed before
   * the caller's) built as `wrap(session, rule)`, in its place. Spark keeps the rules' builders in
   * a private buffer of `SparkSessionExtensions`; false where it keeps them elsewhere.
   */
  def wrapResolutionRules(extensions: SparkSessionExtensions)(
      wrap: (SparkSession, Rule[LogicalPlan]) => Rule[LogicalPlan]
  ): Boolean = {
    val field =
      try Some(classOf[SparkSessionExtensions].getDeclaredField("resolutionRuleBuilders"))
      catch { case _: NoSuchFieldException => None }
    field.foreach { f =>
      f.setAccessible(true)
      val builders =
        f.get(extensions).asInstanceOf[mutable.Buffer[SparkSession => Rule[LogicalPlan]]]
      builders.indices.foreach { i =>
        val build = builders(i)
        builders(i) = (session: SparkSession) => wrap(session, build(session))
      }
    }
    field.isDefined
  }

  /** The session's analyzer (built on first use). */
  def analyzer(spark: SparkSession): Analyzer = sessionState(spark).analyzer

  /** Hadoop configuration including the session's `spark.hadoop.*` and SQL-level overrides. */
  def newHadoopConf(spark: SparkSession): Configuration =
    sessionState(spark).newHadoopConf()

  /** The session's SQL settings, typed (delta-spark's among them). */
  def sqlConf(spark: SparkSession): SQLConf = sessionState(spark).conf

  /** The session and analyzed plan of an SQL execution that ended without failure. */
  def succeededQuery(end: SparkListenerSQLExecutionEnd): Option[(SparkSession, LogicalPlan)] =
    Option(end.qe).filter(_ => end.executionFailure.isEmpty).map(qe =>
      (qe.sparkSession, qe.analyzed)
    )

  /** Waits until the listeners of `spark`'s context have seen every event posted so far. */
  def awaitListeners(spark: SparkSession, timeoutMillis: Long): Boolean =
    try {
      spark.sparkContext.listenerBus.waitUntilEmpty(timeoutMillis)
      true
    } catch { case _: TimeoutException => false }

  /** A Hadoop configuration shipped once to the executors (Spark's serializable wrapper). */
  def broadcastHadoopConf(spark: SparkSession, conf: Configuration): BroadcastHadoopConf =
    new BroadcastHadoopConf(spark.sparkContext.broadcast(new SerializableConfiguration(conf)))

  /**
   * The value of `key` in the configuration the application was started with (spark-submit
   * `--conf`, spark-defaults.conf, the builder of the first session), which no session can change.
   */
  def startupSetting(spark: SparkSession, key: String): Option[String] =
    spark.sparkContext.conf.getOption(key)

  /**
   * Registers `key` as a static SQL configuration, as Spark's own `spark.sql.warehouse.dir` is:
   * `spark.conf.set` and `RESET` of it then fail with CANNOT_MODIFY_STATIC_CONFIG in every session
   * of this JVM. Registering twice is a no-op.
   */
  def registerStaticSetting(key: String, doc: String): Unit = synchronized {
    if (!SQLConf.isStaticConfigKey(key)) {
      SQLConf.buildStaticConf(key).doc(doc).stringConf.createOptional
    }
  }

  /**
   * Adds `bytes` to the running task's input and output metrics (what a copy task read from the
   * source and wrote to the destination itself), so Spark's UI, event log and listeners show the
   * bytes that passed through the executors. Outside a task it does nothing.
   */
  def recordTaskBytes(bytes: Long): Unit = Option(TaskContext.get()).foreach { task =>
    val metrics = task.taskMetrics()
    metrics.inputMetrics.incBytesRead(bytes)
    metrics.outputMetrics.setBytesWritten(metrics.outputMetrics.bytesWritten + bytes)
  }

  /** The local properties that `SparkContext.setJobGroup` sets, to save and restore them. */
  val JobGroupProperties: Seq[String] = Seq(
    SparkContext.SPARK_JOB_GROUP_ID,
    SparkContext.SPARK_JOB_DESCRIPTION,
    SparkContext.SPARK_JOB_INTERRUPT_ON_CANCEL
  )
}

/** A broadcast Hadoop configuration; `value` reads it on an executor (or the driver). */
final class BroadcastHadoopConf private[deltalifecycle] (
    b: Broadcast[SerializableConfiguration]
) extends Serializable {
  def value: Configuration = b.value.value
  def destroy(): Unit = b.destroy()
}
