package io.github.deltalifecycle.sql.plans

import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeReference}
import org.apache.spark.sql.catalyst.plans.logical.LeafNode
import org.apache.spark.sql.types._

/**
 * `DESCRIBE PROTOCOL HISTORY <table>` as parsed: the table is still a name. The analysis
 * rule [[io.github.deltalifecycle.sql.analysis.ResolveLifecycleStatements]] turns it into
 * [[io.github.deltalifecycle.sql.commands.DescribeProtocolHistoryCommand]].
 */
case class DescribeProtocolHistory(table: Seq[String]) extends LeafNode {
  override lazy val resolved: Boolean = false
  override def output: Seq[Attribute] = DescribeProtocolHistory.outputAttributes
}

object DescribeProtocolHistory {
  val schema: StructType = StructType(Seq(
    StructField("version", LongType, nullable = false),
    StructField("timestamp", TimestampType),
    StructField("operation", StringType),
    StructField("minReaderVersion", IntegerType, nullable = false),
    StructField("minWriterVersion", IntegerType, nullable = false),
    StructField("readerFeatures", ArrayType(StringType, containsNull = false)),
    StructField("writerFeatures", ArrayType(StringType, containsNull = false)),
    StructField("checkpoint", StringType),
    StructField("compactions", ArrayType(StringType, containsNull = false), nullable = false),
    StructField("requireCheckpointProtectionBeforeVersion", LongType)))

  /** Fresh attributes for the schema: each plan instance needs its own expression ids. */
  def outputAttributes: Seq[Attribute] =
    schema.fields.map(f => AttributeReference(f.name, f.dataType, f.nullable, f.metadata)()).toSeq
}
