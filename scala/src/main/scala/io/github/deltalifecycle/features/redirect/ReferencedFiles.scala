package io.github.deltalifecycle.features.redirect

import java.net.URI

import io.github.deltalifecycle.core.{
  FilePartitions,
  FileState,
  LogCheckpoint,
  LogFiles,
  LogListing
}
import org.apache.hadoop.fs.Path
import org.apache.spark.rdd.RDD
import org.apache.spark.sql.{Column, DataFrame, Row, SparkSession}
import org.apache.spark.sql.delta.actions.DeletionVectorDescriptor
import org.apache.spark.sql.delta.util.FileNames
import org.apache.spark.sql.functions._
import org.apache.spark.sql.types._

/**
 * One file a copy handles. `source` is the qualified URI string of the file; `target` is its path
 * relative to the table root (a Hadoop path string, not URL-encoded), or null for a file outside
 * the source root, which is not copied: the log keeps naming it. `size` is the size the log gives
 * (-1 when it gives none, as for deletion-vector files). `required` files must exist (the copied
 * version reads them); the others (files only older retained versions read) are copied when they
 * still exist. Log files carry their modification time, which the copy keeps.
 */
final case class CopyFile(
    source: String,
    target: String,
    size: Long,
    required: Boolean,
    isLog: Boolean,
    modificationTime: Long
)

/**
 * The files a table's retained versions reference, read from its log as a Spark RDD: the log is
 * read by Spark's JSON and Parquet readers on the executors and the result is never collected. Each
 * element is a file (Right), or how many more files one partition counted outside the table's root
 * without listing them (Left).
 *
 * "Retained" versions are those from the oldest version the log can rebuild (a checkpoint, or
 * version 0) up to the copied version. They reference the `add` files of that checkpoint (and its
 * sidecars) and of every later commit, the deletion-vector files of those adds, the `cdc` files of
 * those commits, and the files their `remove` actions name (a time-travel read of the version
 * before the remove still needs them). A file is `required` when the copied version reads it: its
 * newest add/remove action is an add, or it is the deletion vector of such an add.
 */
object ReferencedFiles {

  private val dvType = StructType(Seq(
    StructField("storageType", StringType),
    StructField("pathOrInlineDv", StringType),
    StructField("offset", IntegerType),
    StructField("sizeInBytes", IntegerType),
    StructField("cardinality", LongType),
    StructField("maxRowIndex", LongType)
  ))

  private def fileAction(withDv: Boolean): StructType = StructType(
    Seq(StructField("path", StringType), StructField("size", LongType)) ++
      (if (withDv) Seq(StructField("deletionVector", dvType)) else Nil)
  )

  /** The columns of an action line (commit, checkpoint or sidecar) this reader needs. */
  private val actionSchema = StructType(Seq(
    StructField("add", fileAction(withDv = true)),
    StructField("remove", fileAction(withDv = true)),
    StructField("cdc", fileAction(withDv = false)),
    StructField("sidecar", StructType(Seq(StructField("path", StringType))))
  ))

  private val Add = 1
  private val Remove = 0
  private val Cdc = 2

  /**
   * The referenced files of the table at `root` (qualified) for the versions up to `upTo`, one row
   * per file, deduplicated. With `after`, only the files the commits after that version name (a
   * copy that already has the files of the versions up to it): no checkpoint is read. The log is
   * read as `storage` opens the table.
   *
   * Spark's readers read the log; the rest is two RDD aggregations (per action path, then per
   * file), which run in the job that first uses the result, as stages of it: no SQL window or
   * aggregate, whose adaptive execution would make each exchange a job of its own, planned and
   * compiled in turn.
   */
  def of(
      spark: SparkSession,
      storage: StorageAccess,
      root: Path,
      listing: LogListing,
      upTo: Long,
      after: Option[Long] = None
  ): RDD[Either[Long, CopyFile]] = {
    val upToListing = listing.copy(
      commits = listing.commits.filter(_.version <= upTo),
      checkpoints = listing.checkpoints.filter(_.version <= upTo),
      compactions = listing.compactions.filter(_.end <= upTo),
      checksums = listing.checksums.filter(_._1 <= upTo)
    )
    val options = storage.options(root)
    val base = after.fold(upToListing.earliestReconstructableVersion)(_ + 1)
    val checkpoint =
      if (after.isDefined || (upToListing.commit(0).isDefined && base == 0)) None
      else upToListing.checkpoints.find(_.version == base)
    val commitPaths =
      upToListing.commits.filter(_.version >= base).map(_.status.getPath.toString)
    val fromCommits =
      if (commitPaths.isEmpty) None
      else Some(actions(
        read(spark, options, commitPaths, json = true),
        regexp_extract(col("_metadata.file_name"), "^0*(\\d+)\\.json$", 1).cast(LongType)
      ))
    val checkpointed =
      checkpoint.map(c => checkpointRows(spark, storage, options, upToListing.logPath, c))
    val checkpointAdds: Option[DataFrame] = for {
      c <- checkpoint
      (rows, _) <- checkpointed
    } yield actions(rows.where(col("add").isNotNull), lit(c.version))
    if (checkpoint.isEmpty && fromCommits.isEmpty) return spark.sparkContext.emptyRDD
    // The copy caches this list (TableCopy), so its partitions hold a bounded number of files.
    val commitBytes = upToListing.commits.filter(_.version >= base).map(_.status.getLen).sum
    val partitions = math.max(
      spark.sparkContext.defaultParallelism,
      FilePartitions.partitionsFor(
        spark,
        FilePartitions.estimatedFiles(
          checkpoint.fold(0L)(_.sizeInBytes) + checkpointed.fold(0L)(_._2),
          commitBytes
        )
      )
    )
    val rootString = root.toString
    val files: RDD[Either[Long, CopyFile]] = fromCommits match {
      case Some(commits) if checkpoint.isDefined && commitBytes > FileState.DriverTailBytes =>
        merged(rootString, (checkpointAdds.toSeq :+ commits).reduce(_ unionByName _), partitions)
      case _ =>
        // A checkpoint is reconciled already, and the commits after it are few: their rows are
        // merged per path on the driver, and one pass over the checkpoint merges each of its adds
        // with what the commits say of the same path.
        val root = new Path(rootString)
        val tail = fromCommits.toSeq.flatMap(_.collect())
          .groupBy(_.getAs[String]("path"))
          .map { case (path, rows) => path -> rows.map(PathHistory.of(root, _)).reduce(_ merge _) }
        val fromTail = spark.sparkContext.parallelize(tail.values.toSeq.flatMap(_.files(root)), 1)
        (checkpointAdds.map(oncePerAdd(rootString, _, tail)).toSeq :+
          fromTail.map(Right(_): Either[Long, CopyFile])).reduce(_ union _)
    }
    // A file comes out more than once as a deletion-vector file (many files share one), as a file
    // both the checkpoint and the commits name, or under two spellings of its path.
    files.map {
      case Right(f) => f.source -> (Right(f): Either[Long, CopyFile])
      case counted => "" -> counted
    }.reduceByKey(mergeListed _, partitions).values
  }

  private def mergeListed(
      a: Either[Long, CopyFile],
      b: Either[Long, CopyFile]
  ): Either[Long, CopyFile] = (a, b) match {
    case (Right(x), Right(y)) =>
      Right(x.copy(size = math.max(x.size, y.size), required = x.required || y.required))
    case (Left(x), Left(y)) => Left(x + y)
    case _ => a
  }

  /**
   * One pass over a checkpoint's `adds`: each add's files, merged with what the commits after the
   * checkpoint say of its path (`tail`). An add certainly outside the root (which is not copied)
   * that carries no deletion vector and that no commit names is only counted: a table whose files
   * live elsewhere lists none of them one by one (Left, per partition).
   */
  private def oncePerAdd(
      rootString: String,
      adds: DataFrame,
      tail: Map[String, PathHistory]
  ): RDD[Either[Long, CopyFile]] = {
    val counted = outsideOf(new Path(rootString))(col("path")) && col("dv").isNull &&
      !col("path").isin(tail.keys.toSeq: _*)
    val rows = adds.select(counted.as("counted"), when(!counted, struct(adds.columns.map(col): _*)))
    rows.rdd.mapPartitions { it =>
      val r = new Path(rootString)
      var elsewhere = 0L
      it.flatMap { row =>
        if (row.getBoolean(0)) { elsewhere += 1; Nil }
        else {
          val add = row.getStruct(1)
          val history = PathHistory.of(r, add)
          tail.get(add.getAs[String]("path")).fold(history)(history.merge).files(r).map(Right(_))
        }
      } ++ Iterator.single(Left(elsewhere))
    }
  }

  /** Every row merged per path in a Spark job, for a log too long to merge on the driver. */
  private def merged(
      rootString: String,
      rows: DataFrame,
      partitions: Int
  ): RDD[Either[Long, CopyFile]] = rows.rdd.mapPartitions { it =>
    val r = new Path(rootString)
    it.map(row => row.getAs[String]("path") -> PathHistory.of(r, row))
  }.reduceByKey(_ merge _, partitions)
    .mapPartitions { it =>
      val r = new Path(rootString)
      it.flatMap(_._2.files(r).map(Right(_)))
    }

  /**
   * Whether an action's raw `path` certainly names a file outside `root`: an absolute path, with no
   * scheme or the root's, in plain form (no percent-encoding, no empty, `.` or `..` segment), in
   * which the root's own path does not occur. Plain string tests in generated code; a path they are
   * unsure of is resolved in full, and a root whose path a URI would spell otherwise leaves every
   * path to that.
   */
  private def outsideOf(root: Path): Column => Column = {
    val uri = root.toUri
    val rootPath = uri.getPath.stripSuffix("/") + "/"
    val plainRoot = new URI(null, null, rootPath, null).getRawPath == rootPath
    path =>
      if (!plainRoot || rootPath == "/" || uri.getScheme == null) lit(false)
      else {
        val scheme = uri.getScheme + ":"
        val absolute = path.startsWith("/") || path.startsWith(scheme + "/")
        // No "//" but the one that may open an authority right after the scheme.
        val noEmptySegment = when(
          path.startsWith(scheme + "//"),
          locate("//", path, scheme.length + 3) === 0
        ).otherwise(!path.contains("//"))
        val plain = !path.contains("%") && !path.contains("/./") && !path.contains("/../") &&
          !path.endsWith("/.") && !path.endsWith("/..") && noEmptySegment
        absolute && plain && !path.contains(rootPath)
      }
  }

  /**
   * What the actions on one path say, merged over its actions: the newest one (by version; at one
   * version an add after a remove), whether it is an add, its deletion-vector file, the largest
   * size any action gives, and every deletion-vector file any action names (resolved URIs).
   */
  private final case class PathHistory(
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
        CopyFile(p, relativeTo(root, new Path(p)), bytes, required, isLog = false, 0L)
    }
  }

  private object PathHistory {

    /** One action row: its version, kind, path, size and deletion vector. */
    def of(root: Path, row: Row): PathHistory = {
      val dv = Option(row.getAs[Row]("dv")).flatMap(dvFile(root, _)).map(_.toString)
      PathHistory(
        row.getAs[Long]("version"),
        row.getAs[Int]("kind") == Add,
        resolve(root, actionPath(row.getAs[String]("path"))).toString,
        row.getAs[Long]("size"),
        dv,
        dv.toSet
      )
    }
  }

  private def read(
      spark: SparkSession,
      options: Map[String, String],
      paths: Seq[String],
      json: Boolean
  ): DataFrame = {
    val reader = spark.read.options(options).schema(actionSchema)
    if (json) reader.json(paths: _*) else reader.parquet(paths: _*)
  }

  /**
   * The action rows of a checkpoint: its files, and the sidecars a v2 checkpoint names; with the
   * sidecars' bytes.
   */
  private def checkpointRows(
      spark: SparkSession,
      storage: StorageAccess,
      options: Map[String, String],
      logPath: Path,
      c: LogCheckpoint
  ): (DataFrame, Long) = {
    val (jsonParts, parquetParts) =
      c.files.map(_.status.getPath.toString).partition(_.endsWith(".json"))
    val top =
      (jsonParts.map(p => read(spark, options, Seq(p), json = true)) ++
        (if (parquetParts.isEmpty) Nil
         else Seq(read(spark, options, parquetParts, json = false))))
        .reduce(_ unionByName _)
    // A v2 checkpoint names a handful of sidecar files; their names are small to collect.
    val sidecarDir = FileNames.sidecarDirPath(logPath)
    val sidecars = top.where(col("sidecar.path").isNotNull).select(col("sidecar.path"))
      .collect().map { r =>
        val p = new Path(new URI(r.getString(0)))
        (if (p.isAbsolute || p.toUri.getScheme != null) p else new Path(sidecarDir, p)).toString
      }.distinct.toSeq
    if (sidecars.isEmpty) (top, 0L)
    else {
      val fs = logPath.getFileSystem(storage.conf(logPath))
      val bytes = sidecars.map(p => fs.getFileStatus(new Path(p)).getLen).sum
      (top.unionByName(read(spark, options, sidecars, json = false)), bytes)
    }
  }

  /** One row per action: version, kind, path, size and deletion vector. */
  private def actions(df: DataFrame, version: Column): DataFrame = df.select(
    version.as("version"),
    when(col("add").isNotNull, lit(Add))
      .when(col("remove").isNotNull, lit(Remove))
      .when(col("cdc").isNotNull, lit(Cdc)).as("kind"),
    coalesce(col("add.path"), col("remove.path"), col("cdc.path")).as("path"),
    coalesce(col("add.size"), col("remove.size"), col("cdc.size"), lit(-1L)).as("size"),
    coalesce(col("add.deletionVector"), col("remove.deletionVector")).as("dv")
  ).where(col("kind").isNotNull && col("path").isNotNull)

  /** The file of a deletion vector, resolved against `root`; none for an inline vector. */
  private def dvFile(root: Path, d: Row): Option[Path] = {
    val descriptor = DeletionVectorDescriptor(
      storageType = d.getAs[String]("storageType"),
      pathOrInlineDv = d.getAs[String]("pathOrInlineDv"),
      offset = Option(d.getAs[Integer]("offset")).map(_.intValue),
      sizeInBytes = Option(d.getAs[Integer]("sizeInBytes")).fold(0)(_.intValue),
      cardinality = Option(d.getAs[java.lang.Long]("cardinality")).fold(0L)(_.longValue),
      maxRowIndex = Option(d.getAs[java.lang.Long]("maxRowIndex")).map(_.longValue)
    )
    // "i" is an inline vector: no file.
    if (descriptor.storageType != "i") Some(resolve(root, descriptor.absolutePath(root)))
    else None
  }

  /** An action's `path`: a URI, relative to the table root unless it is absolute. */
  private def actionPath(uri: String): Path = new Path(new URI(uri))

  private def resolve(root: Path, p: Path): Path = {
    val absolute = if (p.isAbsolute || p.toUri.getScheme != null) p else new Path(root, p)
    absolute.makeQualified(root.toUri, root)
  }

  /** `p` relative to `root`, or null when it is not under it. */
  private[redirect] def relativeTo(root: Path, p: Path): String = {
    val prefix = root.toString.stripSuffix("/") + "/"
    val s = p.toString
    if (s.startsWith(prefix) && s.length > prefix.length) s.substring(prefix.length) else null
  }

  /** A log file of `root` as a copy item. */
  def logFile(root: Path, status: org.apache.hadoop.fs.FileStatus): CopyFile = {
    val p = status.getPath
    val rel = relativeTo(root, p)
    require(
      rel != null && rel.startsWith(LogFiles.LogDirName + "/"),
      s"$p is not in the log of $root"
    )
    CopyFile(
      p.toString,
      rel,
      status.getLen,
      required = true,
      isLog = true,
      status.getModificationTime
    )
  }
}
