package io.github.deltalifecycle.sql.commands

import java.sql.Timestamp

import io.github.deltalifecycle.core.ProtocolHistory
import io.github.deltalifecycle.sql.resolution.{LifecycleTableRef, TableAccess}
import io.github.deltalifecycle.sql.plans.DescribeProtocolHistoryStatement
import org.apache.spark.sql.{Row, SparkSession}
import org.apache.spark.sql.catalyst.expressions.Attribute
import org.apache.spark.sql.execution.command.LeafRunnableCommand

/** Lists the protocol in force at every retained version of a table. */
case class DescribeProtocolHistoryCommand(table: LifecycleTableRef) extends LeafRunnableCommand {

  override val output: Seq[Attribute] = DescribeProtocolHistoryStatement.outputAttributes

  override def run(spark: SparkSession): Seq[Row] = {
    val log = TableAccess.log(spark, table)
    ProtocolHistory.scan(log).map { v =>
      Row(
        v.version,
        v.timestampMillis.map(new Timestamp(_)).orNull,
        v.operation.orNull,
        v.protocol.minReaderVersion,
        v.protocol.minWriterVersion,
        v.protocol.readerFeatures.map(_.toSeq.sorted).orNull,
        v.protocol.writerFeatures.map(_.toSeq.sorted).orNull,
        if (v.checkpointKinds.isEmpty) null else v.checkpointKinds.map(_.name).mkString(","),
        v.compactions,
        v.requireCheckpointProtectionBeforeVersion.map(Long.box).orNull,
        table.displayName
      )
    }.toVector
  }
}
