package io.github.deltalifecycle.core

import org.apache.spark.sql.delta.actions.Protocol

/** Validity rules of the protocol action itself (not of the features it names). */
object ProtocolChecks {
  val MaxReaderVersion = 3
  val MaxWriterVersion = 7

  def validate(p: Protocol, version: Long): Unit = {
    if (p.minReaderVersion < 1 || p.minReaderVersion > MaxReaderVersion) {
      throw LogErrors.invalidProtocol(
        version,
        s"minReaderVersion ${p.minReaderVersion} is outside 1..$MaxReaderVersion"
      )
    }
    if (p.minWriterVersion < 1 || p.minWriterVersion > MaxWriterVersion) {
      throw LogErrors.invalidProtocol(
        version,
        s"minWriterVersion ${p.minWriterVersion} is outside 1..$MaxWriterVersion"
      )
    }
  }
}
