package io.github.deltalifecycle.sql.commands

import java.sql.Timestamp

import io.github.deltalifecycle.core.LogInventory
import io.github.deltalifecycle.sql.plans.DescribeLogFilesStatement
import io.github.deltalifecycle.sql.resolution.{LifecycleTableRef, TableAccess}
import org.apache.spark.sql.{Row, SparkSession}
import org.apache.spark.sql.catalyst.expressions.Attribute
import org.apache.spark.sql.execution.command.LeafRunnableCommand

/** Lists every file of a table's `_delta_log`, each with what it is to the Delta protocol. */
case class DescribeLogFilesCommand(table: LifecycleTableRef) extends LeafRunnableCommand {

  override val output: Seq[Attribute] = DescribeLogFilesStatement.outputAttributes

  override def run(spark: SparkSession): Seq[Row] =
    LogInventory.of(TableAccess.log(spark, table)).map { f =>
      Row(
        f.version.map(Long.box).orNull,
        f.endVersion.map(Long.box).orNull,
        f.kind.name,
        f.name,
        f.status.getLen,
        new Timestamp(f.status.getModificationTime),
        table.displayName
      )
    }
}
