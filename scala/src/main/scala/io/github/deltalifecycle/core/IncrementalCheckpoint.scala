package io.github.deltalifecycle.core

import java.util.UUID

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import com.fasterxml.jackson.databind.node.ObjectNode
import org.apache.hadoop.fs.{FileStatus, Path}
import org.apache.parquet.hadoop.metadata.BlockMetaData
import org.apache.spark.internal.Logging
import org.apache.spark.sql.{Column, DataFrame, Encoders, SparkSession}
import org.apache.spark.sql.delta.DeltaConfigs
import org.apache.spark.sql.delta.actions._
import org.apache.spark.sql.delta.util.{FileNames, JsonUtils}
import org.apache.spark.sql.functions._
import org.apache.spark.sql.types.{
  ArrayType,
  DataType,
  MapType,
  MetadataBuilder,
  StringType,
  StructField,
  StructType
}

/**
 * A checkpoint written from the checkpoint before it and the commits in between, at the cost of
 * what those commits changed rather than of the whole table. A checkpoint is reconciled state, so
 * the next one differs from it only by the tail's actions:
 *
 *   - a V2 checkpoint gets a new manifest over the sidecars the tail did not touch, plus one new
 *     sidecar holding the tail's files and the rows kept from the sidecars it touched (and from the
 *     small sidecars earlier incremental checkpoints wrote, so their number stays bounded);
 *   - a classic checkpoint (single-file, or each part of a multi-part one) copies the row groups
 *     the tail did not touch byte for byte, without decoding them, and appends one row group of the
 *     rows kept from the touched ones plus the tail's; a multi-part checkpoint keeps its parts and
 *     puts each new file action in the part delta-spark's hash of its path assigns.
 *
 * A row is touched when the tail names its file (canonical path and deletion vector), when it is a
 * tombstone past the table's retention, or when it is a non-file action the tail replaced. Which
 * rows are touched is found by one scan of the checkpoint's path columns. Tombstones follow the
 * retention as delta-spark's checkpoint applies it: a remove is kept while its deletion timestamp
 * is after now minus `delta.deletedFileRetentionDuration`.
 */
final case class CheckpointPlan(
    version: Long,
    base: LogCheckpoint,
    commits: Int,
    reused: Seq[CheckpointPiece],
    rewritten: Seq[CheckpointPiece],
    tailAdds: Int,
    tailRemoves: Int,
    private[core] val tail: CheckpointTail
)

/** A file of the earlier checkpoint, or some of its row groups, and their size in bytes. */
final case class CheckpointPiece(file: String, rowGroups: Seq[Int], bytes: Long) {
  def description: String =
    if (rowGroups.isEmpty) file else s"$file row groups ${rowGroups.mkString(",")}"
}

/** The checkpoint written: its files, with the bytes copied from the earlier one and written. */
final case class WrittenCheckpoint(
    plan: CheckpointPlan,
    checkpoint: LogCheckpoint,
    written: Seq[String],
    writtenBytes: Long
)

/** The tail's reconciled state: the newest action of each file it names, and its other changes. */
private[core] final case class CheckpointTail(
    files: Map[FileKey, TailFile],
    changes: NonFileChanges,
    retainedAfter: Long
) {
  def adds: Seq[TailFile] = files.values.filter(_.action.isInstanceOf[AddFile]).toSeq
  def removes: Seq[TailFile] = files.values.filter {
    _.action match {
      case r: RemoveFile => r.deletionTimestamp.getOrElse(0L) > retainedAfter
      case _ => false
    }
  }.toSeq
}

/**
 * A file action of the tail with its line in the commit: the checkpoint gets the line as written,
 * so fields the commit leaves out stay out (delta-spark's classes would write them empty).
 */
private[core] final case class TailFile(action: FileAction, line: String) {

  /** The line as a checkpoint row: no data change; a remove without its tags and statistics. */
  def checkpointLine: String = {
    val tree = JsonUtils.mapper.readTree(line).asInstanceOf[ObjectNode]
    val column = if (action.isInstanceOf[AddFile]) "add" else "remove"
    val fields = tree.get(column).asInstanceOf[ObjectNode]
    fields.put("dataChange", false)
    if (column == "remove") fields.remove(java.util.Arrays.asList("tags", "stats"))
    JsonUtils.mapper.writeValueAsString(tree)
  }
}

object IncrementalCheckpoint extends Logging {

  /** See [[smallOnesToMerge]]. */
  val SmallPieceRows: Long = 12500
  val MaxSmallPieces: Int = 8

  /**
   * The plan of an incremental checkpoint of `version` from the newest checkpoint before it in
   * `listing`, or why there can be none (then a full checkpoint is the way): no checkpoint to start
   * from, a checkpoint policy at `version` other than the earlier checkpoint's kind, a tail longer
   * than the driver reconciles, or a set-transaction retention (delta-spark expires transactions at
   * checkpoints; a full checkpoint applies that).
   */
  def plan(
      spark: SparkSession,
      log: TableLog,
      listing: LogListing,
      version: Long
  ): Either[String, CheckpointPlan] = {
    val base = listing.checkpoints.filter(_.version < version).lastOption
      .getOrElse(return Left("the table has no checkpoint before this version to start from"))
    val commits = (base.version + 1 to version).map(v =>
      listing.commit(v).getOrElse(throw LogErrors.nonContiguousVersions(
        log.logPath.toString,
        Seq(v)
      ))
    )
    val (_, metadata) = log.protocolAndMetadataAt(version, listing)
    val wantsV2 = DeltaConfigs.CHECKPOINT_POLICY.fromMetaData(metadata).needsV2CheckpointSupport
    if (wantsV2 != (base.kind == CheckpointKind.V2))
      return Left(s"the table's checkpoint policy asks for another kind than ${base.kind.name}")
    if (!sameCheckpointSchema(log.protocolAndMetadataAt(base.version, listing)._2, metadata))
      return Left(
        s"the table's schema or statistics settings changed since checkpoint ${base.version}"
      )
    if (DeltaConfigs.TRANSACTION_ID_RETENTION_DURATION.fromMetaData(metadata).isDefined)
      return Left("the table expires set transactions (delta.setTransactionRetentionDuration)")
    val tailBytes = commits.map(_.status.getLen).sum
    if (tailBytes > FileState.DriverTailBytes)
      return Left(s"the commits since checkpoint ${base.version} hold $tailBytes bytes")
    val retention = DeltaConfigs.getMilliSeconds(DeltaConfigs.TOMBSTONE_RETENTION
      .fromMetaData(metadata))
    val tail = reconcile(log, commits, System.currentTimeMillis() - retention)
    val pieces = basePieces(log, base)
    val touched = touchedRowGroups(spark, log, base, pieces, tail)
    val (reused, rewritten) = split(base, pieces, touched)
    Right(CheckpointPlan(
      version,
      base,
      commits.size,
      reused,
      rewritten,
      tail.adds.size,
      tail.removes.size,
      tail
    ))
  }

  /**
   * Writes the checkpoint `plan` describes and `_last_checkpoint`. `beforePublish` runs once the
   * new files are written, before the checkpoint becomes visible. Fails with the earlier
   * checkpoint's files untouched; temporary files are removed however it ends.
   */
  def write(
      spark: SparkSession,
      log: TableLog,
      plan: CheckpointPlan,
      beforePublish: () => Unit
  ): WrittenCheckpoint = {
    val temp = new Path(log.logPath, s".incremental-checkpoint-${UUID.randomUUID()}.tmp")
    try {
      val written = plan.base.kind match {
        case CheckpointKind.V2 => writeV2(spark, log, plan, temp, beforePublish)
        case _ => writeClassic(spark, log, plan, temp, beforePublish)
      }
      val checkpoint = log.listingFrom(plan.version).checkpointsAt(plan.version)
        .find(_.kind == plan.base.kind)
        .getOrElse(throw ErrorConditions.corruptLog(
          file = log.logPath.toString,
          reason = s"no checkpoint of ${plan.version} after writing it"
        ))
      writeLastCheckpoint(log, checkpoint)
      WrittenCheckpoint(plan, checkpoint, written.map(_._1), written.map(_._2).sum)
    } finally
      try log.fs.delete(temp, true)
      catch { case NonFatal(_) => }
  }

  /**
   * Whether a checkpoint of `later` has the columns of one of `earlier`: the parsed statistics and
   * partition values follow the columns (their names, types and physical names, not their other
   * metadata, such as type-change records), the partition columns and the statistics settings.
   */
  private def sameCheckpointSchema(earlier: Metadata, later: Metadata): Boolean = {
    def shaping(m: Metadata) = (
      columnsOf(DataType.fromJson(m.schemaString)),
      m.partitionColumns,
      m.configuration.filter { case (k, _) =>
        k.startsWith("delta.dataSkipping") || k.startsWith("delta.checkpoint.") ||
        k.startsWith("delta.columnMapping.")
      }
    )
    shaping(earlier) == shaping(later)
  }

  private val PhysicalName = "delta.columnMapping.physicalName"
  private val ColumnId = "delta.columnMapping.id"

  private def columnsOf(dataType: DataType): DataType = dataType match {
    case s: StructType => StructType(s.fields.map { f =>
        val kept = new MetadataBuilder()
        if (f.metadata.contains(PhysicalName))
          kept.putString(PhysicalName, f.metadata.getString(PhysicalName))
        if (f.metadata.contains(ColumnId)) kept.putLong(ColumnId, f.metadata.getLong(ColumnId))
        f.copy(dataType = columnsOf(f.dataType), metadata = kept.build())
      })
    case a: ArrayType => a.copy(elementType = columnsOf(a.elementType))
    case m: MapType => m.copy(keyType = columnsOf(m.keyType), valueType = columnsOf(m.valueType))
    case other => other
  }

  /** The tail's newest action of each file and its other changes, reconciled on the driver. */
  private def reconcile(log: TableLog, commits: Seq[CommitFile], retainedAfter: Long) = {
    val keys = new FileKeys(log.fs, log.tablePath)
    val files = new java.util.LinkedHashMap[FileKey, TailFile]()
    var changes = NonFileChanges(None, None, Map.empty, Map.empty)
    commits.foreach(c =>
      ActionReader.readJsonLinesWithActions(log.readFs, c.status).foreach {
        case LogLine(_, Some(f @ (_: AddFile | _: RemoveFile)), line) =>
          val file = f.asInstanceOf[FileAction]
          val key = keys.of(file.path, file.deletionVector)
          files.remove(key)
          files.put(key, TailFile(file, line))
        case LogLine(_, Some(other), _) => changes = changes.andThen(other)
        case _ =>
      }
    )
    CheckpointTail(files.asScala.toMap, changes, retainedAfter)
  }

  /** A Parquet file of the earlier checkpoint: a part, or a V2 checkpoint's sidecar. */
  private final case class BasePiece(status: FileStatus, blocks: Seq[BlockMetaData]) {
    def name: String = status.getPath.getName
  }

  private def basePieces(log: TableLog, base: LogCheckpoint): Seq[BasePiece] = {
    val files =
      if (base.kind == CheckpointKind.V2) log.sidecarsOf(base).map(log.readFs.getFileStatus)
      else base.files.map(_.status)
    files.map(f => BasePiece(f, ParquetActionReader.footer(log.readFs, f).getBlocks.asScala.toSeq))
  }

  /**
   * The row groups of the earlier checkpoint's pieces that hold a touched row, by file name: a row
   * of a file the tail names (one scan of the path and deletion-vector columns, skipped when the
   * tail names no file), an expired tombstone (told by the row group's statistics), or a non-file
   * action the tail changed (the same).
   */
  private def touchedRowGroups(
      spark: SparkSession,
      log: TableLog,
      base: LogCheckpoint,
      pieces: Seq[BasePiece],
      tail: CheckpointTail
  ): Map[String, Set[Int]] = {
    val byStatistics = pieces.map { p =>
      p.name -> p.blocks.indices.filter { i =>
        val block = p.blocks(i)
        mayHoldExpired(block, tail.retainedAfter) ||
        (base.kind != CheckpointKind.V2 && !tail.changes.isEmpty && holdsNonFileRows(block))
      }.toSet
    }.toMap
    if (tail.files.isEmpty || pieces.isEmpty) byStatistics
    else {
      val touched = namedByTail(log, tail)
      val starts =
        pieces.map(p => p.name -> p.blocks.map(_.getRowCount).scanLeft(0L)(_ + _).toArray)
          .toMap
      val rowGroup = udf { (file: String, row: Long) =>
        val s = starts(file)
        java.util.Arrays.binarySearch(s, row) match {
          case i if i >= 0 => i
          case i => -i - 2
        }
      }
      val found = spark.read.options(FileState.readerOptions(log.hadoopConf))
        .schema(pathSchema)
        .parquet(pieces.map(_.status.getPath.toString): _*)
        .where(touched)
        .select(col("_metadata.file_name").as("file"), col("_metadata.row_index").as("row"))
        .select(col("file"), rowGroup(col("file"), col("row")).as("rowGroup"))
        .distinct()
        .collect()
        .map(r => r.getString(0) -> r.getInt(1))
      found.groupBy(_._1).foldLeft(byStatistics) { case (acc, (file, groups)) =>
        acc.updated(file, acc.getOrElse(file, Set.empty[Int]) ++ groups.map(_._2))
      }
    }
  }

  /** Whether a checkpoint row is an add or a remove of a file the tail names. */
  private def namedByTail(log: TableLog, tail: CheckpointTail): Column = {
    val keys = new FileKeys(log.fs, log.tablePath)
    def of(kind: FileActionKind) =
      FileStateJob.overriddenBy(tail.files.keySet, keys, FileQuery(kind, Nil, lit(true)))
    of(FileActionKind.Add) || of(FileActionKind.Remove)
  }

  /** The columns that identify a checkpoint row's file. */
  private val pathSchema: StructType = {
    def fields(c: String, extra: String*) = {
      val full = Action.logSchema(c).dataType.asInstanceOf[StructType]
      StructField(c, StructType((Seq("path", "deletionVector") ++ extra).map(full(_))))
    }
    StructType(Seq(fields("add"), fields("remove")))
  }

  /** Whether a row group may hold a tombstone deleted at or before `retainedAfter`. */
  private def mayHoldExpired(block: BlockMetaData, retainedAfter: Long): Boolean =
    block.getColumns.asScala.find(_.getPath.toDotString == "remove.deletionTimestamp").exists {
      chunk =>
        val stats = chunk.getStatistics
        val allNull =
          stats != null && stats.isNumNullsSet && stats.getNumNulls == chunk.getValueCount
        !allNull &&
        (stats == null || !stats.hasNonNullValue ||
          stats.genericGetMin.asInstanceOf[java.lang.Long] <= retainedAfter)
    } || block.getColumns.asScala.exists { chunk =>
      // A tombstone without a deletion timestamp counts as deleted at 0: expired.
      chunk.getPath.toDotString == "remove.path" && {
        val stats = chunk.getStatistics
        val removes = chunk.getValueCount - Option(stats).filter(_.isNumNullsSet)
          .map(_.getNumNulls).getOrElse(0L)
        val timestamps = block.getColumns.asScala
          .find(_.getPath.toDotString == "remove.deletionTimestamp")
          .map(c =>
            c.getValueCount - Option(c.getStatistics).filter(_.isNumNullsSet)
              .map(_.getNumNulls).getOrElse(0L)
          )
          .getOrElse(0L)
        removes > timestamps
      }
    }

  /** The leaf of each non-file action that is set on every row of that action. */
  private val NonFileLeaves =
    Seq("protocol.minReaderVersion", "metaData.id", "txn.appId", "domainMetadata.domain")

  private def holdsNonFileRows(block: BlockMetaData): Boolean =
    block.getColumns.asScala.exists { chunk =>
      NonFileLeaves.contains(chunk.getPath.toDotString) && {
        val stats = chunk.getStatistics
        stats == null || !stats.isNumNullsSet || stats.getNumNulls < chunk.getValueCount
      }
    }

  /**
   * The earlier checkpoint's pieces that the new one reuses and those whose rows it rewrites. For
   * V2 a sidecar is the unit: a touched or small one is rewritten whole. For classic, a row group.
   */
  private def split(
      base: LogCheckpoint,
      pieces: Seq[BasePiece],
      touched: Map[String, Set[Int]]
  ): (Seq[CheckpointPiece], Seq[CheckpointPiece]) =
    if (base.kind == CheckpointKind.V2) {
      val (hit, untouched) = pieces.partition(p => touched.getOrElse(p.name, Set.empty).nonEmpty)
      val merged = smallOnesToMerge(untouched.map(p => p.blocks.map(_.getRowCount).sum))
        .map(untouched)
      val reused = untouched.filterNot(merged.contains)
      (
        reused.map(p => CheckpointPiece(p.name, Nil, p.status.getLen)),
        (hit ++ merged).map(p => CheckpointPiece(p.name, Nil, p.status.getLen))
      )
    } else {
      val both = pieces.map { p =>
        val hit = touched.getOrElse(p.name, Set.empty)
        val untouched = p.blocks.indices.filterNot(hit.contains)
        val merged = smallOnesToMerge(untouched.map(p.blocks(_).getRowCount)).map(untouched)
        val (out, in) = p.blocks.indices.partition(i => hit.contains(i) || merged.contains(i))
        def piece(groups: Seq[Int]) =
          CheckpointPiece(p.name, groups, groups.map(p.blocks(_).getCompressedSize).sum)
        (piece(in), piece(out))
      }
      (both.map(_._1).filter(_.rowGroups.nonEmpty), both.map(_._2).filter(_.rowGroups.nonEmpty))
    }

  /**
   * Which of the untouched pieces (sidecars, or a part's row groups), given their row counts, are
   * merged into the new one: all the small ones, once more than [[MaxSmallPieces]] would be left.
   * Each incremental checkpoint adds a small piece; without merges they would pile up. A piece is
   * small when it holds fewer rows than a quarter of the median piece and fewer than
   * [[SmallPieceRows]] (delta-spark writes 50,000 actions to a sidecar), so a merged piece that
   * outgrows that is left alone from then on.
   */
  private def smallOnesToMerge(rows: Seq[Long]): Seq[Int] = {
    val sorted = rows.sorted
    val typical = if (sorted.isEmpty) 0L else sorted(sorted.size / 2)
    val limit = math.min(SmallPieceRows, math.max(1L, typical / 4))
    val small = rows.indices.filter(rows(_) < limit)
    // The new piece is one more small one.
    if (small.size + 1 > MaxSmallPieces) small else Nil
  }

  /**
   * The rows of the tail that the new checkpoint gains, in `schema` (the earlier checkpoint's): its
   * files' newest actions, as delta-spark's checkpoint writes them (no data change; a remove
   * without tags and stats; an add with its parsed statistics and partition values where the schema
   * has those columns), and `nonFile`.
   */
  private def tailRows(
      spark: SparkSession,
      schema: StructType,
      files: Seq[TailFile],
      nonFile: Seq[Action]
  ): DataFrame = {
    val lines = files.map(_.checkpointLine) ++ nonFile.map(_.json)
    val parsedColumns = Set("stats_parsed", "partitionValues_parsed")
    // The statistics are read even where the checkpoint keeps only their parsed form.
    val readable = StructType(schema.map {
      case f if f.name == "add" =>
        val fields = f.dataType.asInstanceOf[StructType].filterNot(a => parsedColumns(a.name))
        val stats = Option.when(!fields.exists(_.name == "stats"))(StructField("stats", StringType))
        f.copy(dataType = StructType(fields ++ stats))
      case f => f
    })
    val read = spark.read.schema(readable).json(spark.createDataset(lines)(Encoders.STRING))
    val columns: Seq[Column] = schema.map {
      case f if f.name == "add" =>
        val fields = f.dataType.asInstanceOf[StructType].map { a =>
          a.name match {
            case "stats_parsed" => from_json(col("add.stats"), a.dataType).as(a.name)
            case "partitionValues_parsed" =>
              struct(a.dataType.asInstanceOf[StructType].map(p =>
                col("add.partitionValues").getItem(p.name).cast(p.dataType).as(p.name)
              ): _*).as(a.name)
            case name => col(s"add.$name").as(name)
          }
        }
        when(col("add").isNotNull, struct(fields: _*)).cast(f.dataType).as("add")
      case f => col(f.name).cast(f.dataType).as(f.name)
    }
    read.select(columns: _*)
  }

  /** The rows kept from the pieces `files` (all of them, or those of one classic part). */
  private def keptRows(
      spark: SparkSession,
      log: TableLog,
      schema: StructType,
      files: Seq[String],
      tail: CheckpointTail
  ): DataFrame = {
    val expired = col("remove.path").isNotNull &&
      coalesce(col("remove.deletionTimestamp"), lit(0L)) <= lit(tail.retainedAfter)
    val dropped = namedByTail(log, tail) || expired
    spark.read.options(FileState.readerOptions(log.hadoopConf)).schema(schema)
      .parquet(files: _*)
      .where(!dropped && tail.changes.keeps(schema))
  }

  /** Writes `rows` as one Parquet file under `dir`; returns its path. */
  private def writeOne(log: TableLog, rows: DataFrame, dir: Path): Path = {
    rows.coalesce(1).write.options(FileState.readerOptions(log.hadoopConf)).parquet(dir.toString)
    log.fs.listStatus(dir).map(_.getPath)
      .find(p => p.getName.startsWith("part-") && p.getName.endsWith(".parquet"))
      .getOrElse(throw new java.io.IOException(s"Spark wrote no Parquet file into $dir"))
  }

  private def schemaOf(spark: SparkSession, log: TableLog, file: Path): StructType =
    spark.read.options(FileState.readerOptions(log.hadoopConf)).parquet(file.toString).schema

  /**
   * A V2 checkpoint: the new sidecar (rows kept from the rewritten sidecars and the tail's files),
   * then the manifest over it and the reused sidecars, with the non-file actions of the version.
   */
  private def writeV2(
      spark: SparkSession,
      log: TableLog,
      plan: CheckpointPlan,
      temp: Path,
      beforePublish: () => Unit
  ): Seq[(String, Long)] = {
    val sidecarDir = FileNames.sidecarDirPath(log.logPath)
    val manifest = plan.base.files.head.status
    val manifestActions =
      if (manifest.getPath.getName.endsWith(".json")) ActionReader.readJson(log.readFs, manifest)
      else ParquetActionReader.read(log.readFs, manifest, ParquetActionReader.AllActionColumns)
        .toVector
    if (manifestActions.exists(_.isInstanceOf[FileAction]))
      throw new IllegalStateException(s"the manifest ${manifest.getPath} holds file actions")
    val sidecarsByName = manifestActions.collect { case s: SidecarFile =>
      new Path(new java.net.URI(s.path)).getName -> s
    }.toMap
    val files = plan.tail.adds ++ plan.tail.removes
    val rewrittenPaths = plan.rewritten.map(p => new Path(sidecarDir, p.file).toString)
    val schemaSource = (plan.rewritten ++ plan.reused).headOption
      .map(p => new Path(sidecarDir, p.file))
    val newSidecar: Option[SidecarFile] = schemaSource.filter(_ =>
      files.nonEmpty ||
        rewrittenPaths.nonEmpty
    ).map { source =>
      val schema = schemaOf(spark, log, source)
      val kept = Option.when(rewrittenPaths.nonEmpty)(
        keptRows(spark, log, schema, rewrittenPaths, plan.tail)
      )
      val rows = (kept.toSeq :+ tailRows(spark, schema, files, Nil)).reduce(_ unionByName _)
      val written = writeOne(log, rows, temp)
      val target = FileNames.newV2CheckpointSidecarFile(log.logPath, plan.version, 1, 1)
      if (!log.fs.rename(written, target))
        throw new java.io.IOException(s"could not rename $written to $target")
      SidecarFile(log.fs.getFileStatus(target))
    }
    if (schemaSource.isEmpty && files.nonEmpty)
      throw new IllegalStateException("the checkpoint has no sidecar to take a schema from")
    val sidecars = plan.reused.map(p => sidecarsByName(p.file)) ++ newSidecar
    val nonFile = manifestActions.filter {
      case _: SidecarFile | _: CheckpointMetadata => false
      case a => plan.tail.changes.keeps(a)
    } ++ plan.tail.changes.added
    val lines = (CheckpointMetadata(version = plan.version) +: sidecars) ++ nonFile
    beforePublish()
    val target = FileNames.newV2CheckpointJsonFile(log.logPath, plan.version)
    log.store.write(target, lines.map(_.json).iterator, overwrite = false, log.hadoopConf)
    newSidecar.map(s => s.path -> s.sizeInBytes).toSeq :+
      (target.getName -> log.fs.getFileStatus(target).getLen)
  }

  /**
   * A classic checkpoint: each part is the earlier part's untouched row groups, copied, then one
   * row group of the rows kept from its touched ones and the tail's rows that belong to it.
   */
  private def writeClassic(
      spark: SparkSession,
      log: TableLog,
      plan: CheckpointPlan,
      temp: Path,
      beforePublish: () => Unit
  ): Seq[(String, Long)] = {
    val parts = plan.base.files
    val count = parts.size
    val targets =
      if (count == 1) Seq(FileNames.checkpointFileSingular(log.logPath, plan.version))
      else FileNames.checkpointFileWithParts(log.logPath, plan.version, count)
    val rewritten = plan.rewritten.map(p => p.file -> p.rowGroups.toSet).toMap
    val files = plan.tail.adds ++ plan.tail.removes
    val merges = parts.zip(targets).zipWithIndex.map { case ((part, target), index) =>
      val source = part.status.getPath
      val schema = schemaOf(spark, log, source)
      val touched = rewritten.getOrElse(part.name, Set.empty)
      val blocks = ParquetActionReader.footer(log.readFs, part.status).getBlocks.size
      val keptGroups = (0 until blocks).filterNot(touched.contains)
      // The touched row groups, copied into a file of their own, are all Spark has to decode.
      val touchedFile = Option.when(touched.nonEmpty) {
        val out = new Path(temp, s"touched-$index.parquet")
        RowGroupMerge.write(
          RowGroupMerge(source.toString, touched.toSeq.sorted, None, out.toString),
          log.hadoopConf
        )
        out
      }
      val tailPart = tailRows(spark, schema, files, plan.tail.changes.added)
      val mine =
        if (count == 1) tailPart
        else tailPart.where(pmod(hash(coalesce(col("add.path"), col("remove.path"))), lit(count))
          === lit(index))
      val rows =
        (touchedFile.map(f => keptRows(spark, log, schema, Seq(f.toString), plan.tail))
          .toSeq :+ mine).reduce(_ unionByName _)
      val appended = writeOne(log, rows, new Path(temp, s"rows-$index"))
      val written = RowGroupMerge.footer(log.hadoopConf, appended).getFileMetaData.getSchema
      val original = ParquetActionReader.footer(log.readFs, part.status).getFileMetaData.getSchema
      if (written != original) throw new IllegalStateException(
        s"the rows written for ${part.name} have another Parquet schema than it"
      )
      (
        RowGroupMerge(
          source.toString,
          keptGroups,
          Some(appended.toString),
          new Path(temp, s"part-$index.parquet").toString
        ),
        target
      )
    }
    val lengths = RowGroupMerge.run(spark, log.hadoopConf, merges.map(_._1))
    beforePublish()
    merges.map { case (merge, target) =>
      if (!log.fs.rename(new Path(merge.target), target))
        throw new java.io.IOException(s"could not publish $target: it exists already")
      target.getName
    }.zip(lengths)
  }

  /**
   * The checkpoint of `version` written incrementally ([[plan]], then [[write]]), or why it was
   * not: the plan's reason, or the failure of the write (the caller writes it in full then).
   */
  def attempt(
      spark: SparkSession,
      log: TableLog,
      listing: LogListing,
      version: Long,
      beforePublish: () => Unit
  ): Either[String, WrittenCheckpoint] =
    try plan(spark, log, listing, version).map(write(spark, log, _, beforePublish))
    catch {
      case NonFatal(e) =>
        logWarning(s"Writing the checkpoint of version $version incrementally failed", e)
        Left(s"writing it incrementally failed: ${e.getMessage}")
    }

  /** Points `_last_checkpoint` at `checkpoint` unless it names a newer one already. */
  private def writeLastCheckpoint(log: TableLog, checkpoint: LogCheckpoint): Unit = {
    if (log.lastCheckpointVersion().exists(_ >= checkpoint.version)) return
    val parquet = checkpoint.files.filterNot(_.name.endsWith(".json")).map(_.status)
    val sidecars = log.sidecarsOf(checkpoint).map(log.readFs.getFileStatus)
    val footers = (parquet ++ sidecars).map(f => ParquetActionReader.footer(log.readFs, f))
    val rows = footers.flatMap(_.getBlocks.asScala).map(_.getRowCount).sum
    val info = new java.util.LinkedHashMap[String, Any]()
    info.put("version", checkpoint.version)
    info.put("size", rows)
    if (checkpoint.kind == CheckpointKind.MultiPart) info.put("parts", checkpoint.files.size)
    info.put("sizeInBytes", (checkpoint.files.map(_.status) ++ sidecars).map(_.getLen).sum)
    log.store.write(
      new Path(log.logPath, TableLog.LastCheckpointFileName),
      Iterator(JsonUtils.mapper.writeValueAsString(info)),
      overwrite = true,
      log.hadoopConf
    )
  }
}
