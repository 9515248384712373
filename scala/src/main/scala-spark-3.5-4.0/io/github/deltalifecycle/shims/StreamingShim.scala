package io.github.deltalifecycle.shims

import org.apache.spark.sql.execution.streaming.{
  StreamExecution,
  StreamingRelation => SparkStreamingRelation
}

/**
 * Where Spark keeps the classes of its streaming engine (Spark 3.5 and 4.0:
 * `org.apache.spark.sql.execution.streaming`).
 */
object StreamingShim {
  type StreamingRelation = SparkStreamingRelation

  /** The local property that names the streaming query a micro-batch belongs to. */
  val QueryIdKey: String = StreamExecution.QUERY_ID_KEY
}
