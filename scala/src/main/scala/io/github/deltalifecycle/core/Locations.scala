package io.github.deltalifecycle.core

import java.io.IOException

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

/**
 * Locations typed by users (SET REDIRECT targets, ``delta.`path` `` names, redirect property
 * values). Hadoop refuses a malformed one with an untyped `IllegalArgumentException`, and an
 * unknown scheme with an `IOException` only when the file system is first asked for; these turn
 * both into the caller's typed error, before anything is written.
 */
object Locations {

  /** The Hadoop path of `location`; `invalid(reason)` is thrown when it is not one. */
  def parse(location: String)(invalid: String => DeltaLifecycleException): Path =
    try {
      if (location.trim.isEmpty) throw invalid("it is empty")
      new Path(location)
    } catch { case e: IllegalArgumentException => throw invalid(reasonOf(e)) }

  /** `location` made absolute and given its file system's scheme. */
  def qualify(
      location: String,
      hadoopConf: Configuration
  )(invalid: String => DeltaLifecycleException): Path = {
    val path = parse(location)(invalid)
    try path.getFileSystem(hadoopConf).makeQualified(path)
    catch { case e @ (_: IOException | _: IllegalArgumentException) => throw invalid(reasonOf(e)) }
  }

  private def reasonOf(e: Throwable): String = Option(e.getCause).getOrElse(e).getMessage
}
