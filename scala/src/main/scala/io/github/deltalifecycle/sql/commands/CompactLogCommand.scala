package io.github.deltalifecycle.sql.commands

import io.github.deltalifecycle.features.compaction.LogCompaction
import io.github.deltalifecycle.sql.resolution.{LifecycleTableRef, TableAccess, TableStorage}
import io.github.deltalifecycle.sql.plans.CompactLogStatement
import org.apache.spark.sql.{Row, SparkSession}
import org.apache.spark.sql.catalyst.expressions.Attribute
import org.apache.spark.sql.execution.command.LeafRunnableCommand

/** Writes one log compaction for a range of commits, or for the commits not yet covered. */
case class CompactLogCommand(table: LifecycleTableRef, range: Option[(Long, Long)])
    extends LeafRunnableCommand {

  override val output: Seq[Attribute] = CompactLogStatement.outputAttributes

  override def run(spark: SparkSession): Seq[Row] = {
    val log = TableAccess.log(spark, TableStorage.forWriting(spark, table, "compact the log of"))
    val outcome = range match {
      case Some((start, end)) =>
        LogCompaction.compact(log, log.listing(), start, end, sessionConf = spark.conf.getOption)
      case None => LogCompaction.compactPending(log, spark.conf.getOption)
    }
    Seq(Row(
      outcome.start,
      outcome.end,
      outcome.status.name,
      outcome.file.map(_.toString).orNull,
      outcome.commits,
      outcome.actions,
      outcome.bytesWritten,
      outcome.inputBytes,
      table.displayName
    ))
  }
}
