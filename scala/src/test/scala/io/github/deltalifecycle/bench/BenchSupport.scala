package io.github.deltalifecycle.bench

import java.io.{File, PrintWriter}

import org.apache.spark.sql.SparkSession

/** Shared plumbing of the benchmarks: a session, timing, and CSV output under bench/results. */
object BenchSupport {
  def session(name: String): SparkSession = SparkSession.builder()
    .master("local[2]")
    .appName(name)
    .config("spark.ui.enabled", "false")
    .config("spark.sql.shuffle.partitions", "2")
    .config("spark.databricks.delta.snapshotPartitions", "2")
    .config("spark.sql.extensions",
      "io.delta.sql.DeltaSparkSessionExtension,io.github.deltalifecycle.sql.DeltaLifecycleSparkSessionExtension")
    .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog")
    .getOrCreate()

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
