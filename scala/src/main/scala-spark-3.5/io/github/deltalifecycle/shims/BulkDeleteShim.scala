package io.github.deltalifecycle.shims

import java.io.Closeable

import org.apache.hadoop.fs.{FileSystem, Path}

/**
 * Hadoop's bulk delete, which Spark 3.5's Hadoop (3.3) does not have: CLEAN LOG always deletes one
 * file at a time, on several threads.
 */
object BulkDeleteShim {

  /** A bulk delete under one base path. */
  trait Handle extends Closeable {
    def pageSize: Int

    /** Deletes `paths` (at most `pageSize`); returns those not deleted, with the reason. */
    def delete(paths: Seq[Path]): Seq[(Path, String)]
  }

  /** Never one on Hadoop 3.3. */
  def open(fs: FileSystem, base: Path): Option[Handle] = None
}
