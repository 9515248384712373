package io.github.deltalifecycle.bench

import java.io.{File, PrintWriter}

import io.github.deltalifecycle.LifecycleSparkSession
import org.apache.spark.sql.SparkSession

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
