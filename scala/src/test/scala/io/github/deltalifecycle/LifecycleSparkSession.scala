package io.github.deltalifecycle

import java.io.File
import java.nio.file.{Files, Path => JPath}

import org.apache.commons.io.FileUtils
import org.apache.spark.sql.SparkSession
import org.scalatest.{BeforeAndAfterAll, Suite}

/** One local SparkSession per suite, with Delta's extension and this project's, in that order. */
trait LifecycleSparkSession extends BeforeAndAfterAll { self: Suite =>

  protected lazy val scratch: JPath = Files.createTempDirectory("delta-lifecycle-test")

  protected lazy val spark: SparkSession = LifecycleSparkSession.builder(getClass.getSimpleName)
    .config("spark.sql.sources.parallelPartitionDiscovery.parallelism", "2")
    .config("spark.sql.warehouse.dir", scratch.resolve("warehouse").toString)
    .getOrCreate()

  protected def newTableDir(name: String): String = scratch.resolve(name).toString

  /**
   * The shared test tables are read-only; tests work on a copy in the scratch directory. Hadoop's
   * `.<file>.crc` sidecars are left out: they are an artifact of the local file system, some tables
   * carry stale ones, and delta-spark's Spark-based readers (not the log core) would fail on those
   * before comparing anything.
   */
  protected def copyOfSharedTable(group: String, name: String): String = {
    val target = scratch.resolve(s"$group-$name").toFile
    if (!target.exists()) {
      val hadoopSidecar: java.io.FileFilter =
        f => !(f.getName.startsWith(".") && f.getName.endsWith(".crc"))
      FileUtils.copyDirectory(SharedTestData.table(group, name), target, hadoopSidecar)
    }
    target.getCanonicalPath
  }

  override protected def afterAll(): Unit = {
    try spark.stop()
    finally {
      FileUtils.deleteQuietly(scratch.toFile)
      super.afterAll()
    }
  }
}

object LifecycleSparkSession {

  /** A small local session with Delta's extension and this project's, in that order. */
  def builder(appName: String): SparkSession.Builder = SparkSession.builder()
    .master("local[2]")
    .appName(appName)
    .config("spark.ui.enabled", "false")
    .config("spark.sql.shuffle.partitions", "2")
    .config("spark.databricks.delta.snapshotPartitions", "2")
    .config(
      "spark.sql.extensions",
      "io.delta.sql.DeltaSparkSessionExtension," +
        "io.github.deltalifecycle.sql.DeltaLifecycleSparkSessionExtension"
    )
    .config("spark.sql.catalog.spark_catalog", "io.github.deltalifecycle.sql.LifecycleCatalog")
}

object SharedTestData {

  /**
   * tests/data of the checkout (tests run with the repository root as cwd; its README says where
   * the tables come from), or DELTA_LIFECYCLE_TESTDATA.
   */
  val root: File = new File(sys.env.getOrElse("DELTA_LIFECYCLE_TESTDATA", "tests/data"))
  require(root.isDirectory, s"$root is missing: the tables of tests/data/README.md")

  def table(group: String, name: String): File = new File(new File(root, group), name)

  def tables(group: String): Seq[String] =
    Option(new File(
      root,
      group
    ).listFiles()).toSeq.flatten.filter(_.isDirectory).map(_.getName).sorted
}
