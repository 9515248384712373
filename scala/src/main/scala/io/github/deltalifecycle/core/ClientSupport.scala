package io.github.deltalifecycle.core

import org.apache.spark.sql.delta.TableFeature
import org.apache.spark.sql.delta.actions.Protocol

/**
 * Which protocols this client (delta-lifecycle with the delta-spark it runs beside) fully supports.
 * Operations that rewrite or delete log files for a version (compaction, cleanup, checkpoints) must
 * understand the protocol of that version: a feature they do not know may change what the log
 * means.
 */
object ClientSupport {

  /** Features this project implements itself, beyond delta-spark's registry. */
  val OwnFeatures: Set[String] = Set("redirectReaderWriter", "redirectWriterOnly")

  def supportsFeature(name: String): Boolean =
    OwnFeatures.contains(name) || TableFeature.featureNameToFeature(name).isDefined

  /**
   * The features `protocol` names that this client does not support; empty if it is fully
   * supported.
   */
  def unsupportedFeatures(protocol: Protocol): Set[String] =
    (protocol.readerFeatureNames ++ protocol.writerFeatureNames).filterNot(supportsFeature)

  def isSupported(protocol: Protocol): Boolean =
    protocol.minReaderVersion <= ProtocolChecks.MaxReaderVersion &&
      protocol.minWriterVersion <= ProtocolChecks.MaxWriterVersion &&
      unsupportedFeatures(protocol).isEmpty
}
