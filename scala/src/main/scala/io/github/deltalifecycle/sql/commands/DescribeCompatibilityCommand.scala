package io.github.deltalifecycle.sql.commands

import io.github.deltalifecycle.features.compatibility.{ClientCapabilities, Compatibility}
import io.github.deltalifecycle.sql.plans.DescribeCompatibilityStatement
import io.github.deltalifecycle.sql.resolution.{LifecycleTableRef, TableAccess}
import org.apache.spark.sql.{Row, SparkSession}
import org.apache.spark.sql.catalyst.expressions.Attribute
import org.apache.spark.sql.execution.command.LeafRunnableCommand

/**
 * Which known clients can read and write a table version, and what to drop for those that cannot.
 * Reads the protocol only (never the table's files).
 */
case class DescribeCompatibilityCommand(
    table: LifecycleTableRef,
    version: Option[Long],
    client: Option[String]
) extends LeafRunnableCommand {

  override val output: Seq[Attribute] = DescribeCompatibilityStatement.outputAttributes

  override def run(spark: SparkSession): Seq[Row] = {
    // The client first: a misspelt name fails without touching the table.
    val clients = client.map(ClientCapabilities.lookup).getOrElse(ClientCapabilities.all)
    val log = TableAccess.log(spark, table)
    val protocol = version match {
      case Some(v) => log.protocolAndMetadataAt(v, log.listingFor(v))._1
      case None => log.latestHead().protocol
    }
    // What the table's catalog requires of every table it manages DROP FEATURE cannot remove.
    val requiredByCatalog = log.catalog.fold(Set.empty[String])(_.requiredFeatures)
    Compatibility.evaluateAll(protocol, clients).map { v =>
      val drops = (v.dropForRead ++ v.dropForWrite).distinct
        .map(d => d.copy(droppable = d.droppable && !requiredByCatalog(d.feature)))
      Row(
        v.client.id,
        v.client.versions,
        v.client.evidence,
        v.canRead.name,
        v.canWrite.name,
        v.readBlockers,
        v.writeBlockers,
        v.unknownForRead,
        v.unknownForWrite,
        v.dropForRead.map(_.feature),
        v.dropForWrite.map(_.feature),
        drops.filterNot(_.droppable).map(_.feature),
        v.writeNeedsTruncateHistory,
        v.client.sources.map(_.url),
        table.displayName
      )
    }
  }
}
