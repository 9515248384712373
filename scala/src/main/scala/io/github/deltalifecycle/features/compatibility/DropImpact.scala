package io.github.deltalifecycle.features.compatibility

import io.github.deltalifecycle.features.dropfeature.DroppableFeatures
import org.apache.spark.sql.delta.{CheckpointProtectionTableFeature, TableFeature}
import org.apache.spark.sql.delta.actions.Protocol

/**
 * What dropping one feature does to the known clients, for each way of dropping it.
 *
 * @param gains
 *   per client that gains access, e.g. `deltalake-1.x: read (fast), read+write (truncate-history)`
 * @param protectionBlocksWrites
 *   clients that could write without the feature but cannot after the fast drop, because of the
 *   `checkpointProtection` it adds (the history-truncating drop does not add it)
 */
final case class DropImpact(gains: Seq[String], protectionBlocksWrites: Seq[String])

object DropImpact {

  /** The impact of dropping `feature` from `protocol`, or nothing for a name it does not hold. */
  def of(protocol: Protocol, feature: String): DropImpact =
    TableFeature.featureNameToFeature(feature).filter(
      protocol.implicitlyAndExplicitlySupportedFeatures.contains
    ).map { f =>
      val truncated = DroppableFeatures.protocolAfterDrop(protocol, f, protect = false)
      // The fast drop of a reader-writer feature leaves checkpointProtection (DropFeature).
      val fast = DroppableFeatures.protocolAfterDrop(protocol, f, protect = f.isReaderWriterFeature)
      val clients = ClientCapabilities.all
      def verdicts(p: Protocol) = clients.map(Compatibility.evaluate(p, _))
      val (before, afterFast, afterTruncate) =
        (verdicts(protocol), verdicts(fast), verdicts(truncated))
      def gained(b: ClientVerdict, a: ClientVerdict): Option[String] = {
        val read = b.canRead != AccessAnswer.Yes && a.canRead == AccessAnswer.Yes
        val write = b.canWrite != AccessAnswer.Yes && a.canWrite == AccessAnswer.Yes
        Option.when(read || write)(Seq("read" -> read, "write" -> write).collect {
          case (what, true) => what
        }.mkString("+"))
      }
      val gains = clients.indices.flatMap { i =>
        val ways = Seq(
          gained(before(i), afterFast(i)).map(g => s"$g (fast)"),
          gained(before(i), afterTruncate(i)).map(g => s"$g (truncate-history)")
        ).flatten
        Option.when(ways.nonEmpty)(s"${clients(i).id}: ${ways.mkString(", ")}")
      }
      val blocked = clients.indices.collect {
        case i
            if afterTruncate(i).canWrite == AccessAnswer.Yes &&
              afterFast(i).writeBlockers.contains(CheckpointProtectionTableFeature.name) =>
          clients(i).id
      }
      DropImpact(gains, blocked)
    }.getOrElse(DropImpact(Nil, Nil))
}
