package io.github.deltalifecycle.sql.plans

import io.github.deltalifecycle.features.redirect.Access
import io.github.deltalifecycle.sql.resolution.LifecycleTableRef
import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeReference}
import org.apache.spark.sql.catalyst.plans.logical.LeafNode
import org.apache.spark.sql.execution.command.LeafRunnableCommand
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.types._

/**
 * A statement of this project as parsed: the table is still a name, so the plan stays unresolved
 * until [[io.github.deltalifecycle.sql.analysis.ResolveLifecycleStatements]] resolves [[table]] as
 * [[target]] says and replaces the plan with [[toCommand]] of it. Its output is the command's
 * result schema.
 */
trait LifecycleStatement extends LeafNode {
  def table: Seq[String]

  /** Which table the statement acts on: the one named, or where the named one's redirect routes. */
  def target: LifecycleStatement.Target

  /** The command that runs the statement on `ref`, the table [[target]] chose. */
  def toCommand(ref: LifecycleTableRef): LeafRunnableCommand

  protected def resultSchema: StructType
  override lazy val resolved: Boolean = false
  override def output: Seq[Attribute] = LifecycleStatement.attributes(resultSchema)
}

/**
 * A statement's result: its [[schema]], and fresh attributes of it for each plan that outputs it.
 */
trait StatementResult {
  def schema: StructType
  def outputAttributes: Seq[Attribute] = LifecycleStatement.attributes(schema)
}

object LifecycleStatement {

  /** Fresh attributes for a schema: each plan instance needs its own expression ids. */
  def attributes(schema: StructType): Seq[Attribute] =
    schema.fields.map(f => AttributeReference(f.name, f.dataType, f.nullable, f.metadata)()).toSeq

  /**
   * The schema of a statement's result rows: [[result]] of `columns`, then `table`, which table the
   * statement acted on (the destination when the named table is redirected).
   */
  def resultWithTable(columns: String*): StructType =
    result(columns :+ "table STRING NOT NULL": _*)

  /**
   * A result schema from its columns in DDL (`name TYPE [NOT NULL]`, comma-separated), as the SQL
   * reference documents them. They are read with Spark's defaults, whatever the session sets (a
   * default collation, the type TIMESTAMP means). No array of a result holds a null, which DDL
   * cannot say: every array's elements are declared non-null.
   */
  def result(columns: String*): StructType = {
    val parsed = SQLConf.withExistingConf(new SQLConf)(StructType.fromDDL(columns.mkString(", ")))
    StructType(parsed.fields.map(f => f.copy(dataType = withoutNullElements(f.dataType))))
  }

  private def withoutNullElements(dataType: DataType): DataType = dataType match {
    case array: ArrayType => ArrayType(withoutNullElements(array.elementType), containsNull = false)
    case struct: StructType =>
      StructType(struct.fields.map(f => f.copy(dataType = withoutNullElements(f.dataType))))
    case other => other
  }

  /** The versions the statement committed on the table, in order. */
  val commitVersionsColumn: String = "commitVersions ARRAY<BIGINT> NOT NULL"

  /** What each step of the statement did (or, for a DRY RUN, would do). */
  val stepsColumn: String = "steps ARRAY<STRING> NOT NULL"

  sealed trait Target

  object Target {

    /** The table named, redirected or not: the redirect's own statements are about it. */
    case object Named extends Target

    /**
     * Where the named table's redirect routes `access`, as every query's
     * ([[io.github.deltalifecycle.sql.routing.Router]]).
     */
    final case class Routed(access: Access) extends Target

    val reading: Target = Routed(Access.Read)

    /** Routed as a write by `operation`, the statement's name in errors and NoRedirectRules. */
    def writing(operation: String): Target = Routed(Access.Write(Set(operation)))
  }
}
