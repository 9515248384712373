package io.github.deltalifecycle.shims

import java.io.Closeable

import scala.jdk.CollectionConverters._

import org.apache.hadoop.fs.{FileSystem, Path}

/** Hadoop's bulk delete, which Spark 4's Hadoop (3.4) has and Spark 3.5's (3.3) has not. */
object BulkDeleteShim {

  /** A bulk delete under one base path. */
  trait Handle extends Closeable {
    def pageSize: Int

    /** Deletes `paths` (at most `pageSize`); returns those not deleted, with the reason. */
    def delete(paths: Seq[Path]): Seq[(Path, String)]
  }

  /** The file system's bulk delete under `base`, or None when it has none. */
  def open(fs: FileSystem, base: Path): Option[Handle] =
    try {
      val bulk = fs.createBulkDelete(base)
      Some(new Handle {
        override def pageSize: Int = bulk.pageSize
        override def delete(paths: Seq[Path]): Seq[(Path, String)] =
          bulk.bulkDelete(paths.asJava).asScala.map(e => e.getKey -> e.getValue).toSeq
        override def close(): Unit = bulk.close()
      }: Handle)
    } catch { case _: UnsupportedOperationException | _: IllegalArgumentException => None }
}
