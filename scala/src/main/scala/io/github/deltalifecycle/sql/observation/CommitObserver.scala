package io.github.deltalifecycle.sql.observation

import scala.util.control.NonFatal

import io.github.deltalifecycle.features.compaction.LogMaintenance
import io.github.deltalifecycle.sql.DeltaLifecycleSparkSessionExtension
import io.github.deltalifecycle.sql.streaming.RoutedDeltaSink
import org.apache.hadoop.fs.Path
import org.apache.spark.SparkContext
import org.apache.spark.internal.Logging
import org.apache.spark.scheduler.{SparkListener, SparkListenerEvent}
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.catalyst.plans.logical.{Command, LeafNode, LogicalPlan}
import org.apache.spark.sql.delta.DeltaLog
import org.apache.spark.sql.delta.catalog.DeltaTableV2
import org.apache.spark.sql.delta.files.TahoeFileIndex
import org.apache.spark.sql.delta.sources.{DeltaDataSource, DeltaSink}
import org.apache.spark.sql.deltalifecycle.SparkInternals
import org.apache.spark.sql.execution.datasources.SaveIntoDataSourceCommand
import org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionEnd

/**
 * How the post-commit policy learns of delta-spark's commits without replacing its LogStore (so
 * every LogStore configuration delta-spark documents stays as the user set it): every commit
 * delta-spark makes (SQL, DataFrame writes, the DeltaTable API, streaming micro-batches) happens
 * inside one SQL execution, and when that execution ends this listener finds the Delta tables its
 * plan writes and hands them to [[LogMaintenance]], which judges them on delta-spark's in-memory
 * snapshot. An execution that reads, or writes nothing new, costs no request.
 */
final class CommitObserver extends SparkListener with Logging {
  override def onOtherEvent(event: SparkListenerEvent): Unit = event match {
    case end: SparkListenerSQLExecutionEnd =>
      try SparkInternals.succeededQuery(end).filter(q => loadsExtension(q._1)).foreach {
          case (spark, plan) =>
            DeltaWriteTargets.of(spark, plan).foreach(LogMaintenance.onCommitted(spark, _))
        }
      catch { case NonFatal(e) => logWarning("Could not look for Delta commits in a query", e) }
    case _ =>
  }

  /**
   * Whether `spark` loads this extension: another session on the same context (stock delta-spark)
   * keeps stock behaviour, with no maintenance after its commits.
   */
  private def loadsExtension(spark: SparkSession): Boolean =
    spark.conf.getOption("spark.sql.extensions").exists(
      _.split(",").map(_.trim).contains(classOf[DeltaLifecycleSparkSessionExtension].getName)
    )
}

object CommitObserver {
  private val registered = new java.util.WeakHashMap[SparkContext, java.lang.Boolean]()

  /** Adds the observer to `spark`'s context, once per context. */
  def register(spark: SparkSession): Unit = registered.synchronized {
    val context = spark.sparkContext
    if (registered.put(context, true) == null) context.addSparkListener(new CommitObserver)
  }
}

/**
 * The Delta tables a finished plan may have committed to: what its write nodes (commands and
 * streaming writes) name as their target, and the relations those commands take as children
 * (OPTIMIZE, REORG). Tables a plan only reads are not targets; a false positive costs nothing, as
 * [[LogMaintenance]] judges it on the in-memory snapshot.
 */
object DeltaWriteTargets {
  private val MaxDepth = 4

  def of(spark: SparkSession, plan: LogicalPlan): Seq[DeltaLog] = {
    val found = scala.collection.mutable.LinkedHashMap.empty[String, DeltaLog]
    def add(log: DeltaLog): Unit = found.getOrElseUpdate(log.dataPath.toString, log)
    // A table the plan names by its path, opened as delta-spark opens a path: the session's way.
    def addPath(path: String): Unit =
      scala.util.Try(DeltaLog.forTable(spark, new Path(path))).foreach(add)

    def visit(value: Any, depth: Int): Unit = if (depth <= MaxDepth) value match {
      case log: DeltaLog => add(log)
      case index: TahoeFileIndex => add(index.deltaLog)
      case table: DeltaTableV2 => add(table.deltaLog)
      case sink: DeltaSink => sink.productIterator.collectFirst { case p: Path => p }.foreach(p =>
          addPath(p.toString)
        )
      case routed: RoutedDeltaSink => routed.lastSink.foreach(visit(_, depth))
      case save: SaveIntoDataSourceCommand if save.dataSource.isInstanceOf[DeltaDataSource] =>
        save.options.get("path").foreach(addPath)
      case _: Expression | _: String | _: Map[_, _] => // neither holds a table
      case node: LogicalPlan => fieldsOf(node).foreach(visit(_, depth + 1))
      case option: Option[_] => option.foreach(visit(_, depth))
      case items: Iterable[_] => items.foreach(visit(_, depth))
      case product: Product => product.productIterator.foreach(visit(_, depth + 1))
      case _ =>
    }

    plan.foreach { node =>
      if (isWrite(node)) {
        visit(node, 0)
        node.children.foreach {
          case relation: LeafNode if node.isInstanceOf[Command] => visit(relation, 1)
          case _ =>
        }
      }
    }
    found.values.toSeq
  }

  // Children are the data a write reads; targets are held in its other fields.
  private def fieldsOf(node: LogicalPlan): Iterator[Any] = {
    val children = node.children.toSet[Any]
    node.productIterator.filterNot(children.contains)
  }

  private def isWrite(node: LogicalPlan): Boolean =
    node.isInstanceOf[Command] || node.getClass.getSimpleName.startsWith("WriteTo")
}
