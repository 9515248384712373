package io.github.deltalifecycle.core

import org.apache.hadoop.fs.FileStatus

/** A commit the table's catalog has ratified: its version and the staged file that holds it. */
final case class RatifiedCommit(version: Long, status: FileStatus)

/**
 * The commits of a catalog-managed table that its catalog has ratified but `_delta_log` may not
 * hold yet. Such a table's writer stages each commit in `_delta_log/_staged_commits/`, the catalog
 * ratifies it, and the writer copies it to `_delta_log/<v>.json` afterwards (backfills it); a
 * writer that stops in between leaves a version only the catalog knows. The catalogManaged RFC
 * makes the catalog the source of truth for those versions, so every listing of such a table adds
 * them ([[TableLog]]).
 */
trait RatifiedCommits {

  /** Who ratified them, for messages: "the catalog lake". */
  def source: String

  /** The ratified commits from `fromVersion` on that the catalog still tracks, oldest first. */
  def from(fromVersion: Long): Seq[RatifiedCommit]
}
