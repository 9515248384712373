package io.github.deltalifecycle.sql.plans

import org.apache.spark.sql.catalyst.expressions.Attribute
import org.apache.spark.sql.types._

/** The one-row result of the three redirect statements. */
object RedirectStatus {
  val schema: StructType = StructType(Seq(
    StructField("table", StringType, nullable = false),
    StructField("state", StringType, nullable = false),
    StructField("mode", StringType),
    StructField("type", StringType),
    StructField("destination", StringType),
    StructField("destinationLocation", StringType),
    StructField("noRedirectRules", ArrayType(StringType, containsNull = false), nullable = false),
    StructField("version", LongType, nullable = false),
    StructField("filesCopied", LongType, nullable = false),
    StructField("bytesCopied", LongType, nullable = false),
    StructField("commitVersions", ArrayType(LongType, containsNull = false), nullable = false),
    StructField("steps", ArrayType(StringType, containsNull = false), nullable = false)
  ))

  def outputAttributes: Seq[Attribute] = LifecycleStatement.attributes(schema)
}
