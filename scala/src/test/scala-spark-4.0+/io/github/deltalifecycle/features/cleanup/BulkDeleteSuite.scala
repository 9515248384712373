package io.github.deltalifecycle.features.cleanup

import java.io.IOException
import java.util.{Collection => JCollection, List => JList, Map => JMap}
import java.util.concurrent.{ConcurrentHashMap, CopyOnWriteArrayList}

import scala.jdk.CollectionConverters._

import io.github.deltalifecycle.LifecycleSparkSession
import io.github.deltalifecycle.LogTestFiles._
import io.github.deltalifecycle.core.TableLog
import org.apache.hadoop.fs.{BulkDelete, Path, RawLocalFileSystem}
import org.apache.spark.sql.Row
import org.apache.spark.sql.delta.DeltaLog
import org.scalatest.funsuite.AnyFunSuite

/**
 * The local file system with a bulk delete of three files a page, like an object store's; it
 * records each page, reports the files in `failOnce` as not deleted the first time, and never
 * deletes those in `stuck`.
 */
class PagedBulkDeleteFileSystem extends RawLocalFileSystem {
  import PagedBulkDeleteFileSystem._

  override def delete(p: Path, recursive: Boolean): Boolean =
    if (stuck.contains(name(p))) false else super.delete(p, recursive)

  override def createBulkDelete(base: Path): BulkDelete = new BulkDelete {
    override def pageSize(): Int = PageSize
    override def basePath(): Path = base
    override def bulkDelete(paths: JCollection[Path]): JList[JMap.Entry[Path, String]] = {
      val page = paths.asScala.toSeq
      require(page.size <= PageSize, s"a page of ${page.size}")
      pages.add(page.map(name))
      page.flatMap { p =>
        if (failOnce.remove(name(p)) || stuck.contains(name(p)))
          Some(JMap.entry(p, "injected failure"))
        else { rawDelete(p); None }
      }.asJava
    }
    override def close(): Unit = ()
  }

  private def rawDelete(p: Path): Boolean = super.delete(p, false)
}

object PagedBulkDeleteFileSystem {
  val PageSize = 3
  val pages = new CopyOnWriteArrayList[Seq[String]]()
  val failOnce: java.util.Set[String] = ConcurrentHashMap.newKeySet[String]()
  val stuck: java.util.Set[String] = ConcurrentHashMap.newKeySet[String]()

  def name(p: Path): String = p.getName

  def reset(): Unit = { pages.clear(); failOnce.clear(); stuck.clear() }
}

/** CLEAN LOG through a file system with a bulk delete: pages, their order, and failures. */
class BulkDeleteSuite extends AnyFunSuite with LifecycleSparkSession {
  import PagedBulkDeleteFileSystem._

  private def bulkLog(path: String): TableLog = {
    val conf = spark.sessionState.newHadoopConf()
    conf.set("fs.file.impl", classOf[PagedBulkDeleteFileSystem].getName)
    conf.setBoolean("fs.file.impl.disable.cache", true)
    TableLog.forPath(conf, path)
  }

  private def agedTable(dir: String): String = {
    val path = newTableDir(dir)
    spark.sql(
      s"CREATE TABLE delta.`$path` (id BIGINT) USING delta TBLPROPERTIES " +
        "('delta.checkpointInterval' = '5')"
    )
    (1 to 12).foreach(i => spark.sql(s"INSERT INTO delta.`$path` VALUES ($i)"))
    spark.sql(s"ALTER TABLE delta.`$path` COMPACT LOG FROM VERSION 1 TO VERSION 3")
    age(path, through = 10, hours = 48)
    path
  }

  private def rows(path: String): Set[Row] = {
    DeltaLog.clearCache()
    spark.read.format("delta").load(path).collect().toSet
  }

  private val day = 24L * 3600 * 1000

  test("expired files go in pages of the bulk delete's size, one kind after another") {
    val path = agedTable("bulk")
    val latest = rows(path)
    reset()
    val log = bulkLog(path)
    val plan = LogCleanup.plan(log, Some(day), System.currentTimeMillis())
    val kindOf = plan.toDelete.map(e => e.path.getName -> e.kind).toMap
    // A file the store fails to delete once is deleted again on its own.
    failOnce.add(plan.toDelete.find(_.kind == "commit").get.path.getName)
    LogCleanup.execute(log, plan)

    val recorded = pages.asScala.toSeq
    assert(recorded.forall(_.size <= PageSize))
    assert(recorded.flatten.sorted === plan.toDelete.map(_.path.getName).sorted)
    // No page mixes kinds, and the kinds come in the plan's order: commits before checkpoints.
    assert(recorded.forall(p => p.map(kindOf).distinct.size == 1))
    assert(recorded.map(p => kindOf(p.head)).distinct ===
      Seq("commit", "checksum", "compaction", "checkpoint"))
    assert(plan.toDelete.forall(e => !new java.io.File(e.path.toUri).exists()))
    assert(rows(path) === latest)
  }

  test("a file the bulk delete cannot delete fails the cleanup before the next kind starts") {
    val path = agedTable("bulk-stuck")
    reset()
    val log = bulkLog(path)
    val plan = LogCleanup.plan(log, Some(day), System.currentTimeMillis())
    val commit = plan.toDelete.find(_.kind == "commit").get
    stuck.add(commit.path.getName)
    val e = intercept[IOException](LogCleanup.execute(log, plan))
    assert(e.getMessage.contains(commit.path.getName) && e.getMessage.contains("injected"))
    assert(new java.io.File(commit.path.toUri).exists())
    assert(plan.toDelete.filter(_.kind == "checkpoint").forall(c =>
      new java.io.File(c.path.toUri).exists()
    ))
    // Once the store lets go of it, a re-run finishes the job.
    reset()
    val again = LogCleanup.plan(log, Some(day), System.currentTimeMillis())
    LogCleanup.execute(log, again)
    assert(plan.toDelete.forall(e => !new java.io.File(e.path.toUri).exists()))
  }

  test("without a bulk delete, single deletes run in parallel and the result is the same") {
    val path = agedTable("parallel")
    val latest = rows(path)
    val log = TableLog.forPath(spark.sessionState.newHadoopConf(), path)
    val plan = LogCleanup.plan(log, Some(day), System.currentTimeMillis())
    assert(LogCleanup.execute(log, plan, threads = 3) === plan.toDelete)
    assert(plan.toDelete.forall(e => !new java.io.File(e.path.toUri).exists()))
    assert(rows(path) === latest)
    // A re-run deletes nothing more.
    assert(LogCleanup.plan(log, Some(day), System.currentTimeMillis()).toDelete.isEmpty)
  }
}
