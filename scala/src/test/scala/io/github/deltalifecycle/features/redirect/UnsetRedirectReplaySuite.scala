package io.github.deltalifecycle.features.redirect

import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.AtomicInteger

import scala.jdk.CollectionConverters._

import io.github.deltalifecycle.LifecycleSparkSession
import io.github.deltalifecycle.sql.routing.RedirectSession
import org.apache.hadoop.fs.{FSDataInputStream, FileStatus, Path, RawLocalFileSystem}
import org.apache.spark.sql.delta.DeltaLog
import org.scalatest.funsuite.AnyFunSuite

/**
 * The local file system, counting every open and every directory listing, by path. Registered as
 * `fs.file.impl` (with the cache off) in the Hadoop configuration handed to the procedure under
 * test only, so delta-spark's own reads elsewhere in the session are not counted.
 */
class CountingLocalFileSystem extends RawLocalFileSystem {
  override def open(f: Path, bufferSize: Int): FSDataInputStream = {
    CountingLocalFileSystem.count(CountingLocalFileSystem.opens, f)
    super.open(f, bufferSize)
  }

  override def listStatus(f: Path): Array[FileStatus] = {
    CountingLocalFileSystem.count(CountingLocalFileSystem.listings, f)
    super.listStatus(f)
  }
}

object CountingLocalFileSystem {
  val opens = new ConcurrentHashMap[String, AtomicInteger]()
  val listings = new ConcurrentHashMap[String, AtomicInteger]()

  private def count(counts: ConcurrentHashMap[String, AtomicInteger], f: Path): Unit =
    counts.computeIfAbsent(f.toUri.getPath.stripSuffix("/"), _ => new AtomicInteger())
      .incrementAndGet()

  def reset(): Unit = { opens.clear(); listings.clear() }

  def snapshot(counts: ConcurrentHashMap[String, AtomicInteger]): Map[String, Int] =
    counts.asScala.map { case (k, v) => k -> v.get }.toMap
}

/**
 * UNSET REDIRECT's replay of the destination's commits costs a bounded number of log reads per
 * replayed commit: counted through [[CountingLocalFileSystem]], not timed.
 */
class UnsetRedirectReplaySuite extends AnyFunSuite with LifecycleSparkSession {

  private final case class Cost(commitOpens: Map[String, Int], logListings: Int) {
    def totalOpens: Int = commitOpens.values.sum
    def maxOpens: Int = commitOpens.values.max
  }

  /**
   * A table redirected after one commit, `n` inserts at the destination, then UNSET REDIRECT with
   * the counting file system; the opens of commit files and listings of `_delta_log` it made.
   */
  private def unsetAfter(n: Int): Cost = {
    val src = newTableDir(s"replay-src-$n")
    val dest = newTableDir(s"replay-dest-$n")
    spark.sql(s"CREATE TABLE delta.`$src` (id BIGINT) USING delta")
    spark.sql(s"INSERT INTO delta.`$src` VALUES (0)")
    spark.sql(s"ALTER TABLE delta.`$src` SET REDIRECT TO '$dest'")
    (1 to n).foreach(i => spark.sql(s"INSERT INTO delta.`$src` VALUES ($i)"))

    val conf = spark.sessionState.newHadoopConf()
    conf.set("fs.file.impl", classOf[CountingLocalFileSystem].getName)
    conf.setBoolean("fs.file.impl.disable.cache", true)
    val ctx = RedirectSession.context(spark).copy(storage = StorageAccess.uniform(conf))
    CountingLocalFileSystem.reset()
    new UnsetRedirect(spark, ctx, new Path(src), src).run()
    val opens = CountingLocalFileSystem.snapshot(CountingLocalFileSystem.opens)
    val listings = CountingLocalFileSystem.snapshot(CountingLocalFileSystem.listings)

    DeltaLog.clearCache()
    val ids = spark.read.format("delta").load(src).collect().map(_.getLong(0)).sorted.toSeq
    assert(ids === (0 to n).map(_.toLong))
    Cost(
      opens.filter { case (p, _) => p.contains("/_delta_log/") && p.endsWith(".json") },
      listings.filter(_._1.endsWith("_delta_log")).values.sum
    )
  }

  test("the replay reads no commit more often for more commits, and its cost grows linearly") {
    val small = unsetAfter(8)
    val large = unsetAfter(16)
    // Each step of the procedure reads the logs a fixed number of times. Before the replay
    // carried the state along, every replayed commit re-read every source commit since the last
    // checkpoint, so the newest ones were opened about as often as there were commits to replay.
    assert(large.maxOpens <= small.maxOpens, s"${small.maxOpens} vs ${large.maxOpens}")
    // Twice the commits cost at most twice as much, plus a constant; listings do not grow.
    assert(
      large.totalOpens <= 2 * small.totalOpens + 10,
      s"${small.totalOpens} vs ${large.totalOpens}"
    )
    assert(
      large.logListings <= small.logListings + 2,
      s"${small.logListings} vs ${large.logListings}"
    )
  }

  test("UNSET copies back only the files written at the destination, then checkpoints") {
    val src = newTableDir("copy-back-src")
    val dest = newTableDir("copy-back-dest")
    spark.sql(s"CREATE TABLE delta.`$src` (id BIGINT) USING delta")
    (1 to 3).foreach(i => spark.sql(s"INSERT INTO delta.`$src` VALUES ($i)"))
    spark.sql(s"ALTER TABLE delta.`$src` SET REDIRECT TO '$dest'")
    (4 to 5).foreach(i => spark.sql(s"INSERT INTO delta.`$src` VALUES ($i)"))

    val result = new UnsetRedirect(spark, RedirectSession.context(spark), new Path(src), src).run()
    // The three files the source had before the redirect are its own; only the two inserts
    // written at the destination come back.
    assert(result.filesCopied === 2, result.steps.mkString("\n"))

    DeltaLog.clearCache()
    val log = DeltaLog.forTable(spark, src)
    val snapshot = log.update()
    assert(snapshot.logSegment.checkpointProvider.version === snapshot.version)
    assert(snapshot.logSegment.deltas.isEmpty)
    val ids = spark.read.format("delta").load(src).collect().map(_.getLong(0)).sorted.toSeq
    assert(ids === (1 to 5).map(_.toLong))
  }
}
