package io.github.deltalifecycle.shims

import org.apache.spark.sql.execution.streaming.runtime.{
  StreamExecution,
  StreamingRelation => SparkStreamingRelation
}

/**
 * Where Spark keeps the classes of its streaming engine (Spark 4.1 and later:
 * `org.apache.spark.sql.execution.streaming.runtime`).
 */
object StreamingShim {
  type StreamingRelation = SparkStreamingRelation

  /** The local property that names the streaming query a micro-batch belongs to. */
  val QueryIdKey: String = StreamExecution.QUERY_ID_KEY
}
