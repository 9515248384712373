package io.github.deltalifecycle.features.redirect

import io.github.deltalifecycle.sql.routing.Router
import io.github.deltalifecycle.core.{DeltaLifecycleException, ErrorConditions}

/** A check that would refuse the move: the error the statement would raise, by condition. */
final case class RedirectRefusal(condition: String, message: String)

object RedirectRefusal {
  def of(e: DeltaLifecycleException): RedirectRefusal =
    RedirectRefusal(e.condition, e.getMessage.stripPrefix(s"[${e.condition}] "))
}

/**
 * What SET REDIRECT or UNSET REDIRECT would do (DRY RUN), computed without writing anything in
 * either location: the table's state and version now; the data files and bytes the copy would copy,
 * those already at the destination with the source's size (from an earlier, cut-short run), those
 * referenced in place (outside the table root) and those gone (only older versions name them, and
 * they no longer exist); the log files and bytes SET REDIRECT would copy; the copy mode
 * ([[CopyMode]]), why it is not server-side when it is not, and the number of copy tasks; the
 * checks that would refuse the statement; and the steps it would take.
 */
final case class RedirectPlan(
    table: String,
    state: String,
    destination: Option[String],
    destinationLocation: Option[String],
    version: Long,
    filesToCopy: Long,
    bytesToCopy: Long,
    filesAlreadyThere: Long,
    bytesAlreadyThere: Long,
    filesReferencedInPlace: Long,
    filesGone: Long,
    logFilesToCopy: Long,
    logBytesToCopy: Long,
    copyMode: Option[String],
    copyModeReason: Option[String],
    tasks: Int,
    refusals: Seq[RedirectRefusal],
    steps: Seq[String]
) {

  /** With the forecast of a data copy (and of a log copy, for SET REDIRECT). */
  def withCopy(data: CopyForecast, logFiles: Option[CopyForecast]): RedirectPlan = {
    val missing =
      if (data.filesMissing == 0) Nil
      else Seq(RedirectRefusal.of(ErrorConditions.redirectCopyMismatch(
        s"${data.filesMissing} data files the copied version reads are missing at the source " +
          s"(${data.missingExamples.mkString("; ")})"
      )))
    copy(
      filesToCopy = data.files,
      bytesToCopy = data.bytes,
      filesAlreadyThere = data.filesAlreadyThere,
      bytesAlreadyThere = data.bytesAlreadyThere,
      filesReferencedInPlace = data.filesReferencedInPlace,
      filesGone = data.filesGone,
      logFilesToCopy = logFiles.fold(0L)(_.files),
      logBytesToCopy = logFiles.fold(0L)(_.bytes),
      copyMode = Some(data.route.mode.name),
      copyModeReason = data.route.reason,
      tasks = data.tasks,
      refusals = refusals ++ missing
    )
  }
}

object RedirectPlan {

  /** The plan of `table` as it is (`info`), before any copy is forecast. */
  def of(
      ctx: RoutingContext,
      table: String,
      info: RedirectInfo,
      destination: Option[RedirectSpec],
      refusals: Seq[RedirectRefusal],
      steps: Seq[String]
  ): RedirectPlan = RedirectPlan(
    table,
    info.state,
    destination.map(_.describe),
    destination.flatMap { spec =>
      try Some(Router.destinationPath(ctx, table, spec).toString)
      catch { case _: DeltaLifecycleException => None }
    },
    info.version,
    0L,
    0L,
    0L,
    0L,
    0L,
    0L,
    0L,
    0L,
    None,
    None,
    0,
    refusals,
    steps
  )
}

/** The refusals a DRY RUN collects: each check runs as the statement would run it. */
private[redirect] final class RefusalCollector {
  private val found = Vector.newBuilder[RedirectRefusal]

  /** Runs `check`; a refusal it raises is recorded instead of thrown. False when it refused. */
  def check(check: => Unit): Boolean =
    try { check; true }
    catch { case e: DeltaLifecycleException => found += RedirectRefusal.of(e); false }

  def add(e: DeltaLifecycleException): Unit = found += RedirectRefusal.of(e)

  def result: Seq[RedirectRefusal] = found.result()
}
