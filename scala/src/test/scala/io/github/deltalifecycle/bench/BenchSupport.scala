package io.github.deltalifecycle.bench

import java.io.{File, PrintWriter}

import io.github.deltalifecycle.LifecycleSparkSession
import org.apache.hadoop.conf.Configuration
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.delta.DeltaLog
import org.apache.spark.sql.delta.actions.{AddFile, CommitInfo}
import org.apache.spark.sql.delta.storage.LogStore
import org.apache.spark.sql.delta.util.FileNames

/** Shared plumbing of the benchmarks: a session, timing, and CSV output under bench/results. */
object BenchSupport {
  def session(name: String): SparkSession = LifecycleSparkSession.builder(name).getOrCreate()

  /** Wall time of `f` in seconds. */
  def time(f: => Any): Double = {
    val start = System.nanoTime()
    f
    (System.nanoTime() - start) / 1e9
  }

  def median(xs: Seq[Double]): Double = {
    val s = xs.sorted
    if (s.size % 2 == 1) s(s.size / 2) else (s(s.size / 2 - 1) + s(s.size / 2)) / 2
  }

  /**
   * Writes commit `version` as a blind append of `adds`, serialized with delta-spark's action
   * classes and written with its LogStore: a full transaction per commit costs about half a second
   * on this machine, too long for the thousands of commits benchmarks need.
   */
  def writeAppendCommit(
      store: LogStore,
      deltaLog: DeltaLog,
      hadoopConf: Configuration,
      version: Long,
      adds: Seq[AddFile]
  ): Unit = {
    val commitInfo = CommitInfo.empty().copy(
      timestamp = new java.sql.Timestamp(System.currentTimeMillis()),
      operation = "WRITE",
      operationParameters =
        Map("mode" -> "\"Append\"", "partitionBy" -> "\"[]\""), // values are raw JSON
      readVersion = Some(version - 1L),
      isBlindAppend = Some(true),
      txnId = Some(java.util.UUID.randomUUID().toString)
    )
    store.write(
      FileNames.unsafeDeltaFile(deltaLog.logPath, version),
      Iterator(commitInfo.json) ++ adds.iterator.map(_.json),
      overwrite = false,
      hadoopConf
    )
  }

  def progress(message: String): Unit = System.err.println(s"[bench] $message")

  def writeCsv(file: File, header: Seq[String], rows: Seq[Seq[Any]]): Unit = {
    file.getParentFile.mkdirs()
    val out = new PrintWriter(file)
    try {
      out.println(header.mkString(","))
      rows.foreach(r => out.println(r.mkString(",")))
    } finally out.close()
    progress(s"wrote $file")
  }
}
