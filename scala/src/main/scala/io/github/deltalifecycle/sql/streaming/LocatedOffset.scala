package io.github.deltalifecycle.sql.streaming

import com.fasterxml.jackson.databind.ObjectMapper
import com.fasterxml.jackson.databind.node.ObjectNode
import io.github.deltalifecycle.features.redirect.StreamPosition
import org.apache.spark.sql.connector.read.streaming.{Offset => OffsetV2}
import org.apache.spark.sql.delta.sources.DeltaSourceOffset
import org.apache.spark.sql.delta.util.JsonUtils
import org.apache.spark.sql.execution.streaming.Offset

/**
 * delta-spark's streaming offset with the location whose versions it counts, so a query that
 * continues at a redirect's other location knows which versions its checkpoint names. The location
 * is one more field of delta-spark's own JSON, which delta-spark's reader ignores: a checkpoint
 * written here stays readable by a session without this extension.
 */
final class LocatedOffset(val delta: DeltaSourceOffset, val location: String) extends Offset {
  override def json(): String = {
    val node = LocatedOffset.mapper.readTree(delta.json).asInstanceOf[ObjectNode]
    node.put(LocatedOffset.LocationField, location)
    LocatedOffset.mapper.writeValueAsString(node)
  }
}

object LocatedOffset {
  val LocationField = "deltaLifecycleLocation"
  private val mapper = new ObjectMapper()

  /**
   * The delta-spark offset in `offset`, and the location it was read at when it says so (offsets of
   * queries that ran without this extension do not).
   */
  def split(offset: OffsetV2): (DeltaSourceOffset, Option[String]) = offset match {
    case located: LocatedOffset => (located.delta, Some(located.location))
    case delta: DeltaSourceOffset => (delta, None)
    case other =>
      val node = mapper.readTree(other.json).asInstanceOf[ObjectNode]
      val location = Option(node.remove(LocationField)).map(_.asText)
      (
        JsonUtils.mapper.readValue(mapper.writeValueAsString(node), classOf[DeltaSourceOffset]),
        location
      )
  }

  def position(offset: DeltaSourceOffset): StreamPosition =
    StreamPosition(offset.reservoirVersion, offset.index, offset.isInitialSnapshot)

  def at(offset: DeltaSourceOffset, p: StreamPosition): DeltaSourceOffset =
    DeltaSourceOffset(offset.reservoirId, p.version, p.index, p.initialSnapshot)
}
