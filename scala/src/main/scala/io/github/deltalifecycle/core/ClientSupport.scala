package io.github.deltalifecycle.core

import org.apache.spark.sql.delta.TableFeature
import org.apache.spark.sql.delta.actions.Protocol

/**
 * Which protocols this client (delta-lifecycle with the delta-spark it runs beside) supports, as
 * delta-spark decides it for itself: a reader must know the protocol's reader features, a writer
 * every feature (writer features change what writers must do, never what the log means to a
 * reader). The features known are those in the running delta-spark's registry, and the redirect
 * features, which this project implements.
 */
object ClientSupport {

  /** Features this project implements itself, beyond delta-spark's registry. */
  val OwnFeatures: Set[String] = Set("redirectReaderWriter", "redirectWriterOnly")

  def supportsFeature(name: String): Boolean =
    OwnFeatures.contains(name) || TableFeature.featureNameToFeature(name).isDefined

  /** The reader features of `protocol` this client does not know: it cannot read the log. */
  def unsupportedForReading(protocol: Protocol): Set[String] =
    protocol.readerFeatureNames.filterNot(supportsFeature)

  /** The features of `protocol` this client does not know: it cannot change the table. */
  def unsupportedForWriting(protocol: Protocol): Set[String] =
    (protocol.readerFeatureNames ++ protocol.writerFeatureNames).filterNot(supportsFeature)

  def canRead(protocol: Protocol): Boolean =
    protocol.minReaderVersion <= ProtocolChecks.MaxReaderVersion &&
      unsupportedForReading(protocol).isEmpty

  def canWrite(protocol: Protocol): Boolean =
    canRead(protocol) && protocol.minWriterVersion <= ProtocolChecks.MaxWriterVersion &&
      unsupportedForWriting(protocol).isEmpty
}
