package io.github.deltalifecycle.features.compaction

import io.github.deltalifecycle.core.LogFiles
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileStatus, Path}
import org.apache.spark.SparkConf
import org.apache.spark.sql.delta.storage.{DelegatingLogStore, LogStore}
import org.apache.spark.sql.delta.util.FileNames

/**
 * delta-spark's default LogStore (which picks the store for each URI scheme, honouring
 * `spark.delta.logStore.<scheme>.impl`), plus one thing: after a commit file is written it tells
 * [[LogMaintenance]]. It is the only hook that sees every commit delta-spark makes (SQL, DataFrame
 * writes, the DeltaTable API, streaming), because delta-spark's own post-commit hooks are closed.
 * The extension installs it as `spark.delta.logStore.class` unless the user already set that.
 */
class CommitObservingLogStore(sparkConf: SparkConf, hadoopConf: Configuration) extends LogStore {
  private val delegate = new DelegatingLogStore(hadoopConf)

  override def read(path: Path): Seq[String] = delegate.read(path)
  override def read(path: Path, hadoopConf: Configuration): Seq[String] =
    delegate.read(path, hadoopConf)
  override def readAsIterator(path: Path) = delegate.readAsIterator(path)
  override def readAsIterator(path: Path, hadoopConf: Configuration) =
    delegate.readAsIterator(path, hadoopConf)

  override def write(path: Path, actions: Iterator[String], overwrite: Boolean): Unit = {
    delegate.write(path, actions, overwrite)
    observe(path, overwrite, hadoopConf)
  }

  override def write(
      path: Path,
      actions: Iterator[String],
      overwrite: Boolean,
      hadoopConf: Configuration
  ): Unit = {
    delegate.write(path, actions, overwrite, hadoopConf)
    observe(path, overwrite, hadoopConf)
  }

  override def listFrom(path: Path): Iterator[FileStatus] = delegate.listFrom(path)
  override def listFrom(path: Path, hadoopConf: Configuration): Iterator[FileStatus] =
    delegate.listFrom(path, hadoopConf)
  override def invalidateCache(): Unit = delegate.invalidateCache()
  override def resolvePathOnPhysicalStorage(path: Path): Path =
    delegate.resolvePathOnPhysicalStorage(path)
  override def resolvePathOnPhysicalStorage(path: Path, hadoopConf: Configuration): Path =
    delegate.resolvePathOnPhysicalStorage(path, hadoopConf)
  override def isPartialWriteVisible(path: Path): Boolean = delegate.isPartialWriteVisible(path)
  override def isPartialWriteVisible(path: Path, hadoopConf: Configuration): Boolean =
    delegate.isPartialWriteVisible(path, hadoopConf)

  // A commit is a put-if-absent of `<version>.json` directly in a `_delta_log` directory.
  private def observe(path: Path, overwrite: Boolean, conf: Configuration): Unit =
    if (
      !overwrite && FileNames.isDeltaFile(path) &&
      path.getParent.getName == LogFiles.LogDirName
    ) {
      LogMaintenance.onCommit(path, delegate, conf)
    }
}

object CommitObservingLogStore {
  val LogStoreClassKey = "spark.delta.logStore.class"
}
