package io.github.deltalifecycle.core

import java.io.File
import java.nio.file.Files

import io.github.deltalifecycle.LifecycleSparkSession
import org.scalatest.funsuite.AnyFunSuite

/** The version checksums delta-spark writes agree with the core's reconstructed state. */
class ChecksumSuite extends AnyFunSuite with LifecycleSparkSession {

  test("file count, size and protocol match every <v>.crc delta-spark wrote") {
    val path = newTableDir("with-checksums")
    spark.range(20).repartition(3).write.format("delta").save(path)
    spark.range(20, 30).write.format("delta").mode("append").save(path)
    spark.sql(s"DELETE FROM delta.`$path` WHERE id < 5")
    spark.sql(s"ALTER TABLE delta.`$path` SET TBLPROPERTIES ('delta.appendOnly' = 'false')")

    val log = TableLog.forPath(spark.sessionState.newHadoopConf(), path)
    val listing = log.listing()
    assert(listing.checksums.nonEmpty, "delta-spark is expected to write version checksums")
    for (v <- listing.checksums.keys.toSeq.sorted) {
      val crc = log.checksumAt(v, listing).getOrElse(fail(s"checksum of version $v does not parse"))
      val snapshot = log.snapshotAt(v, listing)
      withClue(s"version $v: ") {
        assert(snapshot.activeFiles.size.toLong === crc.numFiles)
        assert(snapshot.sizeInBytes === crc.tableSizeBytes)
        assert(snapshot.protocol === crc.protocol)
        assert(snapshot.metadata.id === crc.metadata.id)
      }
    }
  }

  test("a damaged checksum is treated as absent, never as an error") {
    val path = newTableDir("damaged-checksum")
    spark.range(3).write.format("delta").save(path)
    val log = TableLog.forPath(spark.sessionState.newHadoopConf(), path)
    val crc = new File(path, f"_delta_log/${0}%020d.crc")
    assume(crc.exists(), "delta-spark wrote no checksum")
    Files.write(crc.toPath, "{ truncated".getBytes)
    new File(crc.getParentFile, s".${crc.getName}.crc").delete()
    assert(log.checksumAt(0, log.listing()).isEmpty)
    assert(log.latestSnapshot().activeFiles.nonEmpty)
  }
}
