package io.github.deltalifecycle.sql.streaming

import java.util.concurrent.{CountDownLatch, TimeUnit}

import io.github.deltalifecycle.LifecycleSparkSession
import io.github.deltalifecycle.features.redirect.{
  RedirectMode,
  StreamPosition,
  VersionCorrespondence
}
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.{DataFrame, Row}
import org.apache.spark.sql.delta.{DeltaLog, DeltaOperations}
import org.apache.spark.sql.delta.sources.DeltaSourceOffset
import org.apache.spark.sql.functions.{col, udf}
import org.apache.spark.sql.streaming.{StreamingQuery, StreamingQueryException, Trigger}
import org.scalatest.funsuite.AnyFunSuite

/**
 * Streaming queries across SET and UNSET REDIRECT, with the moments that matter held still: a
 * micro-batch blocked while the redirect of its sink commits, a query stopped on one side of a
 * redirect and restarted on the other. The same with queries that keep running on a trigger while
 * the moves happen: tests/test_redirect_streaming*.py.
 */
class StreamingRedirectSuite extends AnyFunSuite with LifecycleSparkSession {
  import StreamingRedirectSuite._

  private def sql(text: String): Seq[Row] = spark.sql(text).collect().toSeq
  private def ids(df: DataFrame): Seq[Long] = df.collect().map(_.getLong(0)).toSeq.sorted
  private def idsAt(path: String): Seq[Long] = {
    DeltaLog.clearCache(); ids(spark.sql(s"SELECT id FROM delta.`$path`"))
  }

  private def table(name: String, rows: Range): String = {
    val path = newTableDir(name)
    sql(s"CREATE TABLE delta.`$path` (id BIGINT) USING delta")
    if (rows.nonEmpty) insert(path, rows)
    path
  }

  private def insert(path: String, rows: Range): Unit =
    sql(s"INSERT INTO delta.`$path` SELECT id FROM range(${rows.start}, ${rows.end})")

  private def latest(path: String): Long =
    io.github.deltalifecycle.core.TableLog.forPath(spark.sessionState.newHadoopConf(), path)
      .listing().latestVersion

  private def positions(
      source: String,
      from: String,
      to: String
  ): StreamPosition => StreamPosition = {
    val c = VersionCorrespondence.between(
      spark.sessionState.newHadoopConf(),
      new Path(source),
      new Path(from),
      new Path(to),
      (a, b) => a.toString.stripPrefix("file:") == b.toString.stripPrefix("file:")
    )
    p => c.translate(p, DeltaSourceOffset.BASE_INDEX)
  }

  test("a stream position maps between a redirect's two locations, both ways") {
    val src = table("positions-src", 0 until 2) // versions 0 (create) and 1
    insert(src, 2 until 4) // 2
    val dest = newTableDir("positions-dest")
    sql(s"ALTER TABLE delta.`$src` SET REDIRECT TO '$dest'") // 3 ENABLE, 4 READY
    assert(latest(src) === 4)
    val forward = positions(src, src, dest)
    val base = DeltaSourceOffset.BASE_INDEX
    // Shared versions are the same; the redirect's own commits hold no change of the destination's.
    assert(forward(StreamPosition(2, 0, initialSnapshot = false)) === StreamPosition(2, 0, false))
    assert(forward(StreamPosition(3, base, false)) === StreamPosition(3, base, false))
    assert(forward(StreamPosition(4, 7, false)) === StreamPosition(3, base, false))
    assert(forward(StreamPosition(4, 1, initialSnapshot = true)) === StreamPosition(2, 1, true))

    insert(src, 4 until 6) // routed: destination version 3
    insert(src, 6 until 8) // destination version 4
    sql(s"ALTER TABLE delta.`$src` UNSET REDIRECT")
    // Source: 5 DROP, 6 and 7 replay destination 3 and 4, 8 NORMAL; destination 5 is its marker.
    val back = positions(src, dest, src)
    assert(back(StreamPosition(2, 0, false)) === StreamPosition(2, 0, false))
    assert(back(StreamPosition(3, 0, false)) === StreamPosition(6, 0, false))
    assert(back(StreamPosition(4, base, false)) === StreamPosition(7, base, false))
    assert(back(StreamPosition(5, base, false)) === StreamPosition(8, base, false))
    assert(back(StreamPosition(4, 0, initialSnapshot = true)) === StreamPosition(7, 0, true))
    assert(back(StreamPosition(6, 0, initialSnapshot = true)) === StreamPosition(7, 0, true))
  }

  test(
    "a query stopped and restarted from its checkpoint reads each row once across SET and UNSET"
  ) {
    val src = table("restart-src", 0 until 10)
    val out = newTableDir("restart-out")
    val checkpoint = newTableDir("restart-checkpoint")
    def runOnce(): Unit = {
      val q = spark.readStream.format("delta").load(src).writeStream.format("delta")
        .option("checkpointLocation", checkpoint).trigger(Trigger.AvailableNow()).start(out)
      q.awaitTermination()
    }
    runOnce()
    sql(s"ALTER TABLE delta.`$src` SET REDIRECT TO '${newTableDir("restart-dest")}'")
    insert(src, 10 until 20) // at the destination
    runOnce()
    insert(src, 20 until 30)
    sql(s"ALTER TABLE delta.`$src` UNSET REDIRECT")
    insert(src, 30 until 40) // at the source again
    runOnce()
    assert(idsAt(out) === (0 until 40))
    // The last offset names the location whose versions it counts; delta-spark ignores that field.
    val offsets = new java.io.File(checkpoint, "offsets").listFiles().map(_.getName)
      .filter(_.forall(_.isDigit)).maxBy(_.toLong)
    val text = scala.io.Source.fromFile(new java.io.File(s"$checkpoint/offsets/$offsets"))
    try assert(text.mkString.contains(s""""${LocatedOffset.LocationField}""""))
    finally text.close()
  }

  test("a batch whose sink is redirected while it is written fails typed and is written once") {
    val src = table("race-src", 0 until 5)
    val sink = table("race-sink", 0 until 0)
    val checkpoint = newTableDir("race-checkpoint")
    val held = udf((id: Long) => { Hold.maybeWait(); id })
    def start(): StreamingQuery =
      spark.readStream.format("delta").load(src).select(held(col("id")).as("id"))
        .writeStream.format("delta").option("checkpointLocation", checkpoint)
        .trigger(Trigger.ProcessingTime("200 milliseconds")).start(sink)
    val q = start()
    try {
      eventually(idsAt(sink) == (0 until 5))
      Hold.arm()
      insert(src, 5 until 10)
      assert(Hold.entered.await(60, TimeUnit.SECONDS), "the next batch never started")
      sql(s"ALTER TABLE delta.`$sink` SET REDIRECT TO '${newTableDir("race-dest")}'")
      Hold.release()
      val e = intercept[StreamingQueryException](q.awaitTermination(120000))
      assert(e.getMessage.contains("DELTA_LIFECYCLE_STREAM_REDIRECT_CHANGED"), e.getMessage)
    } finally {
      Hold.release()
      q.stop()
    }
    val restarted = start()
    try {
      restarted.processAllAvailable()
      assert(ids(spark.read.format("delta").load(sink)) === (0 until 10))
    } finally restarted.stop()
  }

  test(
    "a foreachBatch write that raced a redirect's state commit fails typed, then is written once"
  ) {
    val src = table("fb-src", 0 until 5)
    val sink = table("fb-sink", 0 until 0)
    val checkpoint = newTableDir("fb-checkpoint")
    val dest = newTableDir("fb-dest")
    val raceOnce = new java.util.concurrent.atomic.AtomicBoolean(true)
    // The batch's own transaction reads the sink, the redirect commits, then the batch commits:
    // delta-spark's conflict check meets the redirect feature the winning commit added.
    val write: (DataFrame, Long) => Unit = (batch, batchId) => {
      if (batchId == 1 && raceOnce.getAndSet(false)) {
        val txn = DeltaLog.forTable(batch.sparkSession, sink).startTransaction()
        batch.sparkSession.sql(s"ALTER TABLE delta.`$sink` SET REDIRECT TO '$dest'")
        txn.commit(Nil, DeltaOperations.ManualUpdate)
      }
      batch.write.format("delta").mode("append").option("txnAppId", "fb")
        .option("txnVersion", batchId).save(sink)
    }
    def start(): StreamingQuery =
      spark.readStream.format("delta").load(src).writeStream
        .option("checkpointLocation", checkpoint).foreachBatch(write).start()
    val q = start()
    try {
      q.processAllAvailable()
      insert(src, 5 until 10)
      val e = intercept[StreamingQueryException](q.awaitTermination(120000))
      assert(e.getMessage.contains("DELTA_LIFECYCLE_STREAM_BATCH_RACED_REDIRECT"), e.getMessage)
      assert(e.getMessage.contains("Batch 1 "), e.getMessage)
      assert(RedirectMode.featureNames.exists(e.getMessage.contains), e.getMessage)
    } finally q.stop()
    val restarted = start()
    try {
      restarted.processAllAvailable()
      assert(idsAt(sink) === (0 until 10))
      assert(idsAt(dest) === (0 until 10))
    } finally restarted.stop()
  }

  test("a batch waits while its sink's redirect is IN-PROGRESS, then fails typed at the timeout") {
    val src = table("wait-src", 0 until 3)
    val sink = table("wait-sink", 0 until 0)
    val dest = newTableDir("wait-dest")
    sql(
      s"ALTER TABLE delta.`$sink` SET TBLPROPERTIES ('delta.redirectReaderWriter' = " +
        s"""'{"Type":"Object Store","State":"ENABLE-REDIRECT-IN-PROGRESS",""" +
        s""""Spec":{"Location":"$dest"}}')"""
    )
    spark.conf.set(RoutedDeltaSink.WaitTimeoutKey, "2s")
    try {
      val q = spark.readStream.format("delta").load(src).writeStream.format("delta")
        .option("checkpointLocation", newTableDir("wait-checkpoint"))
        .trigger(Trigger.AvailableNow()).start(sink)
      val e = intercept[StreamingQueryException](q.awaitTermination(120000))
      assert(e.getMessage.contains("DELTA_LIFECYCLE_STREAM_REDIRECT_WAIT"), e.getMessage)
      assert(e.getMessage.contains("ENABLE-REDIRECT-IN-PROGRESS"), e.getMessage)
    } finally spark.conf.unset(RoutedDeltaSink.WaitTimeoutKey)
  }

  private def eventually(condition: => Boolean): Unit = {
    val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120)
    while (!condition) {
      assert(System.nanoTime() < deadline, "timed out")
      Thread.sleep(200)
    }
  }
}

object StreamingRedirectSuite {

  /** Holds the tasks of a micro-batch (local mode: one JVM) until the test releases them. */
  object Hold {
    @volatile private var armed = false
    @volatile var entered = new CountDownLatch(1)
    @volatile private var gate = new CountDownLatch(1)

    def arm(): Unit = {
      entered = new CountDownLatch(1); gate = new CountDownLatch(1); armed = true
    }
    private val holding = new java.util.concurrent.atomic.AtomicBoolean(false)

    def release(): Unit = { armed = false; gate.countDown() }

    /**
     * Holds one task only: the statement the test runs meanwhile needs the other slot of
     * `local[2]`, and would otherwise wait for the hold's timeout.
     */
    def maybeWait(): Unit = if (armed && holding.compareAndSet(false, true)) {
      try { entered.countDown(); gate.await(120, TimeUnit.SECONDS) }
      finally holding.set(false)
    }
  }
}
