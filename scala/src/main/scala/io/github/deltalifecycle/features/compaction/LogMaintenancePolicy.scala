package io.github.deltalifecycle.features.compaction

import io.github.deltalifecycle.core.{LogListing, LogSegment}
import org.apache.spark.sql.delta.DeltaConfigs

/**
 * The knobs of the post-commit policy. Each is a table property, with a session configuration
 * (`spark.` + the property name) as the default for tables that do not set it. The checkpoint
 * interval is delta-spark's own `delta.checkpointInterval`: delta-spark's checkpoint hook already
 * checkpoints every that many commits and cannot be turned off, so a second property for the same
 * thing would only fight it.
 */
final case class PolicySettings(
    compactionInterval: Int,
    largeCommitBytes: Long,
    checkpointInterval: Int,
    maxBytesInMemory: Long = PolicySettings.DefaultMaxBytesInMemory,
    coveredRetentionHours: Double = PolicySettings.DefaultCoveredRetentionHours
) {

  /**
   * How many levels of compactions the policy keeps: level k covers `compactionInterval`^k commits,
   * and only levels narrower than the checkpoint interval pay off. At most `compactionInterval - 1`
   * levels, so the narrowest compaction of a block still spans two commits after the shift of
   * [[LogMaintenancePolicy.levelRanges]]; 0 when compactions are off.
   */
  def levels: Int =
    if (compactionInterval < 2 || compactionInterval >= checkpointInterval) 0
    else {
      var k = 1
      var width = compactionInterval.toLong
      while (k < compactionInterval - 1 && width * compactionInterval < checkpointInterval) {
        k += 1
        width *= compactionInterval
      }
      k
    }
}

object PolicySettings {
  val CompactionIntervalKey = "deltaLifecycle.logCompaction.interval"
  val LargeCommitBytesKey = "deltaLifecycle.logCompaction.largeCommitBytes"
  val CheckpointIntervalKey: String = DeltaConfigs.CHECKPOINT_INTERVAL.key

  /**
   * The most memory a compaction may hold its range's surviving actions in (COMPACT LOG and the
   * policy alike): the lines' lengths plus a fixed overhead per line.
   */
  val MaxBytesInMemoryKey = "deltaLifecycle.logCompaction.maxBytesInMemory"

  /**
   * How long a compaction that a wider one covers is kept after both the wider one was written and
   * its own last commit was made, so that no reader that listed it is still reading it.
   */
  val CoveredRetentionHoursKey = "deltaLifecycle.logCompaction.coveredRetentionHours"
  val DefaultCoveredRetentionHours = 24.0

  /** Session configuration only: turns the whole post-commit policy off. */
  val EnabledSessionKey = "spark.deltaLifecycle.logMaintenance.enabled"

  val DefaultCompactionInterval = 10
  val DefaultLargeCommitBytes: Long = 1L << 20
  val DefaultCheckpointInterval = 10

  /** 256 MiB, or an eighth of the JVM's maximum heap when that is less. */
  val DefaultMaxBytesInMemory: Long = math.min(256L << 20, Runtime.getRuntime.maxMemory / 8)

  /**
   * Reads the settings from the table properties, then the session, then the defaults; bad values
   * fall back too.
   */
  def resolve(
      tableProperties: Map[String, String],
      sessionConf: String => Option[String]
  ): PolicySettings = {
    def fromTable[T](key: String, parse: String => Option[T]): Option[T] =
      tableProperties.get(key).flatMap(parse)
    // A table property whose session default is the same key under `spark.`.
    def orSession[T](key: String, parse: String => Option[T], default: T): T =
      fromTable(key, parse).orElse(sessionConf("spark." + key).flatMap(parse)).getOrElse(default)
    val integer: String => Option[Int] = _.trim.toIntOption
    val positiveInt: String => Option[Int] = integer(_).filter(_ > 0)
    val positiveLong: String => Option[Long] = _.trim.toLongOption.filter(_ > 0)
    val hours: String => Option[Double] =
      _.trim.toDoubleOption.filter(h => h >= 0 && !h.isInfinite)
    PolicySettings(
      compactionInterval = orSession(CompactionIntervalKey, integer, DefaultCompactionInterval),
      largeCommitBytes = orSession(LargeCommitBytesKey, positiveLong, DefaultLargeCommitBytes),
      // delta-spark's own session default for the property applies at table creation only.
      checkpointInterval =
        fromTable(CheckpointIntervalKey, positiveInt).getOrElse(DefaultCheckpointInterval),
      maxBytesInMemory = orSession(MaxBytesInMemoryKey, positiveLong, DefaultMaxBytesInMemory),
      coveredRetentionHours =
        orSession(CoveredRetentionHoursKey, hours, DefaultCoveredRetentionHours)
    )
  }
}

/** What the policy asks for after a commit. */
sealed trait MaintenanceAction
object MaintenanceAction {
  case object Nothing extends MaintenanceAction

  /** Compactions to write, in this order: each wider one reads the narrower ones before it. */
  final case class Compact(ranges: Seq[(Long, Long)]) extends MaintenanceAction
  object Compact {
    def apply(start: Long, end: Long): Compact = Compact(Seq(start -> end))
  }
  final case class Checkpoint(version: Long) extends MaintenanceAction
}

/**
 * What the policy needs to know about a log: its latest version, the last version served by a
 * checkpoint or compaction, and the size of each commit after that. It comes from a listing, or,
 * right after a commit, from delta-spark's in-memory snapshot (so deciding costs no request).
 */
final case class LogTail(
    latestVersion: Long,
    maintainedThrough: Long,
    pending: Seq[(Long, Long)],
    checkpointVersion: Long = -1L
)

object LogTail {

  /** The tail of `listing`, or None when its latest version cannot be planned (a gap). */
  def of(listing: LogListing): Option[LogTail] =
    scala.util.Try(LogSegment.plan(listing, listing.latestVersion)).toOption.map { segment =>
      val base = segment.maintainedThrough
      LogTail(
        segment.version,
        base,
        segment.commits.filter(_.version > base).map(c => (c.version, c.status.getLen)),
        segment.checkpointVersion
      )
    }
}

/**
 * The "new rule" of the Log Compaction feature request, decided on the log's tail after a commit:
 *   - a checkpoint every `delta.checkpointInterval` commits (delta-spark's own hook does it, so the
 *     policy leaves those versions alone);
 *   - a checkpoint as soon as a large commit lands: a commit file of at least `largeCommitBytes`
 *     bytes since the last checkpoint or compaction;
 *   - otherwise compactions in levels (docs/log-compaction.md): counted from the last checkpoint,
 *     every block of `compactionInterval`^k commits gets a level-k compaction once it is complete,
 *     level 1 read from the commits, each wider level merged from the level below it. An interval
 *     below 2, or not below the checkpoint interval, turns compactions off: a checkpoint would land
 *     before the compaction pays off.
 *
 * Readers choose among compactions that start at the same version the one listed first, which is
 * the narrowest (delta-spark's `useCompactedDeltasForLogSegment`), so a wider compaction would be
 * ignored while a narrower one shares its start. Hence the shift: a compaction starts one version
 * later for each wider level whose block starts with it. No two levels then share a start, and a
 * reader of the latest version takes the widest compaction as soon as it exists, deleting nothing.
 */
object LogMaintenancePolicy {
  def decide(listing: LogListing, settings: PolicySettings): MaintenanceAction =
    LogTail.of(listing).fold[MaintenanceAction](MaintenanceAction.Nothing) { tail =>
      decide(tail, settings) match {
        case _: MaintenanceAction.Compact =>
          val all = levelRanges(tail.checkpointVersion, tail.latestVersion, settings)
          val widest = math.pow(settings.compactionInterval.toDouble, settings.levels).toLong
          val toWrite = missing(listing, all, widest)
          if (toWrite.isEmpty) MaintenanceAction.Nothing else MaintenanceAction.Compact(toWrite)
        case other => other
      }
    }

  /**
   * The decision on the tail alone (no listing of compactions beyond the chain a reader uses): a
   * compaction is due once a level-1 block is complete, or when `compactionInterval` commits have
   * piled up after the chain (a run that was missed). Which ranges exactly is decided on a listing.
   */
  def decide(tail: LogTail, settings: PolicySettings): MaintenanceAction = {
    val latest = tail.latestVersion
    val interval = settings.compactionInterval
    if (latest <= 0 || latest % settings.checkpointInterval == 0) MaintenanceAction.Nothing
    else if (tail.pending.exists(_._2 >= settings.largeCommitBytes))
      MaintenanceAction.Checkpoint(latest)
    else if (
      settings.levels > 0 &&
      ((latest - tail.checkpointVersion) % interval == 0 || tail.pending.size >= interval)
    ) {
      levelRanges(tail.checkpointVersion, latest, settings).lastOption
        .fold[MaintenanceAction](MaintenanceAction.Nothing)(r => MaintenanceAction.Compact(Seq(r)))
    } else MaintenanceAction.Nothing
  }

  /**
   * Every compaction the levels ask for between the checkpoint at `checkpointVersion` (-1: none)
   * and `latest`, narrowest level first, each level in version order: for level k and each complete
   * block of `interval`^k commits, the block shifted to start one version later for every wider
   * level (up to `levels`) whose block starts at the same version. Shifted ranges of fewer than two
   * commits are left out.
   */
  def levelRanges(checkpointVersion: Long, latest: Long, levels: Int, interval: Int)
      : Vector[(Long, Long)] = {
    val out = Vector.newBuilder[(Long, Long)]
    val span = latest - checkpointVersion
    var width = 1L
    for (level <- 1 to levels) {
      width *= interval
      var blockStart = 0L // position after the checkpoint, 0-based
      while (blockStart + width <= span) {
        var shift = 0
        var wider = width * interval
        for (_ <- level + 1 to levels) {
          if (blockStart % wider == 0) shift += 1
          wider *= interval
        }
        val start = checkpointVersion + 1 + blockStart + shift
        val end = checkpointVersion + blockStart + width
        if (end - start >= 1) out += (start -> end)
        blockStart += width
      }
    }
    out.result()
  }

  def levelRanges(checkpointVersion: Long, latest: Long, settings: PolicySettings)
      : Vector[(Long, Long)] =
    levelRanges(checkpointVersion, latest, settings.levels, settings.compactionInterval)

  /**
   * The ranges of the levels still to write: no compaction covers them, and none sticks out of them
   * on one side (another writer's; such a range is left to the commits rather than refused on every
   * run). Binary searches over the compactions sorted by start, so a long tail stays cheap.
   */
  private def missing(
      listing: LogListing,
      ranges: Vector[(Long, Long)],
      widest: Long
  ): Vector[(Long, Long)] = {
    val sorted = listing.compactions.sortBy(_.start)
    val starts = sorted.map(_.start).toArray
    val maxEndSoFar = sorted.scanLeft(Long.MinValue)((m, c) => math.max(m, c.end)).tail.toArray
    // Index of the first compaction starting after `version`.
    def after(version: Long): Int = {
      val i = java.util.Arrays.binarySearch(starts, version + 1)
      var j = if (i >= 0) i else -i - 1
      while (j > 0 && starts(j - 1) > version) j -= 1
      while (j < starts.length && starts(j) <= version) j += 1
      j
    }
    ranges.filter { case (start, end) =>
      val upToStart = after(start)
      val covered = upToStart > 0 && maxEndSoFar(upToStart - 1) >= end
      val near = sorted.slice(after(start - widest - 1), after(end))
      val stickingOut = near.exists { c =>
        c.start <= end && start <= c.end && !(start <= c.start && c.end <= end)
      }
      !covered && !stickingOut
    }
  }
}
