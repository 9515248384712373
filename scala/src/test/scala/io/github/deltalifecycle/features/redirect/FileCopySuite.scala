package io.github.deltalifecycle.features.redirect

import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.Files

import org.apache.commons.io.FileUtils
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{ChecksumException, FileSystem, Path}
import org.scalatest.funsuite.AnyFunSuite

/** Hadoop's local file system, with its `.crc` sidecars; no Spark. */
class FileCopySuite extends AnyFunSuite {

  private val fs = FileSystem.getLocal(new Configuration())

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
      assert(FileCopy.copy(fs, from, fs, to))
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
      assert(FileCopy.copy(fs, from, fs, to))
      assert(read(to) === "new")

      val gone = new Path(dir.toURI.toString, "gone.json")
      assert(!FileCopy.copy(fs, gone, fs, new Path(dir.toURI.toString, "never.json")))
      assert(!fs.exists(new Path(dir.toURI.toString, "never.json")))
    }
  }

  test("through the raw local file system no sidecar is written") {
    withDir { dir =>
      val raw = fs.getRawFileSystem
      val from = new Path(dir.toURI.toString, "from.bin")
      val to = new Path(dir.toURI.toString, "to.bin")
      write(from, "abc")
      assert(FileCopy.copy(fs, from, raw, to))
      assert(read(to) === "abc")
      assert(!fs.exists(fs.getChecksumFile(to)))
    }
  }
}
