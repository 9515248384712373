package io.github.deltalifecycle.features.redirect

import java.nio.charset.StandardCharsets

import io.github.deltalifecycle.core.LogFiles
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

/**
 * The file that marks a SET REDIRECT destination as holding a source's pre-copy (hidden from Delta
 * readers and VACUUM by its leading underscore). It names the source by its qualified location, so
 * that a run cut short before it wrote any log finds its own pre-copy acceptable; it goes once the
 * log is copied.
 */
private[redirect] object PreCopyMarker {
  val Name = "_delta_lifecycle_precopy"

  private def at(dest: Path): Path = new Path(dest, Name)

  /** Marks `dest` as holding `source`'s pre-copy. */
  def write(conf: Configuration, dest: Path, source: Path): Unit = {
    val out = dest.getFileSystem(conf).create(at(dest), true)
    try out.write(source.toString.getBytes(StandardCharsets.UTF_8))
    finally out.close()
  }

  /** Whether `dest` holds `source`'s pre-copy: the marker naming it, and no log yet. */
  def holdsPreCopyOf(conf: Configuration, dest: Path, source: Path): Boolean = {
    val fs = dest.getFileSystem(conf)
    !fs.exists(new Path(dest, LogFiles.LogDirName)) && scala.util.Try {
      val in = fs.open(at(dest))
      try new String(in.readAllBytes(), StandardCharsets.UTF_8)
      finally in.close()
    }.toOption.contains(source.toString)
  }

  def remove(conf: Configuration, dest: Path): Unit =
    dest.getFileSystem(conf).delete(at(dest), false)
}
