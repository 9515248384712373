package io.github.deltalifecycle.core

import java.net.URI

import scala.collection.mutable

import org.apache.hadoop.fs.{FileSystem, Path}
import org.apache.spark.sql.delta.actions.{
  Action,
  AddFile,
  DeletionVectorDescriptor,
  DomainMetadata,
  Metadata,
  Protocol,
  RemoveFile,
  SetTransaction
}

/** The identity of a logical file: its canonical path and the id of its deletion vector. */
final case class FileKey(canonicalPath: String, deletionVectorId: Option[String])

/**
 * Computes [[FileKey]]s for the file actions of one table. It holds strings only, so the tasks of a
 * Spark job compute the same keys as the driver: paths are qualified as the table's file system
 * qualifies them (its URI and working directory), without opening it.
 */
final class FileKeys(fsUri: String, workingDir: String, root: String) extends Serializable {

  def this(fs: FileSystem, tablePath: Path) = this(
    fs.getUri.toString,
    fs.getWorkingDirectory.toString,
    fs.makeQualified(tablePath).toString
  )

  @transient private lazy val uri = new URI(fsUri)
  @transient private lazy val cwd = new Path(workingDir)
  @transient private lazy val rootPath = new Path(root)

  def of(path: String, dv: DeletionVectorDescriptor): FileKey =
    FileKey(canonicalPath(path), Option(dv).map(_.uniqueId))

  /**
   * Paths in the log are URIs, relative to the table root or absolute; two spellings of one file
   * (relative, absolute, with or without scheme) must meet under one key.
   */
  def canonicalPath(path: String): String = {
    val p = new Path(new URI(path))
    val q = (if (p.isAbsolute) p else new Path(rootPath, p)).makeQualified(uri, cwd).toUri
    // "file:/x" and "file:///x" name the same file: drop an empty authority.
    val authority = if (q.getAuthority == null || q.getAuthority.isEmpty) null else q.getAuthority
    new URI(q.getScheme, authority, q.getPath, q.getQuery, q.getFragment).toString
  }
}

/**
 * Action reconciliation as PROTOCOL.md defines it, applied oldest to newest: the newest protocol
 * and metadata win, an add replaces the same logical file and clears its tombstone, a remove drops
 * it and leaves a tombstone, txn keeps the newest version per application, and domain metadata
 * keeps the newest per domain unless it was removed.
 */
final class StateReconciler(fs: FileSystem, tablePath: Path) {
  private val keys = new FileKeys(fs, tablePath)
  private var protocol: Protocol = _
  private var metadata: Metadata = _
  private val active = new java.util.LinkedHashMap[FileKey, AddFile]()
  private val tombstones = new java.util.HashMap[FileKey, RemoveFile]()
  private val txns = mutable.LinkedHashMap.empty[String, SetTransaction]
  private val domains = mutable.LinkedHashMap.empty[String, DomainMetadata]

  def currentProtocol: Option[Protocol] = Option(protocol)
  def currentMetadata: Option[Metadata] = Option(metadata)

  def apply(action: Action): Unit = action match {
    case a: AddFile =>
      val key = keys.of(a.path, a.deletionVector)
      active.remove(key) // re-insert so iteration order follows the newest add
      active.put(key, a)
      tombstones.remove(key)
    case r: RemoveFile =>
      val key = keys.of(r.path, r.deletionVector)
      active.remove(key)
      tombstones.put(key, r)
    case p: Protocol => protocol = p
    case m: Metadata => metadata = m
    case t: SetTransaction => txns(t.appId) = t
    case d: DomainMetadata => if (d.removed) domains.remove(d.domain) else domains(d.domain) = d
    case _ => // commitInfo, cdc, checkpointMetadata, sidecar: not table state
  }

  def applyAll(actions: IterableOnce[Action]): Unit = actions.iterator.foreach(apply)

  def activeFiles: Vector[AddFile] = {
    val out = Vector.newBuilder[AddFile]
    active.values().forEach(a => out += a)
    out.result()
  }

  def tombstoneFiles: Vector[RemoveFile] = {
    val out = Vector.newBuilder[RemoveFile]
    tombstones.values().forEach(r => out += r)
    out.result()
  }

  def setTransactions: Map[String, SetTransaction] = txns.toMap
  def domainMetadata: Map[String, DomainMetadata] = domains.toMap

  def canonicalPath(path: String): String = keys.canonicalPath(path)
}
