package io.github.deltalifecycle.features.compaction

import java.io.FileNotFoundException

import io.github.deltalifecycle.core.{CompactionFile, LogListing, TableLog}
import org.apache.spark.internal.Logging

/**
 * The clean-up of the levels: a compaction that a wider one covers is no longer read for the latest
 * version, but a reader that listed it before the wider one existed, or one reading a version
 * inside the wider range (time travel), may still be reading it. So it goes only once the retention
 * period has passed both since the wider one was written and since its own last commit was made.
 */
object CoveredCompactions extends Logging {

  /**
   * The compactions of `listing` that a wider non-empty one covers, with the retention period past
   * at `nowMillis` (both the wider file's and the covered range's last commit's modification time).
   */
  def expired(
      listing: LogListing,
      retentionHours: Double,
      nowMillis: Long
  ): Vector[CompactionFile] = {
    val cutOff = nowMillis - (retentionHours * 3600 * 1000).toLong
    def madeBefore(c: CompactionFile): Boolean =
      listing.commit(c.end).getOrElse(c).status.getModificationTime <= cutOff
    listing.compactions.filter { narrow =>
      madeBefore(narrow) && listing.compactions.exists { wide =>
        wide != narrow && wide.start <= narrow.start && narrow.end <= wide.end &&
        wide.status.getLen > 0 && wide.status.getModificationTime <= cutOff
      }
    }
  }

  /**
   * Deletes `files` (`why`: for the log), oldest range first; a file already gone counts as
   * deleted. `afterFirst` runs after the first deletion (a crash point for tests). Returns how many
   * were deleted.
   */
  def remove(
      log: TableLog,
      files: Seq[CompactionFile],
      why: String,
      afterFirst: () => Unit
  ): Int = {
    var deleted = 0
    files.sortBy(c => (c.start, c.end)).foreach { c =>
      val gone =
        try log.fs.delete(c.status.getPath, false) || !log.fs.exists(c.status.getPath)
        catch { case _: FileNotFoundException => true }
      if (gone) {
        deleted += 1
        if (deleted == 1) afterFirst()
      } else logWarning(s"Could not delete the compaction ${c.name} ($why); the next run retries")
    }
    if (deleted > 0) {
      logInfo(s"Removed $deleted compactions of ${log.tablePath} ($why)")
    }
    deleted
  }
}
