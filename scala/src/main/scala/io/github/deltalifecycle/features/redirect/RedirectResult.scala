package io.github.deltalifecycle.features.redirect

/**
 * What SET REDIRECT, UNSET REDIRECT and DESCRIBE REDIRECT report: the redirect as it now is, and
 * what the command did to get there (nothing, for DESCRIBE).
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
    steps: Seq[String]
)

object RedirectResult {
  def describe(table: String, info: RedirectInfo): RedirectResult = {
    val c = info.config
    RedirectResult(
      table,
      info.state,
      c.map(_.mode),
      c.map(_.redirectType),
      c.map(_.spec.describe),
      c.flatMap(_.destinationLocation),
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
