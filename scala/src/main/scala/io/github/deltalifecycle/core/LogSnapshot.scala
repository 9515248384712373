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

/**
 * A version's protocol and metadata without its files: all that routing, DRY RUN, protocol history
 * and the maintenance decisions need, and small whatever the table's size.
 */
final case class SnapshotHead(version: Long, protocol: Protocol, metadata: Metadata) {
  def configuration: Map[String, String] = metadata.configuration
}

/**
 * The reconstructed state of a table at one version, every active file included, held on the
 * driver. Its size grows with the table, so operations never build it (they use [[SnapshotHead]]
 * and delta-spark's distributed snapshot); it serves the checks that compare this core's replay
 * with delta-spark's.
 */
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
