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
    maxBytesInMemory: Long = PolicySettings.DefaultMaxBytesInMemory
)

object PolicySettings {
  val CompactionIntervalKey = "deltaLifecycle.logCompaction.interval"
  val LargeCommitBytesKey = "deltaLifecycle.logCompaction.largeCommitBytes"
  val CheckpointIntervalKey: String = DeltaConfigs.CHECKPOINT_INTERVAL.key

  /**
   * The most memory a compaction may hold its range's surviving actions in (COMPACT LOG and the
   * policy alike): the lines' lengths plus a fixed overhead per line.
   */
  val MaxBytesInMemoryKey = "deltaLifecycle.logCompaction.maxBytesInMemory"

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
    def setting[T](
        key: String,
        parse: String => Option[T],
        default: T,
        sessionKey: Option[String]
    ): T =
      tableProperties.get(key).flatMap(parse)
        .orElse(sessionKey.flatMap(sessionConf).flatMap(parse))
        .getOrElse(default)
    PolicySettings(
      compactionInterval = setting(
        CompactionIntervalKey,
        _.trim.toIntOption,
        DefaultCompactionInterval,
        Some("spark." + CompactionIntervalKey)
      ),
      largeCommitBytes = setting(
        LargeCommitBytesKey,
        _.trim.toLongOption.filter(_ > 0),
        DefaultLargeCommitBytes,
        Some("spark." + LargeCommitBytesKey)
      ),
      // delta-spark's own session default for the property applies at table creation only.
      checkpointInterval = setting(
        CheckpointIntervalKey,
        _.trim.toIntOption.filter(_ > 0),
        DefaultCheckpointInterval,
        None
      ),
      maxBytesInMemory = setting(
        MaxBytesInMemoryKey,
        _.trim.toLongOption.filter(_ > 0),
        DefaultMaxBytesInMemory,
        Some("spark." + MaxBytesInMemoryKey)
      )
    )
  }
}

/** What the policy asks for after a commit. */
sealed trait MaintenanceAction
object MaintenanceAction {
  case object Nothing extends MaintenanceAction
  final case class Compact(start: Long, end: Long) extends MaintenanceAction
  final case class Checkpoint(version: Long) extends MaintenanceAction
}

/**
 * What the policy needs to know about a log: its latest version, the last version served by a
 * checkpoint or compaction, and the size of each commit after that. It comes from a listing, or,
 * right after a commit, from delta-spark's in-memory snapshot (so deciding costs no request).
 */
final case class LogTail(latestVersion: Long, maintainedThrough: Long, pending: Seq[(Long, Long)])

object LogTail {

  /** The tail of `listing`, or None when its latest version cannot be planned (a gap). */
  def of(listing: LogListing): Option[LogTail] =
    scala.util.Try(LogSegment.plan(listing, listing.latestVersion)).toOption.map { segment =>
      val base = segment.maintainedThrough
      LogTail(
        segment.version,
        base,
        segment.commits.filter(_.version > base).map(c => (c.version, c.status.getLen))
      )
    }
}

/**
 * The "new rule" of the Log Compaction feature request, decided on the log's tail after a commit:
 *   - a checkpoint every `delta.checkpointInterval` commits (delta-spark's own hook does it, so the
 *     policy leaves those versions alone);
 *   - a checkpoint as soon as a large commit lands: a commit file of at least `largeCommitBytes`
 *     bytes since the last checkpoint or compaction;
 *   - otherwise a compaction once `compactionInterval` small commits have piled up since the last
 *     checkpoint or compaction. An interval below 2, or not below the checkpoint interval, turns
 *     compactions off: a checkpoint would land before the compaction pays off.
 */
object LogMaintenancePolicy {
  def decide(listing: LogListing, settings: PolicySettings): MaintenanceAction =
    LogTail.of(listing).fold[MaintenanceAction](MaintenanceAction.Nothing)(decide(_, settings))

  def decide(tail: LogTail, settings: PolicySettings): MaintenanceAction = {
    val latest = tail.latestVersion
    if (latest <= 0 || latest % settings.checkpointInterval == 0) MaintenanceAction.Nothing
    else if (tail.pending.exists(_._2 >= settings.largeCommitBytes))
      MaintenanceAction.Checkpoint(latest)
    else if (
      settings.compactionInterval >= 2 &&
      settings.compactionInterval < settings.checkpointInterval &&
      tail.pending.size >= settings.compactionInterval
    ) {
      MaintenanceAction.Compact(tail.maintainedThrough + 1, latest)
    } else MaintenanceAction.Nothing
  }
}
