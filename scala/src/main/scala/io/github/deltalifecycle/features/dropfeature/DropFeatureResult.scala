package io.github.deltalifecycle.features.dropfeature

/** How a drop removes a feature; `name` is the value of the result's `mode` column. */
sealed abstract class DropMode(val name: String)
object DropMode {

  /** Under checkpoint protection, in one run (the Checkpoint Protection RFC). */
  case object Fast extends DropMode("fast")

  /** By truncating the history that uses the feature ("Drop Delta table features"). */
  case object TruncateHistory extends DropMode("truncate-history")
}

/** Whether a result is a drop done or one DRY RUN planned; `name` is the `status` column. */
sealed abstract class DropStatus(val name: String)
object DropStatus {
  case object Planned extends DropStatus("planned")
  case object Dropped extends DropStatus("dropped")
}

/**
 * What a drop did, or (status `planned`) would do. Versions are those the drop wrote or, for a
 * plan, will write if no other writer commits meanwhile.
 *
 * @param protectedBefore
 *   the checkpoint protection boundary
 *   (`DeltaConfigs.REQUIRE_CHECKPOINT_PROTECTION_BEFORE_VERSION`) afterwards
 * @param readableWithoutFeatureFrom
 *   the first version a client without the feature can read
 * @param historyTruncatedBefore
 *   the earliest version left after truncating history
 */
final case class DropFeatureResult(
    feature: String,
    mode: DropMode,
    status: DropStatus,
    steps: Seq[DropStep],
    filesRewritten: Long,
    bytesRewritten: Long,
    commitVersions: Seq[Long],
    checkpointVersions: Seq[Long],
    protectedBefore: Option[Long],
    readableWithoutFeatureFrom: Option[Long],
    historyTruncatedBefore: Option[Long]
)
