package io.github.deltalifecycle.features.redirect

import scala.collection.mutable

import io.github.deltalifecycle.core.{ActionReader, LogListing, TableLog}
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.delta.actions.{CommitInfo, Metadata}

/**
 * A position in a stream of a table's changes, as delta-spark's streaming source counts it: a
 * version, the index of a data file added in it (or a marker index before or after them), and
 * whether the position points into the table as it was at that version (the initial snapshot) or
 * into the changes that version made.
 */
final case class StreamPosition(version: Long, index: Long, initialSnapshot: Boolean)

/**
 * How the versions of a redirected table at one of its locations correspond to its versions at the
 * other, so that a stream that read up to a position at one location continues at the other with no
 * row read twice and none skipped.
 *
 * SET REDIRECT copies the source's log up to the version before the redirect (`shared`): both
 * locations have the same versions up to it, and the source's later versions are the redirect's own
 * protocol and metadata commits, which add or remove no file. UNSET REDIRECT replays each
 * destination version written since as one source commit that carries the destination's actions in
 * their order (so a file keeps its index) and records the destination version, then ends the
 * redirect with a commit that again adds or removes no file.
 */
sealed trait VersionCorrespondence {

  /** The version at the other location where the table holds the same files as at `v` here. */
  protected def sameFiles(v: Long): Long

  /**
   * Where the changes after version `v` here continue at the other location: `Right(w)` when `w`
   * makes the same changes as `v`, `Left(w)` when the changes of `v` have no counterpart (they
   * added or removed no file) and the next change there is `w`'s.
   */
  protected def changesAt(v: Long): Either[Long, Long]

  /**
   * `p` as the same position at the other location; `startIndex` is the index before `w`'s files.
   */
  def translate(p: StreamPosition, startIndex: Long): StreamPosition =
    if (p.initialSnapshot) p.copy(version = sameFiles(p.version))
    else changesAt(p.version) match {
      case Right(w) => p.copy(version = w)
      case Left(w) => StreamPosition(w, startIndex, initialSnapshot = false)
    }
}

object VersionCorrespondence {

  /** The same location. */
  case object Identity extends VersionCorrespondence {
    protected def sameFiles(v: Long): Long = v
    protected def changesAt(v: Long): Either[Long, Long] = Right(v)
  }

  /** From a redirected source to its destination, which shares versions up to `shared`. */
  final case class SourceToDestination(shared: Long) extends VersionCorrespondence {
    protected def sameFiles(v: Long): Long = math.min(v, shared)
    protected def changesAt(v: Long): Either[Long, Long] =
      if (v <= shared) Right(v) else Left(shared + 1)
  }

  /**
   * From a former destination back to the source after UNSET REDIRECT: versions up to `shared` are
   * the same, each later destination version `d` became source version `replayed(d)`, and the
   * source's changes resume with version `resumed`, the one that ended the redirect.
   */
  final case class DestinationToSource(shared: Long, replayed: Map[Long, Long], resumed: Long)
      extends VersionCorrespondence {
    private val lastReplayed = if (replayed.isEmpty) shared else replayed.keys.max

    protected def sameFiles(v: Long): Long =
      if (v <= shared) v else replayed.getOrElse(math.min(v, lastReplayed), sameFilesAtEnd)

    private def sameFilesAtEnd: Long = replayed.get(lastReplayed).getOrElse(shared)

    protected def changesAt(v: Long): Either[Long, Long] =
      if (v <= shared) Right(v)
      else if (v > lastReplayed) Left(resumed)
      else replayed.get(v).map(Right(_)).getOrElse(throw new IllegalStateException(
        s"destination version $v was not replayed on the source"
      ))
  }

  /**
   * How positions read at `from` continue at `to`, where one of them is `source` (the table the
   * stream names) and the other a destination it is or was redirected to. `sameLocation` compares
   * two locations as the session qualifies them.
   */
  def between(
      hadoopConf: Configuration,
      source: Path,
      from: Path,
      to: Path,
      sameLocation: (Path, Path) => Boolean
  ): VersionCorrespondence = {
    val redirects = new SourceRedirects(hadoopConf, source, sameLocation)
    if (sameLocation(from, to)) Identity
    else if (sameLocation(from, source)) redirects.toDestination(to)
    else if (sameLocation(to, source)) redirects.fromDestination(from)
    else Chain(redirects.fromDestination(from), redirects.toDestination(to))
  }

  /** One correspondence after another (a former destination, the source, a new destination). */
  private final case class Chain(first: VersionCorrespondence, second: VersionCorrespondence)
      extends VersionCorrespondence {
    protected def sameFiles(v: Long): Long = second.sameFiles(first.sameFiles(v))
    protected def changesAt(v: Long): Either[Long, Long] = first.changesAt(v) match {
      case Right(w) => second.changesAt(w)
      // The start of w at the middle location is the start of its counterpart at the last.
      case Left(w) => Left(second.changesAt(w).merge)
    }
  }

  /** The redirects of `source`, now and ended, to destinations `sameLocation` recognizes. */
  private final class SourceRedirects(
      hadoopConf: Configuration,
      source: Path,
      sameLocation: (Path, Path) => Boolean
  ) {

    /**
     * To `destination`: the one the source is redirected to now (its versions up to the one before
     * the redirect began are shared), or one it was redirected to before.
     */
    def toDestination(destination: Path): VersionCorrespondence = {
      val now = RedirectLookup.read(hadoopConf, source).filter(_.config.exists(c =>
        !c.isDestinationMarker &&
          RedirectCycle.location(c.spec).exists(sameLocation(_, destination))
      ))
      now match {
        case Some(info) => SourceToDestination(
            RedirectLookup.versionBeforeRedirect(hadoopConf, info, dataChangesAllowed = true)
          )
        case None => SourceToDestination(endedTo(destination).shared)
      }
    }

    /** Back from `destination`, one of the redirects of `source` that ended. */
    def fromDestination(destination: Path): VersionCorrespondence = {
      val c = endedTo(destination)
      DestinationToSource(c.shared, c.replayed, c.ended)
    }

    private def endedTo(destination: Path): RedirectCycle =
      RedirectCycle.ended(hadoopConf, source, above = -1L)
        .find(_.destination.exists(sameLocation(_, destination)))
        .getOrElse(throw RedirectErrors.streamPositionUnmapped(
          source.toString,
          destination.toString,
          "the source's retained log has no redirect to it that ended"
        ))
  }
}

/**
 * A redirect that ended, as the source's log records it: the last version the source and the
 * destination shared, the destination versions UNSET REDIRECT replayed and the source versions that
 * carry them, and the version that ended it (DROP-REDIRECT-IN-PROGRESS -> NORMAL).
 */
final case class RedirectCycle(
    shared: Long,
    destination: Option[Path],
    replayed: Map[Long, Long],
    ended: Long
)

object RedirectCycle {

  /**
   * The redirects of the table at `source` that ended after version `above`, newest first, read
   * from its log's latest version down (each commit's commit info and metadata, no checkpoint).
   */
  def ended(hadoopConf: Configuration, source: Path, above: Long): Seq[RedirectCycle] = {
    val log = TableLog.forPath(hadoopConf, source)
    val listing = log.listing()
    val cycles = Vector.newBuilder[RedirectCycle]
    var top = listing.latestVersion
    var done = false
    while (!done && top > above) endingBelow(log, listing, top) match {
      case Some(cycle) if cycle.ended > above =>
        cycles += cycle
        top = cycle.shared
      case _ => done = true
    }
    cycles.result()
  }

  /**
   * The newest commit at or below `top` that ended a redirect (UNSET REDIRECT to NORMAL, not a
   * cancel), with the replays between it and the redirect's DROP-REDIRECT-IN-PROGRESS commit, which
   * names the destination.
   */
  private def endingBelow(log: TableLog, listing: LogListing, top: Long): Option[RedirectCycle] = {
    var v = top
    var end: Option[Long] = None
    val replayed = mutable.Map.empty[Long, Long]
    while (v > 0) {
      val actions = listing.commit(v).toSeq.flatMap(c =>
        ActionReader.readJsonSelected(log.readFs, c.status, Set("commitInfo", "metaData"))
      )
      val info = actions.collectFirst { case ci: CommitInfo => ci }
      val op = info.map(_.operation).getOrElse("")
      val params = info.map(_.operationParameters).getOrElse(Map.empty[String, String])
      if (end.isEmpty) {
        if (op == "UNSET REDIRECT" && isNormal(params) && !params.contains("cancelled"))
          end = Some(v)
      } else if (op == DestinationReplay.CopyBackOperation) {
        params.get(DestinationReplay.DestinationVersionKey).foreach(d => replayed(unquote(d)) = v)
      } else {
        val config = actions.collectFirst { case m: Metadata => m }
          .flatMap(m => RedirectConfig.fromMetadata(m, log.tablePath.toString))
        if (config.isDefined) {
          val shared =
            RedirectLookup.versionBeforeRedirect(log, listing, v, dataChangesAllowed = true)
          val destination = config.flatMap(c => location(c.spec))
          return Some(RedirectCycle(shared, destination, replayed.toMap, end.get))
        }
      }
      v -= 1
    }
    None
  }

  /** Where a redirect's spec says its destination is (a table's, as recorded when it was set). */
  def location(spec: RedirectSpec): Option[Path] = spec match {
    case RedirectSpec.Location(uri) => Some(new Path(uri))
    case RedirectSpec.Table(_, location) => location.map(new Path(_))
    case u: RedirectSpec.UnityCatalogTable => u.location.map(new Path(_))
  }

  private def isNormal(params: Map[String, String]): Boolean =
    params.get("state").map(unquoteText).contains(RedirectState.Normal)

  /** delta-spark stores commit parameters as JSON values: `"5"` or `5`. */
  private def unquoteText(s: String): String = s.stripPrefix("\"").stripSuffix("\"")
  private def unquote(s: String): Long = unquoteText(s).toLong
}
