package io.github.deltalifecycle.core

import org.apache.hadoop.fs.Path
import org.apache.spark.sql.delta.actions.{
  AddFile,
  DomainMetadata,
  Metadata,
  Protocol,
  RemoveFile,
  SetTransaction
}

/** The reconstructed state of a table at one version. */
final case class LogSnapshot(
    tablePath: Path,
    version: Long,
    protocol: Protocol,
    metadata: Metadata,
    activeFiles: Vector[AddFile],
    tombstones: Vector[RemoveFile],
    setTransactions: Map[String, SetTransaction],
    domainMetadata: Map[String, DomainMetadata],
    segment: LogSegment
) {

  def sizeInBytes: Long = activeFiles.iterator.map(_.size).sum
  def configuration: Map[String, String] = metadata.configuration
}
