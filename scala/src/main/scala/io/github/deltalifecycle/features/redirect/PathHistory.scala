package io.github.deltalifecycle.features.redirect

import java.net.URI

import io.github.deltalifecycle.core.{ActionReader, CommitFile, OrderedPrefetch}
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.Row
import org.apache.spark.sql.delta.actions.{
  AddCDCFile,
  AddFile,
  DeletionVectorDescriptor,
  RemoveFile
}

/**
 * What the actions on one path say, merged over its actions: the newest one (by version; at one
 * version an add after a remove), whether it is an add, its deletion-vector file, the largest size
 * any action gives, and every deletion-vector file any action names (resolved URIs).
 */
private[redirect] final case class PathHistory(
    version: Long,
    isAdd: Boolean,
    dataFile: String,
    size: Long,
    newestDv: Option[String],
    dvs: Set[String]
) {
  def merge(o: PathHistory): PathHistory = {
    val newest = if (version > o.version || (version == o.version && isAdd)) this else o
    newest.copy(size = math.max(size, o.size), dvs = dvs ++ o.dvs)
  }

  /**
   * The data file, required when the newest action is an add, and its deletion-vector files, the
   * newest add's one required.
   */
  def files(root: Path): Seq[CopyFile] = ((dataFile -> size) +: dvs.toSeq.map(_ -> -1L)).map {
    case (p, bytes) =>
      val required = isAdd && (p == dataFile || newestDv.contains(p))
      CopyFile(p, ReferencedFiles.relativeTo(root, new Path(p)), bytes, required, isLog = false, 0L)
  }
}

private[redirect] object PathHistory {

  /** The kinds of action an action row names. */
  val Add = 1
  val Remove = 0
  val Cdc = 2

  /** One action row: its version, kind, path, size and deletion vector. */
  def of(root: Path, row: Row): PathHistory = of(
    root,
    row.getAs[Long]("version"),
    row.getAs[Int]("kind") == Add,
    row.getAs[String]("path"),
    row.getAs[Long]("size"),
    Option(row.getAs[Row]("dv")).map(descriptorOf)
  )

  /** One action: its version, whether it adds the file, its raw path, size and deletion vector. */
  def of(
      root: Path,
      version: Long,
      isAdd: Boolean,
      path: String,
      size: Long,
      dv: Option[DeletionVectorDescriptor]
  ): PathHistory = {
    val dvPath = dv.flatMap(dvFile(root, _)).map(_.toString)
    PathHistory(
      version,
      isAdd,
      resolve(root, actionPath(path)).toString,
      size,
      dvPath,
      dvPath.toSet
    )
  }

  /**
   * What the commits after the checkpoint say of each raw path, read on the driver (a few files at
   * a time, in order).
   */
  def ofCommits(
      conf: Configuration,
      root: Path,
      commits: Seq[CommitFile]
  ): Map[String, PathHistory] = {
    val fs = root.getFileSystem(conf)
    val actions = OrderedPrefetch.map(commits.iterator) { c =>
      c.version -> ActionReader.readJsonSelected(fs, c.status, Set("add", "remove", "cdc"))
    }
    actions.flatMap { case (version, inCommit) =>
      def action(isAdd: Boolean, path: String, size: Long, dv: Option[DeletionVectorDescriptor]) =
        path -> PathHistory.of(root, version, isAdd, path, size, dv)
      inCommit.collect {
        case a: AddFile => action(isAdd = true, a.path, a.size, Option(a.deletionVector))
        case r: RemoveFile =>
          action(isAdd = false, r.path, r.size.getOrElse(-1L), Option(r.deletionVector))
        case c: AddCDCFile => action(isAdd = false, c.path, c.size, None)
      }
    }.foldLeft(Map.empty[String, PathHistory]) { case (merged, (path, history)) =>
      merged.updated(path, merged.get(path).fold(history)(_.merge(history)))
    }
  }

  /** A deletion vector's descriptor from its row. */
  private def descriptorOf(d: Row): DeletionVectorDescriptor = DeletionVectorDescriptor(
    storageType = d.getAs[String]("storageType"),
    pathOrInlineDv = d.getAs[String]("pathOrInlineDv"),
    offset = Option(d.getAs[Integer]("offset")).map(_.intValue),
    sizeInBytes = Option(d.getAs[Integer]("sizeInBytes")).fold(0)(_.intValue),
    cardinality = Option(d.getAs[java.lang.Long]("cardinality")).fold(0L)(_.longValue),
    maxRowIndex = Option(d.getAs[java.lang.Long]("maxRowIndex")).map(_.longValue)
  )

  /** The file of a deletion vector, resolved against `root`; none for an inline vector. */
  private def dvFile(root: Path, descriptor: DeletionVectorDescriptor): Option[Path] =
    // "i" is an inline vector: no file.
    if (descriptor.storageType != "i") Some(resolve(root, descriptor.absolutePath(root)))
    else None

  /** An action's `path`: a URI, relative to the table root unless it is absolute. */
  private def actionPath(uri: String): Path = new Path(new URI(uri))

  private def resolve(root: Path, p: Path): Path = {
    val absolute = if (p.isAbsolute || p.toUri.getScheme != null) p else new Path(root, p)
    absolute.makeQualified(root.toUri, root)
  }
}
