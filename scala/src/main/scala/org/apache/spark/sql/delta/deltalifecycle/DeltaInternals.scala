package org.apache.spark.sql.delta.deltalifecycle

import org.apache.spark.sql.delta.TypeWideningMetadata
import org.apache.spark.sql.types.{StructField, StructType}

/**
 * The one place where delta-lifecycle reaches delta-spark members that are `private[delta]`. It
 * lives in delta-spark's package for that reason only; keep it small, and keep every such access
 * here. The members it uses are the same on every line (delta-spark 3.3 and 4.4).
 */
object DeltaInternals {

  /** The field-metadata key under which delta-spark records a column's type changes. */
  val TypeChangesKey: String = TypeWideningMetadata.TYPE_CHANGES_METADATA_KEY

  /** Whether any field of `schema`, at any depth, records type changes. */
  def hasTypeChanges(schema: StructType): Boolean =
    TypeWideningMetadata.containsTypeWideningMetadata(schema)

  /**
   * `schema` without its type-change records, and the fields (with their paths) that had them, as
   * delta-spark's own removal of type widening computes them.
   */
  def withoutTypeChanges(schema: StructType): (StructType, Seq[(Seq[String], StructField)]) =
    TypeWideningMetadata.removeTypeWideningMetadata(schema)
}
