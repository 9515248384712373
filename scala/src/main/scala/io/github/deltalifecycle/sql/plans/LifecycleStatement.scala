package io.github.deltalifecycle.sql.plans

import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeReference}
import org.apache.spark.sql.catalyst.plans.logical.LeafNode
import org.apache.spark.sql.types.StructType

/**
 * A statement of this project as parsed: the table is still a name, so the plan stays unresolved
 * until [[io.github.deltalifecycle.sql.analysis.ResolveLifecycleStatements]] replaces it with its
 * command. Its output is the command's result schema.
 */
trait LifecycleStatement extends LeafNode {
  def table: Seq[String]
  protected def resultSchema: StructType
  override lazy val resolved: Boolean = false
  override def output: Seq[Attribute] = LifecycleStatement.attributes(resultSchema)
}

object LifecycleStatement {

  /** Fresh attributes for a schema: each plan instance needs its own expression ids. */
  def attributes(schema: StructType): Seq[Attribute] =
    schema.fields.map(f => AttributeReference(f.name, f.dataType, f.nullable, f.metadata)()).toSeq
}
