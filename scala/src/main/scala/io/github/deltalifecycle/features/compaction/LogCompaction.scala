package io.github.deltalifecycle.features.compaction

import scala.collection.mutable
import scala.util.control.NonFatal

import io.github.deltalifecycle.core.{ErrorConditions, _}
import org.apache.hadoop.fs.Path
import org.apache.spark.internal.Logging
import org.apache.spark.sql.delta.actions._
import org.apache.spark.sql.delta.util.FileNames

/** What compacting one range of commits did. */
final case class CompactionOutcome(
    start: Long,
    end: Long,
    file: Option[Path],
    commits: Int,
    actions: Int,
    bytesWritten: Long,
    inputBytes: Long,
    status: CompactionStatus
)

sealed abstract class CompactionStatus(val name: String)
object CompactionStatus {

  /** This run wrote the file. */
  case object Written extends CompactionStatus("written")

  /** A readable compaction of exactly this range was already there (another compactor won). */
  case object AlreadyExists extends CompactionStatus("exists")

  /** A readable compaction of a wider range already stands in for this one. */
  case object Covered extends CompactionStatus("covered")

  /** Fewer than two commits to compact, or commits that change no table state. */
  case object NothingToCompact extends CompactionStatus("nothing-to-compact")
}

/**
 * Writes `<x>.<y>.compacted.json` log compactions (PROTOCOL.md, "Log Compaction Files"): the
 * reconciled actions of commits x..y, written once with put-if-absent through delta-spark's
 * LogStore, so a reader sees either no file or the complete file.
 */
object LogCompaction extends Logging {
  private val Operation = "compact the log"
  private val MaxBytesSetting = PolicySettings.MaxBytesInMemoryKey

  /**
   * The commits not yet covered by a checkpoint or by the chain of compactions a reader of the
   * latest version would use, as (first, last); None when fewer than two remain.
   */
  def pendingRange(listing: LogListing): Option[(Long, Long)] = {
    val latest = listing.latestVersion
    val base = LogSegment.plan(listing, latest).maintainedThrough
    // Only what `_delta_log` holds is compacted: commits a catalog ratified and no writer
    // backfilled yet are left to the next run.
    val end = listing.backfilledThrough
    if (end - base >= 2) Some((base + 1, end)) else None
  }

  /** Compacts the pending commits, if there are at least two. */
  def compactPending(
      log: TableLog,
      sessionConf: String => Option[String] = _ => None
  ): CompactionOutcome = {
    val listing = log.tailListing()
    CommitCoordination.requireWritable(log, listing, "compact the log of")
    pendingRange(listing) match {
      case Some((start, end)) => compact(log, listing, start, end, sessionConf = sessionConf)
      case None =>
        val latest = listing.latestVersion
        CompactionOutcome(latest, latest, None, 0, 0, 0, 0, CompactionStatus.NothingToCompact)
    }
  }

  /**
   * Compacts commits `start` to `end` (both inclusive), unless an existing compaction already
   * covers them (status `exists` for exactly this range, `covered` for a wider one; nothing is
   * written). Refuses ranges with missing commits, ranges that partly overlap an existing
   * compaction, and ranges whose protocol this client does not fully support. `stateAtEnd` (the
   * protocol and metadata at `end`) saves a log read when the caller knows it.
   *
   * The surviving actions are held in memory, up to `deltaLifecycle.logCompaction.maxBytesInMemory`
   * (a property of the table at `end`, else `sessionConf`'s `spark.`-prefixed setting, else
   * [[PolicySettings.DefaultMaxBytesInMemory]]). A range that needs more fails with
   * `DELTA_LIFECYCLE_COMPACTION_TOO_LARGE`; with `shrinkToFit` (the post-commit policy) the range
   * ends instead before the commit that passed the limit, and if not even two commits fit, nothing
   * is written and a warning is logged.
   */
  def compact(
      log: TableLog,
      listing: LogListing,
      start: Long,
      end: Long,
      stateAtEnd: Option[(Protocol, Metadata)] = None,
      sessionConf: String => Option[String] = _ => None,
      shrinkToFit: Boolean = false
  ): CompactionOutcome = {
    CommitCoordination.requireWritable(log, listing, "compact the log of")
    validateRange(listing, start, end)
    coveringCompaction(listing, start, end) match {
      case Some(existing) => return alreadyThere(log, existing.status.getPath, start, end)
      case None => refusePartialOverlap(listing, start, end)
    }
    val target = FileNames.compactedDeltaFile(log.logPath, start, end)
    // Every protocol in force in the range must be supported: the one at `end`, and every
    // protocol action in the range (checked while reconciling) covers the one before it too.
    val (endProtocol, endMetadata) =
      stateAtEnd.getOrElse(log.protocolAndMetadataAt(end, listing))
    requireSupported(endProtocol, end)
    val maxBytes =
      PolicySettings.resolve(endMetadata.configuration, sessionConf).maxBytesInMemory

    val commits = (start to end).map(v => listing.commit(v).get).toVector
    // A wider compaction merges the narrower ones inside its range (the chain a reader would take)
    // and reads commits only where none stands in for them.
    val steps = LogSegment(
      end,
      None,
      commits,
      LogSegment.chooseCompactions(
        listing.compactions,
        start - 1,
        end
      )
    ).steps
    val reconciled = new ReconciledLines(new FileKeys(log.fs, log.tablePath))
    val linesPerStep =
      OrderedPrefetch.map(steps.iterator)(step => step -> readStep(log, step, commits))
    var inputBytes = 0L
    linesPerStep.foreach { case (step, (lines, bytesRead)) =>
      val (lastVersion, fileName) = step.fold(c => (c.end, c.name), c => (c.version, c.name))
      inputBytes += bytesRead
      lines.foreach(reconciled.add(lastVersion, fileName, _))
      if (reconciled.heldBytes > maxBytes) {
        val passedAt = lastVersion
        if (!shrinkToFit) {
          throw ErrorConditions.compactionTooLarge(
            startVersion = start,
            endVersion = end,
            limitBytes = maxBytes,
            version = passedAt,
            setting = MaxBytesSetting
          )
        }
        // The state after the step before held less, so that shorter range fits (a merge step
        // that passed is read as commits then).
        if (passedAt - 1 > start) {
          logWarning(s"Compacting versions $start to $end of ${log.tablePath} needs more than " +
            s"$maxBytes bytes of memory (passed at version $passedAt); compacting versions " +
            s"$start to ${passedAt - 1} instead")
          return compact(log, listing, start, passedAt - 1, None, sessionConf, shrinkToFit = true)
        }
        logWarning(s"Not compacting versions $start to $end of ${log.tablePath}: version " +
          s"$passedAt alone passes the limit of $maxBytes bytes ($MaxBytesSetting)")
        return CompactionOutcome(
          start,
          end,
          None,
          0,
          0,
          0,
          0,
          CompactionStatus.NothingToCompact
        )
      }
    }
    val lines = reconciled.result()
    if (lines.isEmpty) {
      return CompactionOutcome(
        start,
        end,
        None,
        commits.size,
        0,
        0,
        inputBytes,
        CompactionStatus.NothingToCompact
      )
    }

    FaultInjection.step("compactLog.beforeWrite")
    try log.store.write(target, lines.iterator, overwrite = false, log.hadoopConf)
    catch {
      case NonFatal(e) if LogCommitter.alreadyExists(e) =>
        return alreadyThere(log, target, start, end)
    }
    FaultInjection.step("compactLog.afterWrite")
    val written = log.fs.getFileStatus(target).getLen
    logInfo(s"Compacted ${commits.size} commits of ${log.tablePath} into ${target.getName} " +
      s"(${lines.size} actions, $written bytes) from ${steps.size} files ($inputBytes bytes)")
    CompactionOutcome(
      start,
      end,
      Some(target),
      commits.size,
      lines.size,
      written,
      inputBytes,
      CompactionStatus.Written
    )
  }

  /**
   * The lines of one step of a merge and the bytes read for them. A compaction that is empty,
   * unreadable or gone (a reader's fall-back, docs/log-core.md) is replaced by its commits, so a
   * damaged narrower compaction never makes a wider one lose actions.
   */
  private def readStep(
      log: TableLog,
      step: Either[CompactionFile, CommitFile],
      commits: Vector[CommitFile]
  ): (Vector[LogLine], Long) = step match {
    case Right(commit) =>
      (ActionReader.readJsonLinesWithActions(log.readFs, commit.status), commit.status.getLen)
    case Left(compaction) =>
      val fromCompaction =
        if (compaction.status.getLen == 0) None
        else scala.util.Try(ActionReader.readJsonLinesWithActions(log.readFs, compaction.status))
          .toOption.filter(_.nonEmpty)
      fromCompaction.map(lines => (lines, compaction.status.getLen)).getOrElse {
        logWarning(s"Compaction ${compaction.name} is empty, unreadable or gone; merging its " +
          "commits instead")
        val covered = commits.filter(c => compaction.covers(c.version))
        (
          covered.flatMap(c => ActionReader.readJsonLinesWithActions(log.readFs, c.status)),
          covered.map(_.status.getLen).sum
        )
      }
  }

  private def validateRange(listing: LogListing, start: Long, end: Long): Unit = {
    def refuse(why: String) =
      ErrorConditions.invalidCompactionRange(startVersion = start, endVersion = end, reason = why)
    if (start < 0) throw refuse("versions start at 0")
    if (end <= start) {
      throw refuse(
        "a compaction covers at least two commits, so the first version must be lower than the last"
      )
    }
    val latest = listing.latestVersion
    if (end > latest) throw refuse(s"the latest version of the table is $latest")
    if (end > listing.backfilledThrough) {
      throw refuse(
        s"the table's catalog ratified versions ${listing.backfilledThrough + 1} to $latest and " +
          s"no writer has copied them to ${LogFiles.LogDirName} yet (backfilled them), so a " +
          s"compaction may end at version ${listing.backfilledThrough} at most"
      )
    }
    val missing = listing.missingCommits(start - 1, end)
    if (missing.nonEmpty) {
      val shown = missing.take(10).mkString(", ") + (if (missing.size > 10) ", ..." else "")
      throw refuse(
        s"the log no longer holds the commit files of versions [$shown] (cleaned up or lost); " +
          "choose a range of retained commits"
      )
    }
  }

  /** An existing compaction of exactly `start..end`, else the widest one containing it. */
  private def coveringCompaction(
      listing: LogListing,
      start: Long,
      end: Long
  ): Option[CompactionFile] = {
    val covering = listing.compactions.filter(c => c.start <= start && end <= c.end)
    covering.find(c => c.start == start && c.end == end)
      .orElse(covering.maxByOption(c => c.end - c.start))
  }

  // A compaction inside the range is fine (readers take the one reaching furthest); one that
  // sticks out on one side only would leave readers two chains that disagree on where to go.
  private def refusePartialOverlap(listing: LogListing, start: Long, end: Long): Unit =
    listing.compactions
      .find(c => c.start <= end && start <= c.end && !(start <= c.start && c.end <= end))
      .foreach { c =>
        throw ErrorConditions.compactionConflict(
          file = c.name,
          reason = s"versions $start to $end partly overlap it; " +
            "choose a range that contains it or stays clear of it"
        )
      }

  /**
   * The compaction `file` already covers `start..end`: fine if it is complete, an error if it is
   * damaged.
   */
  private def alreadyThere(log: TableLog, file: Path, start: Long, end: Long): CompactionOutcome = {
    val length = log.fs.getFileStatus(file).getLen
    val readable = length > 0 &&
      scala.util.Try(ActionReader.readJson(log.readFs, log.fs.getFileStatus(file)))
        .toOption.exists(_.nonEmpty)
    if (!readable) {
      throw ErrorConditions.compactionConflict(
        file = file.getName,
        reason = s"a file of that name exists but is empty or unreadable ($length bytes). " +
          "Readers ignore it and replay the commits instead, so it is safe to delete; delete it " +
          "and run the compaction again"
      )
    }
    val exact = file.getName == FileNames.compactedDeltaFile(log.logPath, start, end).getName
    CompactionOutcome(
      start,
      end,
      Some(file),
      (end - start + 1).toInt,
      0,
      0,
      0,
      if (exact) CompactionStatus.AlreadyExists else CompactionStatus.Covered
    )
  }

  /** A compaction is written into the log, as delta-spark's writers write theirs. */
  private def requireSupported(protocol: Protocol, version: Long): Unit =
    if (!ClientSupport.canWrite(protocol)) {
      throw LogErrors.unsupportedProtocol(
        version,
        ClientSupport.unsupportedForWriting(protocol),
        Operation
      )
    }

  /** What a held line costs beyond its characters: the string, its map entry and its key. */
  private val LineOverheadBytes = 128L

  /**
   * Action reconciliation over a range of commits, keeping each winning action's original JSON
   * line. Unlike a snapshot it keeps tombstones: removes (they cancel files added before the range)
   * and removed domain metadata (it cancels a domain set before it).
   */
  private final class ReconciledLines(keys: FileKeys) {
    private var protocol: String = _
    private var metadata: String = _
    private val txns = mutable.LinkedHashMap.empty[String, String]
    private val domains = mutable.LinkedHashMap.empty[String, String]
    private val adds = new java.util.LinkedHashMap[FileKey, String]()
    private val removes = new java.util.LinkedHashMap[FileKey, String]()

    /** An estimate of the memory the held lines take: their lengths plus an overhead each. */
    var heldBytes: Long = 0L

    private def size(line: String): Long =
      if (line == null) 0L else line.length.toLong + LineOverheadBytes

    private def replaced(old: String, line: String): String = {
      heldBytes += size(line) - size(old)
      line
    }

    /** Adds one line of `fileName`, whose actions are in force from `version` on. */
    def add(version: Long, fileName: String, line: LogLine): Unit = line.actionType match {
      case "commitInfo" | "cdc" => // provenance and change data, not table state
      case _ => line.action match {
          case Some(a: AddFile) =>
            val key = keys.of(a.path, a.deletionVector)
            replaced(removes.remove(key), null)
            replaced(adds.remove(key), null)
            adds.put(key, replaced(null, line.text))
          case Some(r: RemoveFile) =>
            val key = keys.of(r.path, r.deletionVector)
            replaced(adds.remove(key), null)
            replaced(removes.remove(key), null)
            removes.put(key, replaced(null, line.text))
          case Some(p: Protocol) =>
            requireSupported(p, version)
            protocol = replaced(protocol, line.text)
          case Some(_: Metadata) => metadata = replaced(metadata, line.text)
          case Some(t: SetTransaction) =>
            txns(t.appId) = replaced(txns.get(t.appId).orNull, line.text)
          case Some(d: DomainMetadata) =>
            domains(d.domain) = replaced(domains.get(d.domain).orNull, line.text)
          case _ => throw ErrorConditions.UnsupportedProtocol.unknownAction(
              file = fileName,
              actionType = line.actionType,
              operation = Operation
            )
        }
    }

    def result(): Vector[String] = {
      val out = Vector.newBuilder[String]
      Option(protocol).foreach(out += _)
      Option(metadata).foreach(out += _)
      out ++= txns.values
      out ++= domains.values
      adds.values().forEach(l => out += l)
      removes.values().forEach(l => out += l)
      out.result()
    }
  }
}
