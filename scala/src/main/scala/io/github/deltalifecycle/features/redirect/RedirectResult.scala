package io.github.deltalifecycle.features.redirect

import io.github.deltalifecycle.sql.routing.Router
import io.github.deltalifecycle.core.DeltaLifecycleException

/**
 * What SET REDIRECT, UNSET REDIRECT and DESCRIBE REDIRECT report: the redirect as it now is, and
 * what the command did to get there (nothing, for DESCRIBE). `copyMode` is how the files were
 * copied ([[CopyMode]]; None when the command copied nothing), `copyModeReason` why it was not a
 * server-side copy when it was not (or why some files went through streams), and
 * `bytesThroughExecutors` the bytes the executors read and wrote themselves.
 */
final case class RedirectResult(
    table: String,
    state: String,
    mode: Option[RedirectMode],
    redirectType: Option[String],
    destination: Option[String],
    destinationLocation: Option[String],
    noRedirectRules: Seq[NoRedirectRule],
    version: Long,
    filesCopied: Long,
    bytesCopied: Long,
    commitVersions: Seq[Long],
    steps: Seq[String],
    copyMode: Option[String] = None,
    copyModeReason: Option[String] = None,
    bytesThroughExecutors: Long = 0L
)

object RedirectResult {

  /**
   * The redirect of `info`. Its destination is the table or location routing sends accesses to now
   * (a catalog table by the name it has now); the destination's location is left out, not an error,
   * when the destination cannot be found, so a broken redirect can still be described.
   */
  def describe(ctx: RoutingContext, table: String, info: RedirectInfo): RedirectResult = {
    val c = info.config
    val route = c.flatMap { config =>
      try Some(Router.destinationOf(ctx, table, config.spec))
      catch { case _: DeltaLifecycleException => None }
    }
    val (destinationName, destinationLocation) = route match {
      case Some(Route.DestinationTable(name, path)) => (Some(name), Some(path.toString))
      case Some(Route.Destination(path)) => (None, Some(path.toString))
      case _ => (None, None)
    }
    RedirectResult(
      table,
      info.state,
      c.map(_.mode),
      c.map(_.redirectType),
      c.map(config => destinationName.getOrElse(config.spec.describe)),
      destinationLocation,
      c.map(_.noRedirectRules).getOrElse(Nil),
      info.version,
      0,
      0,
      Nil,
      c.filter(_.isDestinationMarker).map(_ =>
        "this table is the destination of a redirect being dropped"
      ).toSeq
    )
  }
}

/**
 * What one run of SET or UNSET REDIRECT did, collected step by step: the versions it committed on
 * the redirected table, and one line per step for its [[RedirectResult]].
 */
private[redirect] final class ProcedureReport {
  private val commits = Vector.newBuilder[Long]
  private val steps = Vector.newBuilder[String]

  def committed(version: Long): Unit = commits += version

  def note(step: String): Unit = steps += step

  /** `now` (the redirect after the run) with what the run did. */
  def result(now: RedirectResult, copied: CopyStats): RedirectResult = now.copy(
    filesCopied = copied.filesCopied,
    bytesCopied = copied.bytesCopied,
    commitVersions = commits.result(),
    steps = steps.result(),
    copyMode = copied.route.map(_.mode.name),
    copyModeReason = copied.route.flatMap(_.reason).orElse(copied.refusal.map(r =>
      s"the store refused ${copied.refusedServerSide} server-side copies, which went through " +
        s"streams instead: $r"
    )),
    bytesThroughExecutors = copied.bytesThroughExecutors
  )
}
