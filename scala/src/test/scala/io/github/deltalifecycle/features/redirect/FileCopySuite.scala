package io.github.deltalifecycle.features.redirect

import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.Files

import org.apache.commons.io.FileUtils
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{ChecksumException, FileSystem, Path}
import org.scalatest.funsuite.AnyFunSuite

/** Hadoop's local file system, with its `.crc` sidecars; no Spark. */
class FileCopySuite extends AnyFunSuite {

  private val conf = new Configuration()
  private val fs = FileSystem.getLocal(conf)
  private val local = CopyRoute(CopyMode.Local, None)

  private def copy(fromFs: FileSystem, from: Path, toFs: FileSystem, to: Path) =
    FileCopy.copy(local, fromFs, from, toFs, to, -1L, S3Copy.Limits.Default)

  private def withDir(body: java.io.File => Unit): Unit = {
    val dir = Files.createTempDirectory("file-copy").toFile
    try body(dir)
    finally FileUtils.deleteQuietly(dir)
  }

  private def write(p: Path, text: String): Unit = {
    val out = fs.create(p, true)
    try out.write(text.getBytes(UTF_8))
    finally out.close()
  }

  private def read(p: Path): String = {
    val in = fs.open(p)
    try new String(in.readAllBytes(), UTF_8)
    finally in.close()
  }

  test("a local copy carries the checksum sidecar, so the target is verified as the source is") {
    withDir { dir =>
      val from = new Path(dir.toURI.toString, "a/part-0.parquet")
      val to = new Path(dir.toURI.toString, "b/nested/part-0.parquet")
      write(from, "the bytes " * 1000)
      assert(copy(fs, from, fs, to) === FileCopy.Copied(10000))
      assert(read(to) === read(from))
      assert(fs.exists(fs.getChecksumFile(to)))

      // The carried sidecar belongs to these bytes: a changed byte fails the read.
      val raw = fs.pathToFile(to)
      val bytes = Files.readAllBytes(raw.toPath)
      bytes(3) = 'X'.toByte
      Files.write(raw.toPath, bytes)
      intercept[ChecksumException](read(to))
    }
  }

  test("an old target and its sidecar are replaced; a missing source copies nothing") {
    withDir { dir =>
      val from = new Path(dir.toURI.toString, "from.json")
      val to = new Path(dir.toURI.toString, "to.json")
      write(to, "older and longer content")
      write(from, "new")
      assert(copy(fs, from, fs, to) === FileCopy.Copied(3))
      assert(read(to) === "new")

      val gone = new Path(dir.toURI.toString, "gone.json")
      assert(copy(fs, gone, fs, new Path(dir.toURI.toString, "never.json")) ===
        FileCopy.SourceMissing)
      assert(!fs.exists(new Path(dir.toURI.toString, "never.json")))
    }
  }

  test("through the raw local file system no sidecar is written") {
    withDir { dir =>
      val raw = fs.getRawFileSystem
      val from = new Path(dir.toURI.toString, "from.bin")
      val to = new Path(dir.toURI.toString, "to.bin")
      write(from, "abc")
      assert(copy(fs, from, raw, to) === FileCopy.Copied(3))
      assert(read(to) === "abc")
      assert(!fs.exists(fs.getChecksumFile(to)))
    }
  }

  test("the route between local paths is the kernel's; to another file system, streams") {
    withDir { dir =>
      val root = new Path(dir.toURI.toString)
      val probe = new Path(root, "a/_delta_log/00000000000000000000.json")
      assert(FileCopy.route(conf, conf, new Path(root, "a"), new Path(root, "b"), probe) === local)
      val other = new Configuration()
      other.set("fs.other.impl", classOf[OtherFileSystem].getName)
      other.setBoolean("fs.other.impl.disable.cache", true)
      val streams = FileCopy.route(other, other, new Path(root, "a"), new Path("other:/b"), probe)
      assert(streams.mode === CopyMode.Streams)
      assert(streams.reason.exists(_.contains("from file:// to other://")), streams)
    }
  }

  test("a multipart copy's ranges cover the object in parts of the given size") {
    assert(S3CopyParts.ranges(10, 4) === Seq((1, 0L, 3L), (2, 4L, 7L), (3, 8L, 9L)))
    assert(S3CopyParts.ranges(8, 4) === Seq((1, 0L, 3L), (2, 4L, 7L)))
    assert(S3CopyParts.ranges(3, 4) === Seq((1, 0L, 2L)))
    val big = S3CopyParts.ranges(12L << 30, 5L << 30)
    assert(big.map(_._1) === Seq(1, 2, 3))
    assert(big.last === ((3, 10L << 30, (12L << 30) - 1)))
  }
}

/** A file system that is not Hadoop's local one (it keeps its files in the local one). */
class OtherFileSystem extends org.apache.hadoop.fs.FilterFileSystem(
      new org.apache.hadoop.fs.RawLocalFileSystem()
    ) {
  override def getScheme: String = "other"
}
