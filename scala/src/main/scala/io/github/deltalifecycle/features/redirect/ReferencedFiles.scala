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
import org.apache.spark.sql.{Column, DataFrame, SparkSession}
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

  private val sidecarColumn =
    StructField("sidecar", StructType(Seq(StructField("path", StringType))))

  /** The columns of a commit line this reader needs. */
  private val commitSchema = StructType(Seq(
    StructField("add", fileAction(withDv = true)),
    StructField("remove", fileAction(withDv = true)),
    StructField("cdc", fileAction(withDv = false))
  ))

  /**
   * The columns of a checkpoint's (or sidecar's) row this reader needs: its adds (its removes are
   * of versions before it, which no retained version reads) and the sidecars it names.
   */
  private val checkpointSchema =
    StructType(Seq(StructField("add", fileAction(withDv = true)), sidecarColumn))

  import PathHistory.{Add, Cdc, Remove}

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
    val laterCommits = upToListing.commits.filter(_.version >= base)
    val checkpointed =
      checkpoint.map(c => checkpointRows(spark, storage, options, upToListing.logPath, c))
    val checkpointAdds: Option[DataFrame] = for {
      c <- checkpoint
      (rows, _) <- checkpointed
    } yield addsOf(rows, c.version)
    if (checkpoint.isEmpty && laterCommits.isEmpty) return spark.sparkContext.emptyRDD
    // The copy caches this list (TableCopy), so its partitions hold a bounded number of files.
    val commitBytes = laterCommits.map(_.status.getLen).sum
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
    val files: RDD[Either[Long, CopyFile]] =
      if (commitBytes > FileState.DriverTailBytes) {
        val fromCommits = actions(
          read(
            spark,
            options,
            laterCommits.map(_.status.getPath.toString),
            commitSchema,
            json = true
          ),
          regexp_extract(col("_metadata.file_name"), "^0*(\\d+)\\.json$", 1).cast(LongType)
        )
        merged(
          rootString,
          (checkpointAdds.toSeq :+ fromCommits).reduce(_ unionByName _),
          partitions
        )
      } else {
        // A checkpoint is reconciled already, and the commits after it are few: the driver reads
        // them and merges their actions per path, and one pass over the checkpoint merges each of
        // its adds with what the commits say of the same path.
        val tail = PathHistory.ofCommits(storage.conf(root), root, laterCommits)
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
   * scheme or the root's, in plain form (no percent-encoding, no segment that starts with a dot, no
   * empty segment), in which the root's own path does not occur. A few substring tests in generated
   * code, as few as that takes: they run on every add of the checkpoint. A path they are unsure of
   * is resolved in full, and a root whose path a URI would spell otherwise leaves every path to
   * that.
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
        // No "//" but the one that may open an authority right after the scheme. (Spark's
        // `locate` costs several substring tests.)
        val afterAuthority = substring(path, scheme.length + 3, Int.MaxValue)
        val noEmptySegment =
          when(path.startsWith(scheme + "//"), !afterAuthority.contains("//"))
            .otherwise(!path.contains("//"))
        // "/." covers the "." and ".." segments, and a name that starts with a dot.
        val plain = !path.contains("%") && !path.contains("/.") && noEmptySegment
        absolute && plain && !path.contains(rootPath)
      }
  }

  private def read(
      spark: SparkSession,
      options: Map[String, String],
      paths: Seq[String],
      schema: StructType,
      json: Boolean
  ): DataFrame = {
    val reader = spark.read.options(options).schema(schema)
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
      (jsonParts.map(p => read(spark, options, Seq(p), checkpointSchema, json = true)) ++
        (if (parquetParts.isEmpty) Nil
         else Seq(read(spark, options, parquetParts, checkpointSchema, json = false))))
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
      (top.unionByName(read(spark, options, sidecars, checkpointSchema, json = false)), bytes)
    }
  }

  /** One row per action of a commit: version, kind, path, size and deletion vector. */
  private def actions(df: DataFrame, version: Column): DataFrame = df.select(
    version.as("version"),
    when(col("add").isNotNull, lit(Add))
      .when(col("remove").isNotNull, lit(Remove))
      .when(col("cdc").isNotNull, lit(Cdc)).as("kind"),
    coalesce(col("add.path"), col("remove.path"), col("cdc.path")).as("path"),
    coalesce(col("add.size"), col("remove.size"), col("cdc.size"), lit(-1L)).as("size"),
    coalesce(col("add.deletionVector"), col("remove.deletionVector")).as("dv")
  ).where(col("kind").isNotNull && col("path").isNotNull)

  /** The adds of a checkpoint's rows, as [[actions]] gives them. */
  private def addsOf(rows: DataFrame, version: Long): DataFrame =
    rows.where(col("add.path").isNotNull).select(
      lit(version).as("version"),
      lit(Add).as("kind"),
      col("add.path").as("path"),
      coalesce(col("add.size"), lit(-1L)).as("size"),
      col("add.deletionVector").as("dv")
    )

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
