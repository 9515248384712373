package io.github.deltalifecycle.features.redirect

import io.github.deltalifecycle.sql.routing.Router
import io.github.deltalifecycle.core.{ErrorConditions, LogFiles, TableLog}
import org.apache.hadoop.fs.Path

/**
 * What SET REDIRECT checks at its destination: before anything is written, that the destination
 * commits directly and is allowed, apart from the source, and absent or empty; after the copy, that
 * it is the source's table at the copied version. `log` is the source's.
 */
private[redirect] final class DestinationChecks(
    ctx: RoutingContext,
    log: TableLog,
    displayName: String
) {

  /**
   * The copy writes the destination's log. A resumed run finds its own partial copy there, which
   * may not read as a table yet; it is a copy of the source, checked already.
   */
  def requireDirectCommitsAt(destPath: Path): Unit =
    scala.util.Try(RedirectLookup.read(ctx.hadoopConf(destPath), destPath)).toOption.flatten
      .foreach(_.requireDirectCommits(destPath.toString, s"redirect $displayName to"))

  /**
   * The checks made before anything is written: allowed, not overlapping the source, absent or
   * empty (or holding this source's own pre-copy, from a run cut short before it wrote any log).
   */
  def checkTarget(target: RedirectTarget, dest: Path): Unit = {
    Router.checkAllowed(ctx, dest.toString)
    val src = log.tablePath.toString.stripSuffix("/") + "/"
    val dst = dest.toString.stripSuffix("/") + "/"
    if (src.startsWith(dst) || dst.startsWith(src)) {
      throw ErrorConditions.redirectDestinationNotEmpty(
        location = dest.toString,
        reason = "it is the source table's location, or inside or around it"
      )
    }
    target match {
      case RedirectTarget.ToTable(name, _, true, _) =>
        throw ErrorConditions.redirectDestinationNotEmpty(
          location = name,
          reason = "the table already exists in the catalog"
        )
      case _ =>
    }
    checkEmpty(dest)
  }

  /** Absent, or an empty directory, or one holding only this source's own pre-copy. */
  private def checkEmpty(dest: Path): Unit = {
    val fs = dest.getFileSystem(ctx.hadoopConf(dest))
    if (fs.exists(dest)) {
      val status = fs.getFileStatus(dest)
      if (!status.isDirectory)
        throw ErrorConditions.redirectDestinationNotEmpty(
          location = dest.toString,
          reason = "it is a file"
        )
      val entries = fs.listStatus(dest)
      if (
        entries.nonEmpty && !PreCopyMarker.holdsPreCopyOf(ctx.hadoopConf(dest), dest, log.tablePath)
      ) {
        val what = if (entries.exists(_.getPath.getName == LogFiles.LogDirName))
          "it holds a Delta table"
        else s"it holds ${entries.length} entries"
        throw ErrorConditions.redirectDestinationNotEmpty(location = dest.toString, reason = what)
      }
    }
  }

  /**
   * The destination must be a Delta table at exactly the copied version, readable by this client's
   * log core.
   */
  def verifyCopy(dest: Path, version: Long): Unit = {
    val destLog = TableLog.forPath(ctx.hadoopConf(dest), dest)
    val listing = destLog.tailListing()
    if (listing.latestVersion != version) {
      throw ErrorConditions.redirectCopyMismatch(
        s"the destination's latest version is ${listing.latestVersion}, expected $version"
      )
    }
    val (destProtocol, destMetadata) = destLog.protocolAndMetadataAt(version, listing)
    val (srcProtocol, srcMetadata) = log.protocolAndMetadataAt(version, log.listingFor(version))
    if (destProtocol != srcProtocol || destMetadata.id != srcMetadata.id) {
      throw ErrorConditions.redirectCopyMismatch(
        "the destination's protocol or table id differs from the source's"
      )
    }
  }
}
