package io.github.deltalifecycle.core

import java.util.UUID

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import org.apache.hadoop.fs.{FileStatus, FileUtil, Path}
import org.apache.spark.sql.{Column, DataFrame, Encoders, SparkSession}
import org.apache.spark.sql.delta.DeltaConfigs
import org.apache.spark.sql.delta.actions._
import org.apache.spark.sql.delta.util.FileNames
import org.apache.spark.sql.functions.{col, lit, when}
import org.apache.spark.sql.types.StructType

/**
 * What the commits after a checkpoint change besides the table's files: the newest protocol and
 * metadata, and the newest set transaction and domain of each application and domain they name.
 */
final case class NonFileChanges(
    protocol: Option[Protocol],
    metadata: Option[Metadata],
    txns: Map[String, SetTransaction],
    domains: Map[String, DomainMetadata]
) {
  def isEmpty: Boolean = protocol.isEmpty && metadata.isEmpty && txns.isEmpty && domains.isEmpty

  /** Whether a checkpoint's `action` still holds after these changes. */
  def keeps(action: Action): Boolean = action match {
    case _: Protocol => protocol.isEmpty
    case _: Metadata => metadata.isEmpty
    case t: SetTransaction => !txns.contains(t.appId)
    case d: DomainMetadata => !domains.contains(d.domain)
    case _ => true
  }

  /** [[keeps]] as a condition on a checkpoint's rows (of the columns in `schema`). */
  def keeps(schema: StructType): Column = {
    val has = schema.fieldNames.toSet
    def unless(column: String, changed: Boolean) =
      Option.when(has(column) && changed)(col(column).isNull)
    def notIn(column: String, key: String, values: Iterable[String]) =
      Option.when(has(column) && values.nonEmpty)(
        col(column).isNull || !col(s"$column.$key").isin(values.toSeq: _*)
      )
    (unless("protocol", protocol.isDefined) ++ unless("metaData", metadata.isDefined) ++
      notIn("txn", "appId", txns.keys) ++ notIn("domainMetadata", "domain", domains.keys))
      .foldLeft(lit(true))(_ && _)
  }

  /** The actions a checkpoint gains, as log lines (a removed domain is simply gone). */
  def added: Seq[Action] =
    protocol.toSeq ++ metadata ++ txns.values ++ domains.values.filterNot(_.removed)

  /** The checkpoint columns that [[added]] writes. */
  def addedColumns: Set[String] = added.map {
    case _: Protocol => "protocol"
    case _: Metadata => "metaData"
    case _: SetTransaction => "txn"
    case _ => "domainMetadata"
  }.toSet

  def andThen(action: Action): NonFileChanges = action match {
    case p: Protocol => copy(protocol = Some(p))
    case m: Metadata => copy(metadata = Some(m))
    case t: SetTransaction => copy(txns = txns + (t.appId -> t))
    case d: DomainMetadata => copy(domains = domains + (d.domain -> d))
    case _ => this
  }
}

/**
 * Checkpoints derived from an earlier checkpoint of the same table instead of rebuilt from its
 * state. When no commit between the two versions adds or removes a file, the later version's files
 * are the earlier one's, so its checkpoint shares the earlier one's file rows: its parts are byte
 * copies, except those holding a protocol, metadata, set transaction or domain that the commits
 * changed, which are rewritten by one Spark task each without those rows and with the new ones; a
 * V2 checkpoint gets a new manifest over the same sidecars. Every file is written under a hidden
 * temporary name and published by rename (a JSON manifest through the LogStore), so no reader sees
 * half a checkpoint.
 */
object CheckpointCopy {

  /** The changes of `commits`, or None when one of them names a file. */
  def nonFileChanges(log: TableLog, commits: Seq[CommitFile]): Option[NonFileChanges] = {
    val empty = NonFileChanges(None, None, Map.empty, Map.empty)
    commits.foldLeft(Option(empty)) { (changes, commit) =>
      changes.flatMap { c =>
        val actions = ActionReader.readJson(log.readFs, commit.status)
        if (actions.exists(_.isInstanceOf[FileAction])) None
        else Some(actions.foldLeft(c)(_ andThen _))
      }
    }
  }

  /**
   * The checkpoint of `version`, derived from `base` (an earlier checkpoint in `listing`), or None
   * when a commit in between adds or removes a file, when the table's checkpoint policy at
   * `version` asks for another kind of checkpoint than `base`'s (V2 or not: dropping v2Checkpoint
   * turns the policy to classic first), or when the checkpoint's schema has no column for a changed
   * action. `beforePublish` runs once the new files are written, before the first is published.
   */
  def derive(
      spark: SparkSession,
      log: TableLog,
      listing: LogListing,
      base: LogCheckpoint,
      version: Long,
      beforePublish: () => Unit
  ): Option[LogCheckpoint] = {
    val commits = (base.version + 1 to version).map(v =>
      listing.commit(v).getOrElse(throw LogErrors.nonContiguousVersions(
        log.logPath.toString,
        Seq(v)
      ))
    )
    val (_, metadata) = log.protocolAndMetadataAt(version, listing)
    val wantsV2 = DeltaConfigs.CHECKPOINT_POLICY.fromMetaData(metadata).needsV2CheckpointSupport
    if (wantsV2 != (base.kind == CheckpointKind.V2)) return None
    nonFileChanges(log, commits).flatMap { changes =>
      val written = base.kind match {
        case CheckpointKind.Classic =>
          val target = FileNames.checkpointFileSingular(log.logPath, version)
          parquetPart(spark, log, base.files.head.status, target, changes, None).map(Seq(_))
        case CheckpointKind.MultiPart =>
          val targets = FileNames.checkpointFileWithParts(log.logPath, version, base.files.size)
          val parts = base.files.zip(targets).map { case (part, target) =>
            if (!holdsNonFileRows(log, part.status)) Some(copy(log, part.status.getPath, target))
            else parquetPart(spark, log, part.status, target, changes, None)
          }
          Option.when(parts.forall(_.isDefined))(parts.flatten)
        case CheckpointKind.V2 =>
          val manifest = base.files.head.status
          if (manifest.getPath.getName.endsWith(".json")) Some(Seq(jsonManifest(
            log,
            manifest,
            FileNames.newV2CheckpointJsonFile(log.logPath, version),
            changes,
            version
          )))
          else parquetPart(
            spark,
            log,
            manifest,
            FileNames.newV2CheckpointParquetFile(log.logPath, version),
            changes,
            Some(version)
          ).map(Seq(_))
      }
      written.map { files =>
        try {
          beforePublish()
          files.foreach(_.publish())
        } finally files.foreach(_.discard())
        log.listingFrom(version).checkpointsAt(version).find(_.kind == base.kind).getOrElse(
          throw ErrorConditions.corruptLog(
            file = log.logPath.toString,
            reason = s"no checkpoint of $version"
          )
        )
      }
    }
  }

  /** A file written under a temporary name (or held), published by [[publish]]. */
  private final class Written(val publish: () => Unit, val discard: () => Unit)

  /** `temp` renamed to `target` on publishing; `cleanup` deleted in any case. */
  private def renamed(log: TableLog, temp: Path, target: Path, cleanup: Path): Written =
    new Written(
      () =>
        if (!log.fs.rename(temp, target))
          throw new java.io.IOException(s"could not rename $temp to $target"),
      () =>
        try log.fs.delete(cleanup, true)
        catch { case NonFatal(_) => }
    )

  private def tempPath(log: TableLog, target: Path): Path =
    new Path(log.logPath, s".${target.getName}.${UUID.randomUUID()}.tmp")

  private def copy(log: TableLog, source: Path, target: Path): Written = {
    val temp = tempPath(log, target)
    FileUtil.copy(log.fs, source, log.fs, temp, false, log.hadoopConf)
    renamed(log, temp, target, temp)
  }

  /**
   * A Parquet part of `base`: copied when nothing changed, otherwise rewritten in one Spark task
   * without the rows the changes replace and with their new rows (a V2 manifest with its version
   * too). None when the part's schema has no column for a new row.
   */
  private def parquetPart(
      spark: SparkSession,
      log: TableLog,
      source: FileStatus,
      target: Path,
      changes: NonFileChanges,
      manifestVersion: Option[Long]
  ): Option[Written] = {
    if (changes.isEmpty && manifestVersion.isEmpty) return Some(copy(log, source.getPath, target))
    val options = FileState.readerOptions(log.hadoopConf)
    val path = source.getPath.toString
    val schema = spark.read.options(options).parquet(path).schema
    if (!changes.addedColumns.subsetOf(schema.fieldNames.toSet)) return None
    val kept = spark.read.options(options).schema(schema).parquet(path).where(changes.keeps(schema))
    val versioned = manifestVersion.filter(_ => schema.fieldNames.contains("checkpointMetadata"))
      .fold(kept) { v =>
        val cm = col("checkpointMetadata")
        kept.withColumn("checkpointMetadata", when(cm.isNotNull, cm.withField("version", lit(v))))
      }
    val added: Option[DataFrame] = Option.when(changes.added.nonEmpty) {
      val lines = spark.createDataset(changes.added.map(_.json))(Encoders.STRING)
      spark.read.schema(schema).json(lines)
    }
    val rows = added.fold(versioned)(versioned.unionByName(_))
    val dir = tempPath(log, target)
    rows.coalesce(1).write.options(options).parquet(dir.toString)
    val file = log.fs.listStatus(dir).map(_.getPath)
      .find(p => p.getName.startsWith("part-") && p.getName.endsWith(".parquet"))
      .getOrElse(throw new java.io.IOException(s"Spark wrote no Parquet file into $dir"))
    Some(renamed(log, file, target, dir))
  }

  /** A V2 checkpoint's JSON manifest for `version`: the same sidecars, the changes applied. */
  private def jsonManifest(
      log: TableLog,
      source: FileStatus,
      target: Path,
      changes: NonFileChanges,
      version: Long
  ): Written = {
    val lines = ActionReader.readJsonLinesWithActions(log.readFs, source).collect {
      case LogLine(_, Some(m: CheckpointMetadata), _) => m.copy(version = version).json
      case LogLine(_, action, text) if action.forall(changes.keeps) => text
    } ++ changes.added.map(_.json)
    new Written(
      () => log.store.write(target, lines.iterator, overwrite = false, log.hadoopConf),
      () => ()
    )
  }

  /** The leaf of each non-file action that is set on every row of that action. */
  private val NonFileLeaves =
    Seq("protocol.minReaderVersion", "metaData.id", "txn.appId", "domainMetadata.domain")

  /**
   * Whether a Parquet part may hold a non-file action: unless its row groups' statistics show every
   * row null in each non-file action's key column (a column the file lacks holds none).
   */
  private def holdsNonFileRows(log: TableLog, part: FileStatus): Boolean =
    ParquetActionReader.footer(log.readFs, part).getBlocks.asScala.exists { block =>
      block.getColumns.asScala.exists { chunk =>
        NonFileLeaves.contains(chunk.getPath.toDotString) && {
          val stats = chunk.getStatistics
          stats == null || !stats.isNumNullsSet || stats.getNumNulls < chunk.getValueCount
        }
      }
    }
}
